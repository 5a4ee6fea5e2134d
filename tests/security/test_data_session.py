"""Issue 14 item 10: session file edge cases keep every byte the user had and fail clearly, never silently."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.errors import SessionLogError
from brute_nb.message import Message, unanswered_calls
from brute_nb.middleware import SessionLog
from brute_nb.sessions.file import SessionFileWarning, read_session

ROOT = Path(__file__).resolve().parents[2]


def answer(env: dict[str, Any]) -> None:
    env["messages"].assistant("fine")


def whole_lines(*texts: str) -> bytes:
    return "".join(Message("user" if i % 2 == 0 else "assistant", t).to_json() + "\n"
                   for i, t in enumerate(texts)).encode()


def test_a_torn_last_line_is_kept_aside_and_named_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    fragment = b'{"role":"assistant","content":"half of a lo'
    path.write_bytes(whole_lines("hello", "hi") + fragment)

    with pytest.warns(SessionFileWarning, match=r"s\.jsonl:3: the last line is cut off"):
        assert [m.content for m in read_session(path)] == ["hello", "hi"]  # a reader skips it, and says so
    assert path.read_bytes().endswith(fragment)  # reading never changes the file

    with pytest.warns(SessionFileWarning, match=r"s\.jsonl:3: .*cut off mid-write.*moved to .*s\.torn\.txt"):
        agent().use(SessionLog, path=path).run(answer).start("after the crash")
    assert (tmp_path / "s.torn.txt").read_bytes() == fragment + b"\n"  # every byte of it is kept
    assert [m.content for m in read_session(path)] == ["hello", "hi", "after the crash", "fine"]


def test_a_session_file_linked_outside_its_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "victim.txt"
    outside.parent.mkdir()
    outside.write_text("the user's own file\n")
    folder = tmp_path / "nb" / "demo.brute"
    folder.mkdir(parents=True)
    link = folder / "s.jsonl"
    link.symlink_to(outside)

    with pytest.raises(SessionLogError, match=r"s\.jsonl is a link to .*victim\.txt, outside"):
        agent().use(SessionLog, path=link, root=tmp_path / "nb").run(answer).start("hello")
    assert outside.read_text() == "the user's own file\n"


def test_a_lock_or_archive_linked_outside_is_refused_too(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("keep me\n")
    folder = tmp_path / "nb"
    folder.mkdir()
    (folder / "s.jsonl.lock").symlink_to(outside)  # filelock opens its file with O_TRUNC
    with pytest.raises(SessionLogError, match="outside"):
        agent().use(SessionLog, path=folder / "s.jsonl").run(answer).start("hello")
    assert outside.read_text() == "keep me\n"


def test_a_link_inside_the_folder_is_followed_and_kept(tmp_path: Path) -> None:
    (tmp_path / "real.jsonl").write_bytes(whole_lines("hello", "hi"))
    link = tmp_path / "s.jsonl"
    link.symlink_to(tmp_path / "real.jsonl")
    agent().use(SessionLog, path=link).run(answer).start("more")
    assert link.is_symlink()
    assert [m.content for m in read_session(tmp_path / "real.jsonl")] == ["hello", "hi", "more", "fine"]


FULL_DISK = """
import os, resource, signal, sys
from brute_nb import agent
from brute_nb.errors import SessionLogError
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.tools import tool

path = sys.argv[1]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG, like ENOSPC
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

@tool
def fill_disk() -> str:
    '''Leaves room for 10 more bytes in the session file: the next line is torn part-way, as on a full disk.'''
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 10, hard))
    return "a result that will not fit " * 20

with FakeProvider([reply("", call("fill_disk")), "after the disk was freed"]) as fake:
    handler = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
    a = agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[fill_disk]).run(
        handler)
    try:
        a.start("fill it")
        print("NO ERROR")
    except SessionLogError as exc:
        print("ERROR", exc)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space is back
    print("SIZE", os.path.getsize(path))
    env = a.start("and now?")
    print("REPLY", env["messages"][-1].content)
    print("REQUESTS", len(fake.requests))
"""


def test_a_full_disk_rolls_the_append_back_and_the_next_turn_works(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(FULL_DISK), str(path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "ERROR could not save the session to" in out and "File too large" in out, out
    assert "nothing half-written" in out
    size_after_failure = int(out.split("SIZE ")[1].split()[0])
    data = path.read_bytes()
    assert data[:size_after_failure].endswith(b"\n")  # rolled back to whole lines: no torn line left behind
    assert "REPLY after the disk was freed" in out  # the next turn was not refused (no HTTP 400)
    assert "REQUESTS 2" in out
    saved = read_session(path)
    assert unanswered_calls(saved) == []
    assert [m.role.value for m in saved] == ["user", "assistant", "tool", "user", "assistant"]
    assert saved[2].meta.get("synthetic") is True  # the call the failure left open was answered, not lost


def test_a_failed_write_fails_the_turn_even_when_a_layer_swallows_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.sessions import file as session_file

    path = tmp_path / "s.jsonl"
    real = session_file._write_all

    def full_disk_on_the_reply(fd: int, data: bytes) -> None:
        if b"swallowed" in data:
            os.write(fd, data[:7])  # part of the line reaches the disk, then the disk is full
            raise OSError(28, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(session_file, "_write_all", full_disk_on_the_reply)

    def swallowing(env: dict[str, Any]) -> None:
        with contextlib.suppress(SessionLogError):  # a careless layer: the turn must fail anyway
            env["messages"].assistant("swallowed")

    with pytest.raises(SessionLogError, match="No space left on device"):
        agent().use(SessionLog, path=path).run(swallowing).start("hello")
    assert [json.loads(line)["content"] for line in path.read_text().splitlines()] == ["hello"]


@pytest.mark.parametrize(("line", "problem"), [
    ('{"role":"assistant","content":"","tool_calls":{}}', "'tool_calls' must be a list or null, not an object"),
    ('{"role":"user","content":"x","meta":[["id","1"]]}', "'meta' must be an object or null, not a list"),
    ('{"role":"user","content":["x"]}', "'content' must be a string or null, not a list"),
    ('{"role":"tool","content":"x","tool_call_id":7}', "'tool_call_id' must be a string or null, not a number"),
    ('{"role":"assistant","content":"","tool_calls":["shell"]}', "tool_calls[0] must be an object"),
    ('{"role":"assistant","content":"","tool_calls":[{"id":1,"name":"shell"}]}', "'id' and 'name' must be"),
    ('{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"x","arguments":[1]}]}',
     "tool_calls[0].arguments must be an object"),
])
def test_a_line_with_wrong_types_is_refused_by_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(whole_lines("hello") + line.encode() + b"\n")
    with pytest.raises(SessionLogError, match=r"s\.jsonl:2: not a valid message: .*" + re.escape(problem)):
        read_session(path)
