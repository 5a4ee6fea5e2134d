"""An approval asked in a cell shows at the tool's own place (issue 15, item 14): the transcript up to the tool is
published first, its row says "waiting for approval" and is brought up to date in place, the question follows it,
and the rest of the turn comes after the answer. The tool's duration leaves out the time the person took.

A real kernel whose client allows stdin and answers the ``input()`` request, as JupyterLab does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel, ok

from brute_nb.event_loop import run_sync
from brute_nb.message import role_of
from brute_nb.notebook.session import NotebookAgent
from brute_nb.sessions.file import read_session
from brute_nb.testing import API_KEY, FakeProvider, call, reply

ANSWER_AFTER = 1.5


def run_answering(kc: Any, code: str, answer: str, timeout: float = 90) -> list[dict[str, Any]]:
    """Execute ``code`` with stdin allowed, answer the one ``input()`` after ``ANSWER_AFTER`` s; the iopub messages."""
    msg_id = kc.execute(code, allow_stdin=True)
    request = kc.get_stdin_msg(timeout=timeout)
    assert request["msg_type"] == "input_request" and "Allow shell?" in request["content"]["prompt"]
    time.sleep(ANSWER_AFTER)
    kc.input(answer)
    outputs: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "update_display_data", "stream", "error"):
            outputs.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    reply_ = kc.get_shell_msg(timeout=timeout)
    assert reply_["content"]["status"] == "ok", reply_["content"]
    return outputs


def plain(msg: dict[str, Any]) -> str:
    content = msg["content"]
    return content.get("text") or content.get("data", {}).get("text/plain", "")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, FakeProvider, Path]]:
    folder = tmp_path_factory.mktemp("asking")
    with FakeProvider() as fake:
        env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(folder, **env) as (_, kc):
            ok(kc, "%load_ext brute_nb")
            yield kc, fake, folder


@pytest.mark.kernel
def test_the_question_shows_at_the_tools_place(bench: tuple[Any, FakeProvider, Path]) -> None:
    kc, fake, folder = bench
    fake.add(reply("Let me list the files.", call("shell", {"command": "echo listed"})), "Done: it printed listed.")
    outputs = run_answering(kc, "%%brute\nlist the files", "y")
    finals = [m for m in outputs if m["msg_type"] in ("display_data", "stream")]
    texts = [plain(m) for m in finals]
    first = next(i for i, t in enumerate(texts) if t.startswith("Let me list the files."))
    row = next(i for i, t in enumerate(texts) if t.startswith("[shell]"))
    question = next(i for i, t in enumerate(texts) if "brute wants to run shell(command=echo listed)" in t)
    last = next(i for i, t in enumerate(texts) if t.startswith("Done: it printed listed."))
    assert first < row < question < last, texts
    assert "waiting for approval" in texts[row]
    assert sum(t.startswith("[shell]") for t in texts) == 1 and sum("Let me list" in t for t in texts) == 1
    # the row is brought up to date in place: its last update says how it ended
    row_id = finals[row]["content"]["transient"]["display_id"]
    updates = [plain(m) for m in outputs
               if m["msg_type"] == "update_display_data" and m["content"]["transient"]["display_id"] == row_id]
    assert updates and "— ok" in updates[-1] and "listed" in updates[-1]
    # the time the person took is not the tool's
    [result] = [m for m in read_session(folder / "demo.brute" / "default.jsonl") if role_of(m) == "tool"]
    assert result.meta["approval"] == "allowed by user"
    assert result.meta["approval_wait_ms"] >= ANSWER_AFTER * 1000
    assert result.meta["duration_ms"] < ANSWER_AFTER * 1000


def test_waiting_for_an_answer_is_not_the_tools_duration(nb: NotebookAgent, fake: FakeProvider) -> None:
    def slow_person(c: Any, risk: str) -> str:
        time.sleep(0.8)
        return "allow"

    fake.add(reply("", call("shell", {"command": "echo hi"})), "done")
    env = run_sync(lambda: nb.aask("go", approval_asker=slow_person))
    [result] = [m for m in env["messages"] if role_of(m) == "tool"]
    assert result.meta["approval_wait_ms"] >= 800 and result.meta["duration_ms"] < 800


def test_the_widget_row_says_waiting_then_running(nb: NotebookAgent, fake: FakeProvider) -> None:
    from notebook_helpers import HOLD, WAIT, wait_for

    from brute_nb.notebook.front.widget import ChatWidget

    chat = ChatWidget(nb)
    fake.add(reply("", call("shell", {"command": HOLD})), "done")
    chat.send("go")
    assert chat.approval_asked.wait(WAIT)
    wait_for(lambda: "waiting for approval" in chat.transcript_html, "the row to say it waits")
    chat.allow_button.click()
    wait_for((nb.root / "entered").exists, "the shell tool to start")
    wait_for(lambda: "waiting for approval" not in chat.transcript_html, "the row to stop waiting")
    assert "running" in chat.transcript_html
    (nb.root / "gate").touch()
    assert chat.wait_idle(WAIT)
