"""Every entry point that reads a session line or a map cache line, against the shared hostile line table (issue 25).

A hostile line sits third in an otherwise good session file. A ``refused`` case must stop every loader with an
error naming ``file:3`` (never another exception type); a ``loads`` case must load, and the next turn must send a
history the strict fake's rules accept; an ``unsendable`` case must load and fail to read its attachment with a clear
error, never sending other bytes. The property at the end mixes good and damaged lines at random.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brute_nb import Message, agent, read_frame
from brute_nb.attachments import AttachmentError
from brute_nb.errors import SessionLogError
from brute_nb.map.cache import MapCache, MapCacheError
from brute_nb.middleware import SessionLog
from brute_nb.notebook.paths import list_sessions
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.sendable import sendable
from brute_nb.sessions.file import SessionFile, SessionFileWarning, read_session
from brute_nb.testing import rules
from tests.security.hostile import LINES, Case
from tests.security.hostile.lines import PLANTED, Line

GOOD = [json.dumps({"role": "user", "content": "hello"}).encode(),
        json.dumps({"role": "assistant", "content": "hi, how can I help?"}).encode()]
AFTER = json.dumps({"role": "user", "content": "and then?"}).encode()
PROVIDERS = {"openai_chat": OpenAIChat("gpt-fake"), "anthropic": AnthropicMessages("claude-fake")}


def sent_problems(messages: list[Any]) -> list[str]:
    """What the strict fake would refuse in the request each provider builds from ``messages``."""
    found = []
    for api, provider in PROVIDERS.items():
        body = provider.request({"messages": messages})
        found += [f"{api}: {p}" for p in rules.request_problems(api, body)]
    return found


def checking_model(seen: list[list[Any]]) -> Callable[[dict[str, Any]], None]:
    """A model handler that records what it was sent and fails the turn if the strict fake would refuse it."""
    def model(env: dict[str, Any]) -> None:
        messages = list(env["messages"])
        seen.append(messages)
        found = sent_problems(messages)
        if found:
            raise AssertionError("the strict fake would refuse this request:\n  " + "\n  ".join(found))
        env["messages"].append(Message("assistant", "fine"))

    return model


def session(tmp_path: Path, line: Line) -> Path:
    path = tmp_path / "nb.brute" / "chat.jsonl"
    (path.parent / "attachments").mkdir(parents=True)
    for name, data in (line.plant or {}).items():
        (path.parent / "attachments" / name).write_bytes(data)
    path.write_bytes(b"\n".join([*GOOD, line.raw, AFTER]) + b"\n")
    return path


def _locked_load(path: Path) -> list[Any]:
    file = SessionFile(path, root=path.parent.parent)
    file.resolve()
    assert file.lock.try_acquire()
    try:
        return file.load()[0]
    finally:
        file.lock.release()


def _turn(path: Path) -> list[Any]:
    seen: list[list[Any]] = []
    agent().use(SessionLog, path=path, root=path.parent.parent).run(checking_model(seen)).start("next")
    return seen[-1]


LOADERS: dict[str, Callable[[Path], Any]] = {
    "read_session": read_session,
    "locked-load": _locked_load,
    "read_frame": read_frame,
    "turn": _turn,
}

SESSION_CASES = [c for c in LINES if c.tags & {"refused", "loads", "unsendable"}]


@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize("case", SESSION_CASES, ids=[c.id for c in SESSION_CASES])
def test_a_session_loader_holds_against_a_hostile_line(tmp_path: Path, loader: str, case: Case) -> None:
    path = session(tmp_path, case.data)
    if "refused" in case.tags:
        with pytest.raises(SessionLogError) as error:
            LOADERS[loader](path)
        assert str(error.value).startswith(f"{path}:3: "), case.expect
        return
    if "unsendable" in case.tags and loader == "turn":
        return  # the turn refuses to send it: test_a_turn_never_sends_bytes_that_lie_about_their_hash
    result = LOADERS[loader](path)
    if "unsendable" in case.tags and loader != "read_frame":
        messages = list(result)
        items = [a for m in messages for a in getattr(m, "attachments", ())]
        assert items, case.expect
        with pytest.raises(AttachmentError, match=items[0].sha256[:12]):
            items[0].read_bytes()
    if "loads" in case.tags and loader in ("read_session", "locked-load"):
        assert not sent_problems([*sendable(list(result))[0], Message("user", "next")]), case.expect


@pytest.mark.parametrize("case", [c for c in SESSION_CASES if "unsendable" in c.tags], ids=lambda c: c.id)
def test_a_turn_never_sends_bytes_that_lie_about_their_hash(tmp_path: Path, case: Case) -> None:
    path = session(tmp_path, case.data)
    with pytest.raises(AttachmentError) as error:
        _turn(path)
    assert "sha256" in str(error.value) or "cannot read" in str(error.value), case.expect
    assert PLANTED.decode("latin-1") not in str(error.value)


@pytest.mark.parametrize("case", LINES, ids=[c.id for c in LINES])
def test_listing_sessions_survives_any_line(tmp_path: Path, case: Case) -> None:
    path = session(tmp_path, case.data)
    table = list_sessions(path.parent)
    assert table["name"].tolist() == ["chat"]
    assert table["messages"].tolist() == [4]


MAP_CASES = [c for c in LINES if "map" in c.tags]


@pytest.mark.parametrize("case", MAP_CASES, ids=[c.id for c in MAP_CASES])
def test_a_map_cache_names_the_line_of_a_bad_record(tmp_path: Path, case: Case) -> None:
    good = json.dumps({"key": "a", "reply": "x", "input_tokens": 3, "output_tokens": 1, "cost": 0.5,
                       "session": "a.jsonl"}).encode()
    path = tmp_path / "nb.brute" / "map" / "run.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join([good, case.data.raw, good]) + b"\n")
    with pytest.raises(MapCacheError) as error:
        MapCache(path, root=tmp_path)
    assert str(error.value).startswith(f"{path}:2: "), case.expect


# --- the property: any mix of good and damaged lines ------------------------------------------------------------

REFUSED = [c.data.raw for c in LINES if "refused" in c.tags and len(c.data.raw) < 10_000]
LOADABLE = [c.data.raw for c in LINES if "loads" in c.tags]


@st.composite
def conversations(draw: st.DrawFn) -> list[bytes]:
    """Good lines of a conversation with tool calls, as ``Message.to_json`` writes them."""
    lines: list[bytes] = []
    for turn in range(draw(st.integers(0, 4))):
        lines.append(Message("user", f"question {turn}").to_json().encode())
        ids = [f"t{turn}c{i}" for i in range(draw(st.integers(0, 2)))]
        if ids:
            calls = [{"id": i, "name": "read", "arguments": {"file_path": "a.txt"}} for i in ids]
            lines.append(Message("assistant", "", tool_calls=calls).to_json().encode())
            lines += [Message("tool", "ok", tool_call_id=i).to_json().encode() for i in ids]
        lines.append(Message("assistant", f"answer {turn}").to_json().encode())
    return lines


def damaged(good: list[bytes]) -> st.SearchStrategy[bytes]:
    cut = st.sampled_from(good).flatmap(lambda b: st.integers(1, max(1, len(b) - 1)).map(lambda n: b[:n])) \
        if good else st.just(b"{")
    return st.one_of(st.sampled_from(REFUSED), st.sampled_from(LOADABLE), cut, st.binary(min_size=1, max_size=40),
                     st.dictionaries(st.sampled_from(["role", "content", "tool_calls", "tool_call_id", "meta"]),
                                     st.one_of(st.none(), st.integers(), st.text(max_size=5),
                                               st.lists(st.integers(), max_size=2))).map(
                         lambda d: json.dumps(d).encode()))


@st.composite
def session_files(draw: st.DrawFn) -> list[bytes]:
    lines = draw(conversations())
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), draw(damaged(lines)))
    return lines


@settings(max_examples=max(200, settings.default.max_examples), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=session_files(), ending=st.sampled_from([b"\n", b""]))
def test_any_damaged_session_loads_with_a_file_line_error_or_sends_a_valid_history(tmp_path: Path,
                                                                                   lines: list[bytes],
                                                                                   ending: bytes) -> None:
    """Without a final newline, the last line may be torn: set aside with a warning when it is not JSON."""
    path = tmp_path / "prop" / "chat.jsonl"
    path.parent.mkdir(exist_ok=True)
    data = b"\n".join(lines) + ending
    path.write_bytes(data)
    written = data.split(b"\n")  # as the file holds them (a damaged line may hold a newline)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SessionFileWarning)
            messages = read_session(path)
    except SessionLogError as exc:
        found = re.match(rf"{re.escape(str(path))}:(\d+): \S", str(exc))
        assert found, f"not a file:line error: {exc}"
        lineno = int(found.group(1))
        bad = written[lineno - 1]
        assert bad.strip() and not _is_message(bad), f"line {lineno} is a good line, but it was named: {exc}"
        assert all(_is_message(x) or not x.strip() for x in written[: lineno - 1]), "an earlier bad line was passed"
        return
    assert not sent_problems([*sendable(messages)[0], Message("user", "next")])


def _is_message(raw: bytes) -> bool:
    """Whether a line is a message as a session file holds one: UTF-8 text (no byte-order mark), a JSON object."""
    try:
        Message.from_dict(json.loads(raw.decode("utf-8")))
    except (ValueError, TypeError, RecursionError):
        return False
    return True
