"""The file tools stay inside the root and away from special files (issue 14 items 5, 6 and the fs part of 15).

FIFOs, symlinks out of the root, hard links to outside files, huge files and a symlink swapped in while the tools
run: nothing outside the root is read or changed, nothing hangs, and memory stays small.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from brute_nb.errors import PathOutsideRootError
from brute_nb.tools import Adapter, FSPatch, FSRead, FSRemove, FSSearch, FSUndo, FSWrite, use_env
from brute_nb.tools.builtin import fs_search as fs_search_module

HANG = 10.0
"""A call that has not returned after this long is hung (a FIFO blocks forever)."""


def call(env: dict[str, Any], tool: Any, **arguments: Any) -> Any:
    """Run one tool call on its own event loop (as a thread of the kernel would)."""
    async def go() -> Any:
        with use_env(env):
            return await Adapter.wrap(tool).call(arguments)

    return anyio.run(go)


def outcome(env: dict[str, Any], tool: Any, fifo: Path, **arguments: Any) -> BaseException | Any:
    """The call's result or exception; fails the test if it hangs (then frees the thread by opening the FIFO)."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(call(env, tool, **arguments))
        except BaseException as exc:  # the test inspects whatever the call raised
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG)
    if thread.is_alive():
        for _ in range(3):  # unblock an open() or read() stuck on the FIFO, so the thread can end
            fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            os.close(fd)
        pytest.fail(f"{tool.__name__}({arguments}) hung on a FIFO")
    return box[0]


