"""The notebook front in a real kernel: outputs land in the cell, interrupts leave a valid session, restarts reload."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import html_of, on_screen, run
from kernel_helpers import kernel as start_kernel

from brute_nb.notebook.front import key_box

pytestmark = pytest.mark.kernel

SETUP = """
import brute_nb
from brute_nb.testing.scripted import Scripted, call, reply
brute_nb.configure(notebook="demo.ipynb", approve="shell=allow")
brute_nb.current().provider = Scripted([
    reply("Let me run it.", call("shell", {"command": "sleep 30"})),
    "Back after the interrupt: <b>not bold</b>",
])
"""


HEAVY_IMPORT_WATCH = """
import sys, threading
_heavy_on_main = []
class _WatchHeavy:
    def find_spec(self, name, path=None, target=None):
        if name in ('pandas','openai','anthropic','ipywidgets','anyio','filelock') \\
                and threading.current_thread() is threading.main_thread():
            _heavy_on_main.append(name)
        return None
sys.meta_path.insert(0, _WatchHeavy())
"""


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    with start_kernel(tmp_path) as (km, kc):
        yield km, kc


def test_interrupt_mid_tool_then_continue_and_reload(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    km, kc = kernel
    # %load_ext stays light on the thread the user waits on; the cell bridge imports anywidget (and with it anyio)
    # on a thread of its own meanwhile, so what is in sys.modules afterwards depends on timing, and the test asks
    # instead which thread imported each heavy package.
    reply, _ = run(kc, HEAVY_IMPORT_WATCH)
    assert reply["status"] == "ok"
    reply, _ = run(kc, "%load_ext brute_nb")
    assert reply["status"] == "ok"
    assert run(kc, "print(sorted(_heavy_on_main))")[1][0]["content"]["text"].strip() == "[]"
    assert run(kc, SETUP)[0]["status"] == "ok"

    started = time.monotonic()
    interrupted: list[float] = []

    def interrupt_when_tool_runs(msg: dict[str, Any]) -> None:
        html = on_screen(msg)
        if not interrupted and "running" in html and "shell" in html:
            interrupted.append(time.monotonic())
            km.interrupt_kernel()

    reply, outputs = run(kc, "%%brute\nrun the slow thing", on_output=interrupt_when_tool_runs)
    assert interrupted, "the tool block never showed as running"
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - started < 20  # the 30 s sleep was killed, not waited for
    assert "interrupted" in html_of(outputs)

    session = tmp_path / "demo.brute" / "default.jsonl"
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    assert [m["role"] for m in lines] == ["user", "assistant", "tool"]
    assert lines[2]["content"].startswith("Error: interrupted")

    reply, outputs = run(kc, "%%brute\nare you still there?")
    assert reply["status"] == "ok"
    texts = [o["content"]["data"].get("text/plain", "") for o in outputs if o["msg_type"] == "display_data"]
    assert any("Back after the interrupt" in t for t in texts)
    first = next(o["content"] for o in outputs if o["msg_type"] in ("display_data", "execute_result", "stream"))
    assert first.get("data", {}).get("text/plain"), "the cell starts with an empty output"  # no live view headless
    assert "<b>not bold</b>" not in html_of(outputs)  # model text never becomes raw HTML in our blocks

    # a kernel restart: the next %%brute loads the session file and continues
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=60)
    run(kc, "%load_ext brute_nb")
    code = ('import brute_nb\nfrom brute_nb.testing import Scripted\nbrute_nb.configure(notebook="demo.ipynb")\n'
            'fake = Scripted(["I remember."])\nbrute_nb.current().provider = fake')
    assert run(kc, code)[0]["status"] == "ok"
    assert run(kc, "%%brute --quiet\nwhat did we do?")[0]["status"] == "ok"
    _, out = run(kc, "print(len(fake.requests[0]['messages']))")
    assert int(out[0]["content"]["text"]) == 1 + 5 + 1  # system + the 5 saved messages + the new prompt


def test_bad_option_is_a_usage_error_and_empty_provider_says_what_to_set(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    run(kc, "%load_ext brute_nb")
    reply, _ = run(kc, "%%brute --max-iterations zero\nhi")
    assert reply["ename"] == "UsageError" and "--max-iterations" in reply["evalue"]
    reply, _ = run(kc, "import os\nfor k in ('ANTHROPIC_API_KEY','OPENAI_API_KEY','OLLAMA_HOST','BRUTE_MODEL'): "
                       "os.environ.pop(k, None)")
    reply, outputs = run(kc, "%%brute\nhi")
    # this client allows stdin, as a notebook front end does: the one short line, and the box to paste a key into
    assert reply["ename"] == "UsageError" and reply["evalue"] == key_box.IN_NOTEBOOK
    assert any("application/vnd.jupyter.widget-view+json" in o["content"].get("data", {}) for o in outputs)
