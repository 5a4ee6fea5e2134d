"""fs_search (ripgrep and the pure-Python fallback) and shell (exit codes, signals, timeouts, process groups)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from brute_nb.tools import FSSearch, Shell
from brute_nb.tools.builtin import fs_search as fs_search_module

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(fs_search_module, "find_rg", lambda: None)
    else:
        assert fs_search_module.find_rg() is not None, "the ripgrep wheel's rg should be installed"
    return str(request.param)


async def test_search_finds_matches_with_glob_and_case(ws: Path, run: Any, engine: str) -> None:
    (ws / "a.py").write_text("def Foo():\n    return 1\n")
    (ws / "b.js").write_text("foo()\n")
    out = (await run(FSSearch, pattern="foo", ignore_case=True, glob="*.{py,ts}")).text
    assert out.strip() == "a.py:1:def Foo():"  # relative to the workspace root, as the README promises
    (ws / ".hidden.js").write_text("foo\n")
    both = (await run(FSSearch, pattern="foo", ignore_case=True)).text
    assert sorted(both.splitlines()) == ["a.py:1:def Foo():", "b.js:1:foo()"]
    (ws / "sub").mkdir()
    (ws / "sub" / "c.txt").write_text("foo\n")
    assert (await run(FSSearch, pattern="foo", path="sub")).text == "sub/c.txt:1:foo\n"
    dash = (await run(FSSearch, pattern="-x", path=".")).text
    assert dash == "No matches found."  # "-x" is a pattern, not a flag


async def test_search_caps_at_100_matches(ws: Path, run: Any, engine: str) -> None:
    (ws / "many.txt").write_text("hit\n" * 150)
    out = await run(FSSearch, pattern="hit")
    assert out.truncated
    lines = out.text.splitlines()
    assert len([x for x in lines if x.endswith(":hit")]) == 100
    assert "(Results truncated: showing 100 of 150 matches." in out.text


async def test_search_requires_a_directory(ws: Path, run: Any) -> None:
    (ws / "f").write_text("")
    with pytest.raises(NotADirectoryError, match="Directory not found"):
        await run(FSSearch, pattern="x", path="f")


async def test_shell_output_stderr_and_exit_code(ws: Path, run: Any) -> None:
    out = await run(Shell, command="pwd; echo oops >&2; exit 3")
    assert out.text == f"{ws}\n\nSTDERR:\noops\n\n[exit code: 3]"
    ok = await run(Shell, command="echo hi")
    assert ok.text == "hi\n"
    (ws / "sub").mkdir()
    assert (await run(Shell, command="pwd", cwd="sub")).text == f"{ws / 'sub'}\n"
    assert (await run(Shell, command="cat")).text == ""  # stdin is closed, so cat ends at once


async def test_shell_reports_signals(run: Any) -> None:
    out = await run(Shell, command="kill -TERM $$")
    assert out.text.endswith("[killed by signal 15 (SIGTERM)]")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_shell_timeout_kills_the_whole_group_and_keeps_output(ws: Path, run: Any) -> None:
    out = await run(Shell, command="sleep 1000 & echo $! > bg.pid; echo partial; sleep 1000", timeout=1)
    assert out.text.startswith("partial\n")
    assert "[Command timed out after 1s and was killed:" in out.text
    pid = int((ws / "bg.pid").read_text())
    with anyio.fail_after(5):
        # SIGKILL is delivered asynchronously, and no event can tell us a process died: poll.
        while _alive(pid):  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def test_shell_leftover_background_jobs_do_not_hold_the_call(ws: Path, run: Any) -> None:
    with anyio.fail_after(30):
        out = await run(Shell, command="sleep 1000 & echo $! > bg.pid; echo done")
    assert out.text == "done\n"
    pid = int((ws / "bg.pid").read_text())
    with anyio.fail_after(5):
        while _alive(pid):  # noqa: ASYNC110 - polling process state
            await anyio.sleep(0.01)


async def test_shell_cancel_kills_the_command(ws: Path, run: Any) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: run(Shell, command="echo $$ > sh.pid; sleep 1000"))
        with anyio.fail_after(10):
            while not (ws / "sh.pid").exists() or not (ws / "sh.pid").read_text().strip():  # noqa: ASYNC110
                await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    pid = int((ws / "sh.pid").read_text())
    # The group is SIGKILLed and reaped before the tool returns; under heavy load /proc can still list the pid for
    # a moment after the reap, so allow it a few seconds to vanish (a live `sleep 1000` never would).
    with anyio.move_on_after(5):
        while _alive(pid):  # noqa: ASYNC110
            await anyio.sleep(0.01)
    assert not _alive(pid)


async def test_shell_tail_truncation(run: Any, overflow: Path) -> None:
    out = await run(Shell, command="seq 1 3000")
    lines = out.text.splitlines()
    assert lines[0] == "1001" and "3000" in lines
    assert "[Output truncated: showing lines 1001-3000 of 3000]" in out.text
    saved = next(overflow.iterdir())  # noqa: ASYNC240 - a tiny test read
    assert saved.read_text().startswith("1\n2\n")


async def test_shell_refuses_cwd_outside_root(run: Any) -> None:
    from brute_nb.errors import PathOutsideRootError

    with pytest.raises(PathOutsideRootError):
        await run(Shell, command="ls", cwd="..")
