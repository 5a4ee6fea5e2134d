"""SIGKILL in the middle of session writes: every file parses and is the old version plus whole new lines."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from brute_nb import agent
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog
from brute_nb.middleware.session_log import read_session

ITERATIONS = 100
BATCH = 5
"""Children run five at a time (each on its own file) so 100 kills stay cheap on two cores."""

CHILD = """
import sys
from brute_nb import agent
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog

async def answer(env):
    # big lines, so a kill often lands inside a write
    for i in range(3):
        env["messages"].append(Message(Role.ASSISTANT, "x" * 200_000 + str(i)))

a = agent().use(SessionLog, path=sys.argv[1]).run(answer)
print("ready", flush=True)
while True:
    a.start("again " + "y" * 50_000)
"""


def test_sigkill_mid_write_never_tears_a_line(tmp_path: Path) -> None:
    rng = random.Random(8)
    old = [Message(Role.USER, "hello"), Message(Role.ASSISTANT, "hi")]
    torn = 0
    for first in range(0, ITERATIONS, BATCH):
        paths = [tmp_path / f"s{i}.jsonl" for i in range(first, first + BATCH)]
        for path in paths:
            path.write_text("".join(m.to_json() + "\n" for m in old))
        before = paths[0].read_bytes()
        _kill_writers(paths, rng)
        torn += sum(_check(path, before, old) for path in paths)
    # Timing decides how many kills land inside a write (a few in a hundred here); each is checked the same way.
    print(f"{torn} of {ITERATIONS} kills tore a line")


def _kill_writers(paths: list[Path], rng: random.Random) -> None:
    """Start a writer on each file, then SIGKILL each at a random moment while its turns are running."""
    root = Path(__file__).resolve().parents[2]
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(p)], cwd=root, stdout=subprocess.PIPE)
                for p in paths]
    for child in children:
        assert child.stdout is not None
        child.stdout.readline()  # imports done; turns are running now
    for child in children:
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(child.pid, signal.SIGKILL)
    for child in children:
        child.wait()
        assert child.stdout is not None
        child.stdout.close()


def _check(path: Path, before: bytes, old: list[Message]) -> bool:
    """The file is the old version plus whole lines (and maybe a torn tail the next writer cuts); was it torn?"""
    after = path.read_bytes()
    assert after.startswith(before), f"{path.name}: the old version was changed"
    whole = after[: after.rfind(b"\n") + 1]
    messages = read_session(path)  # raises SessionLogError on any bad line; a torn tail is not a message
    assert len(messages) == whole.count(b"\n"), f"{path.name}: a whole line was lost or shortened"
    assert messages[:2] == old
    # The next writer cuts the torn fragment instead of leaving it mid-file.
    agent().use(SessionLog, path=path).run(_answer).start("after the crash")
    healed = path.read_bytes()
    assert healed.startswith(whole) and healed.endswith(b"\n")
    assert [m.content for m in read_session(path)][-2:] == ["after the crash", "fine"]
    return len(after) > len(whole)


def _answer(env: dict[str, Any]) -> None:
    env["messages"].append(Message(Role.ASSISTANT, "fine"))
