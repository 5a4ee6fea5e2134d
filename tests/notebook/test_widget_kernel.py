"""The chat widget and approvals in a real kernel: the kernel stays responsive while a widget turn runs, ``ask``
is answered through the kernel's stdin in a ``%%brute`` cell, and becomes ``deny`` when nbclient runs headless.

The model is the FakeProvider server started inside the kernel, reached through the real ``openai`` SDK; tools
are the real default ones. One kernel serves the module (each test uses its own notebook name, so its own
session folder); the headless test runs a notebook under nbclient, as nbval and papermill do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel
from notebook_helpers import wait_for

pytestmark = pytest.mark.kernel

WORKTREE = str(Path(__file__).resolve().parents[2])
"""Kernels import this checkout of brute_nb, not whatever the venv has installed."""

PROVIDER = """
import brute_nb
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider, call, reply
fake = FakeProvider().start()
brute_nb.configure(notebook={notebook!r}, approve={approve!r})
brute_nb.current().provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key,
                                         max_retries=0)
"""

HOLD = "touch w_entered && while [ ! -e w_gate ]; do sleep 0.02; done && echo released"


def kernel_env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": WORKTREE + (os.pathsep + path if path else "")}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kernel")


@pytest.fixture(scope="module")
def kc(workdir: Path) -> Iterator[Any]:
    km, client = start_new_kernel(kernel_name="python3", cwd=str(workdir), env=kernel_env())
    try:
        assert run(client, "%load_ext brute_nb")[0]["status"] == "ok"
        assert text_of(run(client, "import brute_nb; print(brute_nb.__file__)")[1]).startswith(WORKTREE)
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc: Any, code: str, *, answers: tuple[str, ...] = (),
        prompts: list[str] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Execute a cell; with ``answers``, stdin is allowed and each ``input()`` gets the next answer."""
    outputs: list[dict[str, Any]] = []
    pending = list(answers)

    def on_output(msg: dict[str, Any]) -> None:
        if msg["msg_type"] in ("display_data", "execute_result", "stream", "error"):
            outputs.append(msg)
        elif msg["msg_type"] == "update_display_data":  # what JupyterLab and nbclient store: the output, updated
            display_id = msg["content"].get("transient", {}).get("display_id")
            for shown in outputs:
                if shown["content"].get("transient", {}).get("display_id") == display_id:
                    shown["content"] = {**shown["content"], "data": msg["content"]["data"]}

    def on_input(msg: dict[str, Any]) -> None:
        if prompts is not None:
            prompts.append(msg["content"]["prompt"])
        kc.input(pending.pop(0) if pending else "")

    reply = kc.execute_interactive(code, allow_stdin=bool(answers), stdin_hook=on_input, output_hook=on_output,
                                   timeout=120)
    asked = len(answers) - len(pending)
    assert not pending, (f"the kernel asked for input {asked} times, expected {len(answers)}; the cell showed: "
                         f"{text_of(outputs)}{html_of(outputs)[-2000:]}")
    return reply["content"], outputs


def text_of(outputs: list[dict[str, Any]]) -> str:
    return "".join(o["content"].get("text", "") for o in outputs if o["msg_type"] == "stream")


def html_of(outputs: list[dict[str, Any]]) -> str:
    return "".join(o["content"].get("data", {}).get("text/html", "") for o in outputs
                   if o["msg_type"] == "display_data")


