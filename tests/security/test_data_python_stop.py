"""Issue 14 item 13: stopping a turn stops the python tool's code too, in a real kernel, or says plainly it cannot."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebook"))  # the shared real-kernel helpers
from kernel_helpers import html_of, on_screen, run, text_of, value_of
from kernel_helpers import kernel as start_kernel

pytestmark = pytest.mark.kernel

SETUP = """
import brute_nb
from brute_nb.testing.scripted import Scripted, call, reply
brute_nb.configure(notebook="demo.ipynb", approve="python=allow", tools="read,+python")
ticks = 0
brute_nb.current().provider = Scripted([reply("Counting.", call("python", {"code": CODE})), "ok", "ok"])
"""

STARTED = "started.mark"
"""The tool's code makes this file (in the kernel's folder) as its first act, so the test interrupts code that runs."""
COUNTING = ("import time\nfor i in range(600):\n    ticks += 1\n    if i == 0:\n"
            f"        open({STARTED!r}, 'w').close()\n    time.sleep(0.05)\n")
BLOCKED = f"open({STARTED!r}, 'w').close()\nimport time\ntime.sleep(6)\nticks = -1\n"


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[tuple[Any, Any, Path]]:
    with start_kernel(tmp_path) as (km, kc):
        yield km, kc, tmp_path


def interrupt_when_python_runs(km: Any, folder: Path) -> tuple[list[bool], Any]:
    """Interrupt once the tool shows as running and its code has started (its marker file exists)."""
    done: list[bool] = []

    def on_output(msg: dict[str, Any]) -> None:
        html = on_screen(msg)
        if not done and "running" in html and "python" in html:
            done.append(True)
            deadline = time.monotonic() + 30
            while not (folder / STARTED).exists():
                assert time.monotonic() < deadline, "the python tool showed as running but its code never started"
                time.sleep(0.01)
            km.interrupt_kernel()

    return done, on_output


def test_an_interrupt_stops_the_python_tools_code(kernel: tuple[Any, Any, Path]) -> None:
    km, kc, folder = kernel
    assert run(kc, "%load_ext brute_nb")[0]["status"] == "ok"
    assert run(kc, f"CODE = {COUNTING!r}\n" + SETUP)[0]["status"] == "ok"
    interrupted, on_output = interrupt_when_python_runs(km, folder)
    reply, outputs = run(kc, "%%brute\ncount for a while", on_output=on_output)
    assert interrupted, "the python tool never showed as running"
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert "interrupted" in html_of(outputs)
    first = value_of(kc, "ticks")
    time.sleep(1.5)
    assert value_of(kc, "ticks") == first, "the tool's loop kept running after the cell said it stopped"
    assert 0 < first < 600
    assert "still running" not in text_of(outputs)


def test_code_blocked_in_c_is_reported_as_still_running(kernel: tuple[Any, Any, Path]) -> None:
    km, kc, folder = kernel
    assert run(kc, "%load_ext brute_nb")[0]["status"] == "ok"
    assert run(kc, f"CODE = {BLOCKED!r}\n" + SETUP)[0]["status"] == "ok"
    interrupted, on_output = interrupt_when_python_runs(km, folder)
    reply, outputs = run(kc, "%%brute\nwait", on_output=on_output)
    assert interrupted and reply["status"] == "error"
    said = text_of(outputs)
    assert "still running in a kernel thread" in said and "restart the kernel" in said
    time.sleep(6)
    assert value_of(kc, "ticks") == 0  # it did stop, at its next Python line, before the assignment