def test_fifos_are_refused_not_opened(ws: Path, env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = ws / "pipe"
    os.mkfifo(fifo)
    (ws / "a.txt").write_text("needle\n")
    calls: list[tuple[Any, dict[str, Any]]] = [
        (FSRead, {"file_path": "pipe"}),
        (FSWrite, {"file_path": "pipe", "content": "x"}),
        (FSPatch, {"file_path": "pipe", "old_string": "a", "new_string": "b"}),
        (FSRemove, {"path": "pipe"}),
    ]
    for tool, arguments in calls:
        result = outcome(env, tool, fifo, **arguments)
        assert isinstance(result, OSError) and "FIFO" in str(result), (tool.__name__, result)
    monkeypatch.setattr(fs_search_module, "find_rg", lambda: None)
    found = outcome(env, FSSearch, fifo, pattern="needle")
    assert found.text == "a.txt:1:needle\n"
    assert fifo.exists()


def test_search_fallback_never_follows_links_out_of_the_root(ws: Path, tmp_path: Path, env: dict[str, Any],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "key.txt").write_text("needle OUTSIDE\n")
    (ws / "out-dir").symlink_to(secret_dir)
    (ws / "out-file.txt").symlink_to(secret_dir / "key.txt")
    (ws / "in.txt").write_text("needle inside\n")
    expected = "in.txt:1:needle inside\n"
    assert call(env, FSSearch, pattern="needle").text == expected  # ripgrep
    monkeypatch.setattr(fs_search_module, "find_rg", lambda: None)
    assert call(env, FSSearch, pattern="needle").text == expected  # the same rules without it


def test_read_of_a_huge_file_reads_only_what_is_shown(ws: Path, env: dict[str, Any]) -> None:
    big = ws / "big.log"
    with big.open("wb") as f:
        f.write(b"".join(b"line %d\n" % i for i in range(3000)))
        f.truncate(64 << 20)  # 64 MiB, sparse: costs no disk
    one_line = ws / "one-line.txt"
    with one_line.open("wb") as f:
        f.write(b"a" * 5000)
        f.truncate(32 << 20)
    tracemalloc.start()
    try:
        out = call(env, FSRead, file_path="big.log").text
        long = call(env, FSRead, file_path="one-line.txt").text
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.startswith("1\tline 0\n") and "2000\tline 1999\n" in out and "Use start_line=2001" in out
    assert long.startswith("1\t" + "a" * 2000 + "... (line truncated to 2000 chars)")
    assert peak < 8 << 20, f"reading 50 KB of a 64 MiB file peaked at {peak / 2**20:.0f} MiB"


def test_a_write_through_a_hard_link_leaves_the_outside_file_alone(ws: Path, tmp_path: Path,
                                                                    env: dict[str, Any]) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original outside\n")
    os.link(outside, ws / "linked.txt")
    call(env, FSPatch, file_path="linked.txt", old_string="original", new_string="patched")
    assert (ws / "linked.txt").read_text() == "patched outside\n"
    call(env, FSWrite, file_path="linked.txt", content="written\n")
    assert (ws / "linked.txt").read_text() == "written\n"
    assert outside.read_text() == "original outside\n"


SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
d, link = (os.fsencode(p) for p in sys.argv[1:3])
print("ready", flush=True)
while True:  # d is a folder inside the root, then (atomically) a symlink to a folder outside it, and back
    libc.renameat2(AT_FDCWD, d, AT_FDCWD, link, RENAME_EXCHANGE)
"""


@pytest.fixture
def swapping(ws: Path, tmp_path: Path) -> Iterator[Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE secret\n")
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    (ws / "d.link").symlink_to(outside)
    child = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws / "d"), str(ws / "d.link")],
                             stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.readline()
    try:
        yield outside
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def test_a_symlink_swapped_in_while_the_tools_run_never_leads_outside(ws: Path, env: dict[str, Any],
                                                                      swapping: Path) -> None:
    async def hammer() -> tuple[int, int, list[str]]:
        leaks: list[str] = []
        reads = writes = 0
        deadline = time.monotonic() + 3.0
        with use_env(env):
            while time.monotonic() < deadline and not leaks:
                for attempt in (_read, _write, _patch):
                    try:
                        text = await attempt()
                    except (PathOutsideRootError, OSError, ValueError):
                        continue
                    if attempt is _read:
                        reads += 1
                        if "OUTSIDE" in text:
                            leaks.append(f"read leaked: {text!r}")
                    else:
                        writes += 1
                        if (swapping / "f.txt").read_text() != "OUTSIDE secret\n":
                            leaks.append("a write went outside the root")
        return reads, writes, leaks

    reads, writes, leaks = anyio.run(hammer)
    leaks += [f"outside changed: {p.name}" for p in swapping.iterdir()
              if p.name != "f.txt" or p.read_text() != "OUTSIDE secret\n"]
    assert not leaks, leaks
    assert reads and writes  # the tools did run while the link was being swapped


async def _read() -> str:
    return str((await Adapter.wrap(FSRead).call({"file_path": "d/f.txt"})).text)


async def _write() -> str:
    await FSWrite().execute(file_path="d/f.txt", content="inside\nwritten by the agent\n")
    return ""


async def _patch() -> str:
    await FSPatch().execute(file_path="d/f.txt", old_string="inside", new_string="inside")
    return ""


def test_undo_keeps_an_edit_made_since_the_agents_write(ws: Path, env: dict[str, Any]) -> None:
    (ws / "notes.md").write_text("v1\n")
    call(env, FSWrite, file_path="notes.md", content="v2 by the agent\n")
    (ws / "notes.md").write_text("v3 by the user\n")
    out = call(env, FSUndo, path="notes.md")
    assert (ws / "notes.md").read_text() == "v1\n"
    assert (ws / "notes.md.before-undo").read_text() == "v3 by the user\n"
    assert out["kept"] == "notes.md.before-undo" and "had changed since the agent's edit" in out["note"]

    call(env, FSWrite, file_path="new.md", content="agent\n")
    (ws / "new.md").write_text("user\n")
    out = call(env, FSUndo, path="new.md")
    assert not (ws / "new.md").exists() and (ws / "new.md.before-undo").read_text() == "user\n"


def test_undo_of_an_unchanged_file_keeps_nothing(ws: Path, env: dict[str, Any]) -> None:
    (ws / "a.py").write_text("x = 1\n")
    call(env, FSPatch, file_path="a.py", old_string="1", new_string="2")
    out = call(env, FSUndo, path="a.py")
    assert "kept" not in out and sorted(p.name for p in ws.iterdir()) == ["a.py"]

