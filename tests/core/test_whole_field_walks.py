"""The walks a kernel's first turn makes over a whole session, done by whole fields, answer what the message-by-
message walks answer: ``sendable.valid`` (refusals, keys in texts and arguments searched a batch at a time,
tool-call pairing, the memo it leaves), ``unanswered_calls`` (roles compared by identity), the reader's
``Message`` values built slot by slot (``sessions.lines``), and the reader's own walk that stands in for both
(``sendable.ReadCheck``).

``valid`` batches only past a size, so the tests set that size to 0 (forced) or out of reach (the walk).
"""

from __future__ import annotations

import datetime
import gc
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brute_nb import redact_messages
from brute_nb import sendable as sendable_module
from brute_nb.attachments import Attachment
from brute_nb.message import Log, Message, ToolCall, role_of, unanswered_calls
from brute_nb.redact import key_search, remember
from brute_nb.redact_messages import any_holds_key, holds_key
from brute_nb.sendable import ReadCheck, valid
from brute_nb.sessions import lines
from brute_nb.sessions.file import SessionFile
from brute_nb.sessions.lines import parse_messages

KEY = "sk-wholefield-0123456789abcdef"
remember(KEY)  # a known key: the walks must agree on which messages need redacting
EXAMPLES = settings(max_examples=300, deadline=None)
NEVER = 10**9

texts = st.sampled_from(["", "hi", f"see {KEY} here", KEY[:-1], "x" * 40]) | st.text(max_size=4)
ids = st.sampled_from(["", "a", "b", "c", "d"])
arguments = st.sampled_from([{}, {"path": "a.py"}, {"nested": [{"deep": f"x{KEY}"}]}, {KEY: 1}, {"n": [1, 2.5, None]}])
metas = st.sampled_from([{}, {"model": "m"}, {"refused": {"reason": "no"}}, {"refused": None}, {"is_error": True}])
links = st.sampled_from([None, "https://example.com/a.pdf", f"https://example.com/a.pdf?key={KEY}"])


@st.composite
def messages(draw: Any) -> Message:
    kind = draw(st.sampled_from(["user", "assistant", "system", "tool", "calls", "calls", "odd"]))
    meta = draw(metas)
    if kind == "calls":
        calls = [ToolCall(draw(ids), "f", draw(arguments)) for _ in range(draw(st.integers(0, 3)))]
        return Message("assistant", draw(texts), tool_calls=calls, meta=meta)
    if kind == "tool":
        return Message("tool", draw(texts), tool_call_id=draw(ids), meta=meta)
    if kind == "odd":  # a call id on a message that is no result; calls on a user message (hand-edited files)
        return Message("user", draw(texts), tool_calls=[ToolCall(draw(ids), "f")], tool_call_id=draw(ids))
    link = draw(links) if kind == "user" else None
    return Message(kind, draw(texts), meta=meta, attachments=[Attachment.url(link)] if link else None)


def valid_by(threshold: int, log: Any, batch: int = 4096) -> tuple[bool, Any]:
    with mock.patch.object(sendable_module, "_FEW", threshold), mock.patch.object(redact_messages, "_BATCH", batch):
        return valid(log), dict(getattr(log, "prefix_memo", {}))


@EXAMPLES
@given(st.lists(messages(), max_size=14), st.lists(messages(), max_size=6), st.sampled_from([1, 2, 4096]))
def test_valid_by_fields_answers_what_the_walk_answers(first: list[Message], more: list[Message],
                                                       batch: int) -> None:
    assert valid_by(0, first, batch)[0] == valid_by(NEVER, first)[0]
    fields, walked = Log(first), Log(first)
    assert valid_by(0, fields, batch) == valid_by(NEVER, walked)  # the same answer and the same memo left
    fields.extend(more)  # the next call resumes from the memo, by fields or not
    walked.extend(more)
    assert valid_by(0, fields, batch) == valid_by(NEVER, walked)


def test_a_call_id_taken_before_the_memo_is_still_taken() -> None:
    """The resumed walk knows the ids the last one saw: a later call reusing one is renamed, so not valid."""
    turn = [Message("user", "q"), Message("assistant", "", [ToolCall("a", "f")]),
            Message("tool", "r", tool_call_id="a")]
    for threshold in (0, NEVER):
        log = Log(turn)
        assert valid_by(threshold, log)[0]
        log.extend(turn)
        assert not valid_by(threshold, log)[0]
        assert not valid_by(threshold, list(log))[0]


