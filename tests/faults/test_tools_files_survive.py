"""User files survive a SIGKILL mid-patch and a full disk, and no agent's patch is lost (issue 14 items 9 and 11).

The full disk is real to the kernel: the child process runs under ``RLIMIT_FSIZE``, so a write past the limit fails
with ``EFBIG`` exactly where a full disk fails with ``ENOSPC``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from brute_nb.tools import Adapter, FSPatch, use_env

ROOT = Path(__file__).resolve().parents[2]
SIZE = 24 * 1024 * 1024
KILLS = 5

PATCHER = """
import sys, anyio
from brute_nb.tools import Adapter, FSPatch, use_env
env = {"state": {}, "root": sys.argv[1], "ask": None, "events": None, "metadata": {}}

async def main():
    with use_env(env):
        print("ready", flush=True)
        while True:
            for old, new in (("AAAA", "BBBB"), ("BBBB", "AAAA")):
                await Adapter.wrap(FSPatch).call({"file_path": "big.txt", "old_string": old, "new_string": new})

anyio.run(main)
"""


def _versions() -> tuple[bytes, bytes]:
    body = b"x" * (SIZE - 5) + b"\n"
    return b"AAAA" + body, b"BBBB" + body


def test_sigkill_during_patch_leaves_the_old_or_the_new_file(tmp_path: Path) -> None:
    a, b = _versions()
    target = tmp_path / "big.txt"
    target.write_bytes(a)
    os.chmod(target, 0o640)
    for _ in range(KILLS):
        child = subprocess.Popen([sys.executable, "-c", PATCHER, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE)
        assert child.stdout is not None
        child.stdout.readline()
        _wait_for_a_write(tmp_path, target)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        data = target.read_bytes()
        whole = data in (a, b)  # (not asserted inline: pytest would print 24 MB)
        assert whole, f"after SIGKILL the file holds {len(data)} bytes, neither version"
        assert target.stat().st_mode & 0o777 == 0o640
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "big.txt"]
    assert all(name.endswith(".brute-tmp") for name in leftovers)  # at most the dead writer's temp files


def _wait_for_a_write(folder: Path, target: Path) -> None:
    """Return while the child is writing: the file is shorter than both versions, or a temp file is being filled."""
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        try:
            if target.stat().st_size != SIZE or any(p.suffix == ".brute-tmp" and p.stat().st_size
                                                    for p in folder.iterdir()):
                return
        except FileNotFoundError:
            return
    # No write was seen (on a very slow machine): the kill then lands wherever the child is.


FULL_DISK = """
import resource, signal, sys, anyio
from brute_nb.tools import Adapter, FSPatch, FSUndo, FSWrite, use_env
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
env = {"state": {}, "root": sys.argv[1], "ask": None, "events": None, "metadata": {}}

async def attempt(tool, **arguments):
    try:
        await Adapter.wrap(tool).call(arguments)
        print(tool.name, "succeeded")
    except Exception as exc:
        print(tool.name, "failed:", type(exc).__name__)

async def main():
    with use_env(env):
        await attempt(FSPatch, file_path="notes.txt", old_string="small", new_string="x" * (2 << 20))
        await attempt(FSWrite, file_path="notes.txt", content="y" * (2 << 20))
        await attempt(FSWrite, file_path="new.txt", content="z" * (2 << 20))
        await attempt(FSPatch, file_path="notes.txt", old_string="small", new_string="fits")
        await attempt(FSUndo, path="notes.txt")

anyio.run(main)
"""


def test_a_full_disk_loses_nothing(tmp_path: Path) -> None:
    original = "a small file the user wrote\n" + "more of it\n" * 1000
    (tmp_path / "notes.txt").write_text(original)
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["patch failed: OSError", "write failed: OSError", "write failed: OSError",
                                        "patch succeeded", "undo succeeded"]
    assert (tmp_path / "notes.txt").read_text() == original  # every failure left it whole; undo restored it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # no temp file, no half-written new.txt


AGENTS = 8
PATCHES = 5


def test_agents_patching_one_file_lose_no_update(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    target.write_text("pad\n" * 50_000 + "END\n")  # big enough that each rewrite takes a while
    succeeded: list[str] = []
    errors: list[BaseException] = []

    def agent(n: int) -> None:
        env: dict[str, Any] = {"state": {}, "root": str(tmp_path), "ask": None, "events": None, "metadata": {}}

        async def run() -> None:
            with use_env(env):
                for i in range(PATCHES):
                    marker = f"agent {n} patch {i}"
                    await Adapter.wrap(FSPatch).call({"file_path": "shared.txt", "old_string": "END\n",
                                                      "new_string": f"{marker}\nEND\n"})
                    succeeded.append(marker)

        try:
            anyio.run(run)  # each agent on its own thread and event loop, as sessions of one kernel can be
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(AGENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    landed = [line for line in target.read_text().splitlines() if line.startswith("agent ")]
    assert len(succeeded) == AGENTS * PATCHES
    assert sorted(landed) == sorted(succeeded), f"{len(succeeded)} patches succeeded, {len(landed)} landed"


HOLDER = """
import sys, time
from pathlib import Path
from brute_nb.tools.stores import file_queue
path = Path(sys.argv[1])
with file_queue().hold(path):
    print("holding", flush=True)
    time.sleep(0.5)
    path.write_text(path.read_text() + "written by the other process\\n")
"""


def test_another_process_holding_the_file_lock_is_waited_for(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("first\n")
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)], cwd=ROOT, stdout=subprocess.PIPE)
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"holding\n"

        async def patch() -> None:
            with use_env({"state": {}, "root": str(tmp_path), "ask": None, "events": None, "metadata": {}}):
                # Only possible once the other process has written its line, i.e. after it let go of the lock.
                await Adapter.wrap(FSPatch).call({"file_path": "f.txt", "old_string": "by the other process",
                                                  "new_string": "by the other process, then patched"})

        anyio.run(patch)
    finally:
        child.wait()
        child.stdout.close()
    assert target.read_text() == "first\nwritten by the other process, then patched\n"
