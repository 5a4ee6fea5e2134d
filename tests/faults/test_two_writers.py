"""Two OS processes (as two kernels would be) on one session file: whole turns never interleave, and a second
writer that cannot get the file lock in time fails with a ``SessionLockedError`` naming the file and the way out.

The children run from the repository root (``python -c``), so they import this checkout's ``brute_nb``. The
processes synchronise through marker files, never through sleeps: the test only waits for a marker to appear.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from brute_nb.sessions.file import read_session

ROOT = Path(__file__).resolve().parents[2]
TURNS = 20

HOLDER = """
import sys, time
from pathlib import Path
from brute_nb import agent
from brute_nb.middleware import SessionLog

path, held, release = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])

def answer(env):
    held.touch()  # the file lock is ours now; hold it until the test says so
    deadline = time.monotonic() + 120
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    env["messages"].assistant("reply A")

agent().use(SessionLog, path=path).run(answer).start("prompt A")
"""

SECOND = """
import json, sys
from brute_nb import SessionLockedError, agent
from brute_nb.middleware import SessionLog

def answer(env):
    env["messages"].assistant(f"reply B after {len(env['messages']) - 1} messages of history")

try:
    agent().use(SessionLog, path=sys.argv[1], lock_timeout=float(sys.argv[2])).run(answer).start("prompt B")
except SessionLockedError as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
    sys.exit(3)
print(json.dumps({"error": None}))
"""

HAMMER = """
import sys, time
from pathlib import Path
import anyio
from brute_nb import agent
from brute_nb.middleware import SessionLog

name, turns, go = sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])

async def answer(env):
    # Three lines per turn with yields between them: without the lock the two processes' lines would interleave.
    prompt = env["messages"][-1].content
    for part in ("a", "b"):
        await anyio.sleep(0.002)  # pacing, so the two processes overlap
        env["messages"].assistant(f"{prompt} {part} " + "z" * 20_000)

bot = agent().use(SessionLog, path=sys.argv[1], lock_timeout=120).run(answer)
go.with_name("ready-" + name).touch()  # imports done: start together, so the first turns contend for the lock
while not go.exists():
    time.sleep(0.01)
for i in range(turns):
    bot.start(f"{name}{i}")
"""


def spawn(code: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(child: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = child.communicate(timeout=120)
    assert child.returncode in (0, 3), err
    return child.returncode, out


def wait_for(marker: Path, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, child.communicate()[1]
        assert time.monotonic() < deadline, f"{marker.name} never appeared"
        time.sleep(0.01)


def test_a_second_process_gets_a_clear_error_while_the_first_holds_the_session(tmp_path: Path) -> None:
    path, held, release = tmp_path / "shared.jsonl", tmp_path / "held", tmp_path / "release"
    holder = spawn(HOLDER, path, held, release)
    try:
        wait_for(held, holder)
        code, out = finish(spawn(SECOND, path, 0.3))
    finally:
        release.touch()
    assert finish(holder)[0] == 0
    assert code == 3
    report = json.loads(out)
    assert report["error"] == "SessionLockedError"
    assert str(path) in report["message"]  # names the file ...
    assert "wait for that turn to finish" in report["message"]  # ... and what to do
    assert "another session" in report["message"]
    assert [m.content for m in read_session(path)] == ["prompt A", "reply A"]  # the refused turn wrote nothing

    assert finish(spawn(SECOND, path, 5))[0] == 0  # once the first turn ended, the second process takes its turn
    assert [m.content for m in read_session(path)] == [
        "prompt A", "reply A", "prompt B", "reply B after 2 messages of history"]


def test_two_processes_taking_turns_on_one_file_never_interleave(tmp_path: Path) -> None:
    path, go = tmp_path / "shared.jsonl", tmp_path / "go"
    children = [spawn(HAMMER, path, name, TURNS, go) for name in ("p", "q")]
    for name, child in zip("pq", children, strict=True):
        wait_for(tmp_path / f"ready-{name}", child)
    go.touch()
    for child in children:
        assert finish(child)[0] == 0
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 2 * TURNS * 3
    contents = [m.content for m in read_session(path)]  # every line parses: none torn or joined
    turns = [contents[i:i + 3] for i in range(0, len(contents), 3)]
    for turn in turns:
        prompt = turn[0]
        assert [line[: len(prompt) + 2] for line in turn[1:]] == [f"{prompt} a", f"{prompt} b"], turn[0]
    prompts = [t[0] for t in turns]
    assert sorted(prompts) == sorted(f"{n}{i}" for n in "pq" for i in range(TURNS))
    for name in "pq":
        mine = [p for p in prompts if p[0] == name]
        assert mine == [f"{name}{i}" for i in range(TURNS)]