def test_a_key_in_one_message_of_a_long_session_is_found() -> None:
    turn = [Message("user", "q"), Message("assistant", "", [ToolCall("c", "read", {"path": "a.py"})]),
            Message("tool", "text", tool_call_id="c"), Message("assistant", "done")]
    clean = [m.replace(tool_calls=[ToolCall(f"{c.id}{i}", c.name, c.arguments) for c in m.tool_calls])
             if m.tool_calls else m.replace(tool_call_id=f"{m.tool_call_id}{i}") if m.tool_call_id else m
             for i in range(3000) for m in turn]
    assert valid(clean)
    for at, leak in ((1, {"path": {"k": [KEY]}}), (5001, {KEY: "as a name"}), (9998, {"path": "a.py"})):
        log = list(clean)
        m = log[at]
        log[at] = m.replace(tool_calls=[ToolCall(m.tool_calls[0].id, "read", leak)]) if m.tool_calls else \
            m.replace(content=f"echo {KEY}")
        assert not valid(log), at


@pytest.mark.parametrize("key", ['sk-with"quote12', "sk-with\\slash12", "sk-with\x00nul1234", "sk-with\ttab1234",
                                 "sk-plain-key-1234"])
def test_a_key_json_would_escape_is_still_found(key: str) -> None:
    """The batched search reads arguments as JSON text: a key JSON escapes is asked message by message."""
    keys = (key,)
    search = key_search(keys)
    assert search is not None
    batches = [[Message("assistant", "", [ToolCall("c", "f", {"a": f"x{key}y"})])],
               [Message("assistant", "", [ToolCall("c", "f", {key: 1})])],
               [Message("assistant", f"x{key}")], [Message("user", "a"), Message("user", "b")],
               [Message("assistant", "", [ToolCall("c", "f", {1: key})])],  # not JSON: a non-text key
               [Message("assistant", "", [ToolCall("c", "f", {"when": datetime.date(2026, 1, 1)})])],
               [Message("assistant", "", [ToolCall("c", "f", {"n": 123})])]]
    for batch in batches:
        assert any_holds_key(batch, search, keys) == any(holds_key(m, search) for m in batch), batch


def walked_calls(messages: list[Any]) -> list[Any]:
    """``unanswered_calls`` as it was written before it compared roles by identity: the oracle."""
    pending: dict[str, list[tuple[int, Any]]] = {}
    order = 0
    for m in messages:
        role = role_of(m)
        if role == "assistant" and m.tool_calls:
            for c in m.tool_calls:
                call = ToolCall.coerce(c) if not isinstance(c, ToolCall) else c
                pending.setdefault(call.id, []).append((order, call))
                order += 1
        elif role == "tool" and pending.get(m.tool_call_id):
            pending[m.tool_call_id].pop()
    return [call for _, call in sorted((e for calls in pending.values() for e in calls), key=lambda e: e[0])]


class Like:
    """A message-like object that is no ``Message``: a role in any case, calls as dicts."""

    def __init__(self, role: str, tool_calls: Any = None, tool_call_id: str | None = None) -> None:
        self.role, self.content, self.tool_calls, self.tool_call_id = role, "", tool_calls, tool_call_id


likes = st.builds(Like, st.sampled_from(["assistant", "Assistant", "TOOL", "tool", "user", "robot"]),
                  st.none() | st.lists(st.builds(lambda i: {"id": i, "name": "f"}, ids), max_size=2),
                  st.none() | ids)


@EXAMPLES
@given(st.lists(messages() | likes, max_size=14))
def test_unanswered_calls_are_the_walks(log: list[Any]) -> None:
    assert unanswered_calls(log) == walked_calls(log)
    assert unanswered_calls(list(reversed(log))) == walked_calls(list(reversed(log)))


def test_the_reader_builds_what_the_constructor_builds() -> None:
    items = [Message("user", "hi", meta={"id": "1"}), Message("user", ""), Message("system", "s", meta={}),
             Message("assistant", "", [ToolCall("c1", "ls", {"p": "."}), ToolCall("", "f", {})],
                     meta={"model": "m", "usage": {"n": [1, 2]}}),
             Message("tool", "a.txt", tool_call_id="c1"), Message("assistant", "x", [])]
    data = "".join(m.to_json() + "\n" for m in items).encode().replace(b'"arguments":{}', b'"arguments":null')
    data += b'{"role":"assistant","content":null,"tool_calls":[{"name":"g"},{"name":"g"}]}\n'
    read = parse_messages(data)
    assert read is not None  # a regular file: the fast path, not the strict reader
    expected = [*items, Message("assistant", None, [ToolCall("", "g"), ToolCall("", "g")])]
    assert read == expected
    for got, made in zip(read, expected, strict=True):
        assert type(got.meta) is type(made.meta) and (got.meta is made.meta) == (not made.meta)  # the shared empty
        assert type(got.tool_calls) is type(made.tool_calls) and type(got.role) is type(made.role)
        assert got.attachments == () and got.to_json() == made.to_json()
    last = read[-1].tool_calls
    assert last is not None and last[0].arguments == {} and last[0].arguments is not last[1].arguments