def session(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def ok(kc: Any, code: str) -> str:
    reply, outputs = run(kc, code)
    assert reply["status"] == "ok", reply
    return text_of(outputs)


def test_widget_turn_leaves_the_kernel_responsive(kc: Any, workdir: Path) -> None:
    ok(kc, PROVIDER.format(notebook="widget.ipynb", approve="shell=allow")
       + f'fake.add(reply("Checking.", call("shell", {{"command": {HOLD!r}}})), "The widget reply")\n'
       + "w = %brute widget\ndisplay(w)")
    # The Send path a click takes; the handler returns at once, with the turn running in the background.
    assert ok(kc, 'w.input.value = "hello from the widget"\nw.send_button.click()\nprint(w.running)') == "True\n"
    wait_for((workdir / "w_entered").exists, "the widget's shell tool to start")
    # Another cell runs to completion while the turn is held in its tool call.
    assert ok(kc, "print(6 * 7, w.running)") == "42 True\n"
    (workdir / "w_gate").touch()
    assert ok(kc, "print(w.wait_idle(60), w.running)") == "True False\n"
    shown = ok(kc, 'html = w.transcript_html\nprint("The widget reply" in html, "hello from the widget" in html, '
                   '"released" in html, html.count("brute-tool"))')
    assert shown == "True True True 1\n"
    saved = session(workdir / "widget.brute" / "default.jsonl")
    assert [m["role"] for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved[0]["content"] == "hello from the widget" and saved[-1]["content"] == "The widget reply"
    assert saved[2]["content"].strip() == "released"


@pytest.mark.parametrize(("answer", "decision"), [("y", "allowed by user"), ("n", "denied by user")])
def test_ask_in_a_cell_reads_the_answer_from_stdin(kc: Any, workdir: Path, answer: str, decision: str) -> None:
    name = f"ask_{answer}"
    ok(kc, PROVIDER.format(notebook=f"{name}.ipynb", approve="shell=ask")
       + f'fake.add(reply("", call("shell", {{"command": "touch {name}_ran"}})), "Finished.")')
    prompts: list[str] = []
    reply, outputs = run(kc, "%%brute\nmake the file", answers=(answer,), prompts=prompts)
    assert reply["status"] == "ok", reply
    assert len(prompts) == 1 and "[y]es" in prompts[0]
    assert f"shell(command=touch {name}_ran)" in text_of(outputs)  # the whole call, printed above the prompt
    assert (workdir / f"{name}_ran").exists() is (answer == "y")
    html = html_of(outputs)
    assert f"approval: {decision}" in html
    saved = session(workdir / f"{name}.brute" / "default.jsonl")
    tool = next(m for m in saved if m["role"] == "tool")
    assert tool["meta"]["approval"] == decision
    assert tool["content"].startswith("Error: ApprovalDenied") is (answer == "n")
    assert saved[-1]["content"] == "Finished."


def test_headless_run_turns_ask_into_deny(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    folder = workdir / "headless"
    folder.mkdir()
    cells = [
        "%load_ext brute_nb\n" + PROVIDER.format(notebook="headless.ipynb", approve="shell=ask")
        + 'fake.add(reply("", call("shell", {"command": "touch headless_ran"})), "I could not run it.")',
        "%%brute\nmake the file",
        'print(fake.requests[-1]["json"]["messages"][-1]["content"])',
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    monkeypatch.setenv("PYTHONPATH", kernel_env()["PYTHONPATH"])
    client = NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(folder)}})
    client.execute()  # allow_stdin is False, as under nbval and papermill
    brute_html = "".join(o.get("data", {}).get("text/html", "") for o in notebook.cells[1].outputs)
    assert "denied" in brute_html and "approval: denied: no one can answer (no stdin)" in brute_html
    told = notebook.cells[2].outputs[0]["text"]  # what the model read as the call's result
    assert told.startswith("Error: ApprovalDenied") and "%%brute --approve shell=allow" in told
    assert not (folder / "headless_ran").exists()
    saved = session(folder / "headless.brute" / "default.jsonl")
    tool = next(m for m in saved if m["role"] == "tool")
    assert tool["meta"]["approval"] == "denied: no one can answer (no stdin)"
    assert saved[-1]["content"] == "I could not run it."


def test_python_tool_sees_the_user_namespace_after_always_allow(kc: Any, workdir: Path) -> None:
    ok(kc, PROVIDER.format(notebook="python.ipynb", approve="python=ask") + "secret = 41\n"
       + 'fake.add(reply("", call("python", {"code": "secret + 1"})), '
         'reply("", call("python", {"code": "print(secret)\\n1 / 0"})), "Done.")')
    prompts: list[str] = []
    reply, outputs = run(kc, "%%brute --tools +python\nlook at my variable", answers=("a",), prompts=prompts)
    assert reply["status"] == "ok", reply
    assert len(prompts) == 1 and "python(code=secret + 1)" in text_of(outputs)  # "always" covers the second
    saved = session(workdir / "python.brute" / "default.jsonl")
    tools = [m for m in saved if m["role"] == "tool"]
    assert tools[0]["content"] == "Out: 42"
    assert tools[1]["content"].startswith("Error: ZeroDivisionError") and "stdout:\n41" in tools[1]["content"]
    assert [t["meta"]["approval"] for t in tools] == ["allowed by user (always)"] * 2
    assert "approval: allowed by user (always)" in html_of(outputs)