def test_a_field_without_a_column_is_an_error() -> None:
    with pytest.raises(KeyError, match="tool_call_id"):
        lines._filled(Message, 1, {"role": ["user"], "content": ["x"], "tool_calls": [None], "attachments": [()],
                                   "meta": [{}]})


def test_parsed_messages_go_to_the_oldest_generation_and_frozen_objects_stay_frozen() -> None:
    data = b'{"role":"assistant","content":"x","tool_calls":[{"id":"c","name":"f"}],"meta":{"a":[1]}}\n' * 500
    gc.unfreeze()  # a program that froze nothing (the suite's leak check freezes the heap during a test)
    gc.collect()
    assert gc.isenabled()
    read = parse_messages(data)
    assert read is not None and gc.isenabled()
    young = {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    assert not young & {id(read[0]), id(read[-1]), id(read[-1].tool_calls)}
    gc.freeze()  # a program that froze its objects (before a fork): the reader leaves them frozen
    try:
        frozen = gc.get_freeze_count()
        assert parse_messages(data) == read
        # not unfrozen (0) and nothing more frozen (thousands more); other threads may free frozen objects
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        assert parse_messages(data) == read
        assert not gc.isenabled()
    finally:
        gc.enable()


def fed(messages: list[Message], size: int) -> ReadCheck:
    """A reader's walk fed ``messages`` ``size`` at a time, as the reader feeds it its blocks."""
    check = ReadCheck()
    for i in range(0, len(messages), size):
        check.add(messages[i:i + size])
    return check


@EXAMPLES
@given(st.lists(messages(), max_size=14), st.lists(messages(), max_size=6), st.sampled_from([1, 3, 100]))
def test_the_readers_walk_answers_what_valid_and_unanswered_calls_answer(first: list[Message],
                                                                          more: list[Message], size: int) -> None:
    check = fed(first, size)
    seeded, walked = Log(first), Log(first)
    check.seed(seeded)
    kept = dict(seeded.prefix_memo)
    answer = valid_by(NEVER, walked)
    assert bool(kept) == bool(answer[1])  # a memo exactly when the walk keeps one: never a fact the walk lacks
    if kept:
        assert kept == answer[1] and check.open is not None
    if check.open is not None:
        assert check.open == bool(unanswered_calls(first))
    assert valid_by(NEVER, seeded) == answer  # the same answer and the same memo, read from the seed or walked
    seeded.extend(more)
    walked.extend(more)
    assert valid_by(NEVER, seeded) == valid_by(NEVER, walked)


def test_a_pairing_fault_leaves_unanswered_calls_to_the_walk() -> None:
    calls = Message("assistant", "", [ToolCall("a", "f"), ToolCall("b", "f")])
    for log in ([calls, Message("user", "q")],  # a call left open in the middle
                [Message("tool", "r", tool_call_id="a")],  # an orphan result
                [calls, Message("tool", "r", tool_call_id="a"), calls]):  # ids reused
        check = fed(log, 1)
        assert check.open is None
        seeded = Log(log)
        check.seed(seeded)
        assert not seeded.prefix_memo


def test_no_memo_for_other_messages_or_after_the_strict_reader() -> None:
    log = [Message("user", "q"), Message("assistant", "", [ToolCall("a", "f")])]
    check = fed(log, 2)
    assert check.open is True
    longer = Log([*log, Message("tool", "r", tool_call_id="a")])
    check.seed(longer)  # not the messages it was fed
    assert not longer.prefix_memo
    check.drop()  # the strict reader made them
    same = Log(log)
    check.seed(same)
    assert check.open is None and not same.prefix_memo


def test_a_key_known_only_after_the_read_is_still_found() -> None:
    later = "sk-knownlater-0123456789abcdef"
    log = [Message("user", f"my key is {later}"), Message("assistant", "ok")]
    check = fed(log, 2)
    remember(later)  # e.g. a provider built after the session was read
    seeded = Log(log)
    check.seed(seeded)
    assert not valid(seeded)  # the memo was for other keys: the walk starts again, and finds it


def test_the_reader_feeds_its_walk_and_the_session_file_drops_it_for_the_strict_reader(tmp_path: Path) -> None:
    turn = [Message("user", "q"), Message("assistant", "", [ToolCall("c1", "read", {"path": "a.py"})]),
            Message("tool", "text", tool_call_id="c1"), Message("assistant", "done")]
    data = "".join(m.to_json() + "\n" for m in turn).encode()
    check = ReadCheck()
    assert parse_messages(data, check) == turn and check.count == 4 and check.open is False
    path = tmp_path / "s.jsonl"
    path.write_bytes(data[:-1] + b"\n\n" + data)  # a blank line: the strict reader reads it
    check = ReadCheck()
    assert SessionFile(path).load(check)[0] == turn + turn
    assert check.open is None  # it answers nothing about what another reader made
