"""The chat widget, driven from Python as a person would (type, click, wait), over a scripted model."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from brute_nb.message import role_of, unanswered_calls
from brute_nb.middleware.session_log import read_session
from brute_nb.notebook import widget as widget_module
from brute_nb.notebook.kernel import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.widget import ChatWidget, Coalescer
from brute_nb.providers.scripted import Scripted, call, reply

WAIT = 10.0


def gated(text: str, gate: threading.Event, entered: threading.Event | None = None) -> Any:
    """A reply the model gives only once ``gate`` is set (the test holds the model back)."""
    def fn(env: Any) -> str:
        if entered is not None:
            entered.set()
        gate.wait(WAIT)
        return text
    return fn


def users(nb: NotebookAgent) -> list[str]:
    return [m.content for m in read_session(nb.session_path) if role_of(m) == "user"]


@pytest.fixture
def chat(nb: NotebookAgent) -> ChatWidget:
    return ChatWidget(nb)


def model(nb: NotebookAgent) -> Scripted:
    assert isinstance(nb.provider, Scripted)
    return nb.provider


def test_send_button_runs_a_turn_and_renders_it(nb: NotebookAgent, chat: ChatWidget) -> None:
    model(nb).add(reply("Hello **there**", input_tokens=12, output_tokens=3))
    chat.input.value = "hi <b>me</b>"
    chat.send_button.click()
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    assert "hi &lt;b&gt;me&lt;/b&gt;" in html  # the prompt, escaped
    assert "<strong>there</strong>" in html  # assistant markdown rendered
    assert "brute-footer" in html
    assert "idle" in chat.status.value and "12 in / 3 out tokens" in chat.status.value
    assert chat.input.value == ""
    assert users(nb) == ["hi <b>me</b>"]


def test_handler_returns_before_the_model_replies(nb: NotebookAgent, chat: ChatWidget) -> None:
    gate, entered = threading.Event(), threading.Event()
    model(nb).add(gated("late", gate, entered))
    chat.send("go")  # returns at once: the kernel is free for other cells
    assert entered.wait(WAIT)
    assert not gate.is_set() and chat.running and not chat.wait_idle(0)
    assert "running" in chat.status.value and not chat.stop_button.disabled
    gate.set()
    assert chat.wait_idle(WAIT)
    assert "late" in chat.transcript_html


@pytest.mark.anyio
async def test_awaiting_idle_leaves_the_event_loop_free(nb: NotebookAgent, chat: ChatWidget) -> None:
    # The model is released by a task on this loop, which runs only if ``await chat.idle()`` does not block it
    # (as a notebook cell awaiting the panel must leave the kernel's loop free).
    gate, entered = threading.Event(), threading.Event()
    model(nb).add(gated("done", gate, entered))
    chat.send("go")
    assert entered.wait(WAIT)

    async def release() -> None:
        gate.set()

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(release)
            await chat.idle()
    assert chat.wait_idle(0) and "done" in chat.transcript_html


def test_messages_typed_meanwhile_are_sent_in_order(nb: NotebookAgent, chat: ChatWidget) -> None:
    gate, entered = threading.Event(), threading.Event()
    model(nb).add(gated("r1", gate, entered), "r2", "r3")
    chat.send("one")
    assert entered.wait(WAIT)
    chat.send("two")
    chat.send("three")
    assert list(chat.queue) == ["two", "three"]
    assert "2 queued" in chat._status_text(None)
    gate.set()
    assert chat.wait_idle(WAIT)
    assert users(nb) == ["one", "two", "three"]
    html = chat.transcript_html
    assert html.index("r1") < html.index("two") < html.index("r2") < html.index("three") < html.index("r3")


def test_stop_cancels_and_leaves_a_valid_session(nb: NotebookAgent, chat: ChatWidget, tools: dict[str, Any]) -> None:
    model(nb).add(reply("working", call("hang", {"text": "x"})))
    chat.send("long job")
    assert tools["hang"].started.wait(WAIT)
    chat.send("queued after")
    chat.stop()
    assert chat.wait_idle(WAIT)
    saved = read_session(nb.session_path)
    assert unanswered_calls(saved) == []
    assert saved[-1].meta.get("synthetic") is True
    assert "stopped" in chat.transcript_html and "interrupted" in chat.transcript_html
    assert chat.input.value == "queued after"  # nothing typed is lost
    # The session goes on.
    model(nb).add("back")
    chat.send("again")
    assert chat.wait_idle(WAIT)
    assert read_session(nb.session_path)[-1].content == "back"


def test_enter_at_the_end_sends_and_backslash_enter_is_a_newline(nb: NotebookAgent, chat: ChatWidget) -> None:
    model(nb).add("ok")
    chat.input.value = "line one\\"
    chat.input.value = "line one\\\n"  # \ then Enter
    assert chat.input.value == "line one\n" and not chat.running
    chat.input.value = "line one\nline two"
    chat.input.value = "line one\nline two\n"  # Enter at the end
    assert chat.wait_idle(WAIT)
    assert users(nb) == ["line one\nline two"]
    assert chat.input.value == ""


def test_tool_calls_show_as_blocks_with_approval_buttons(nb: NotebookAgent, chat: ChatWidget) -> None:
    model(nb).add(reply("", call("shell", {"text": "ls"})), reply("", call("shell", {"text": "pwd"})),
                  reply("", call("shell", {"text": "rm"})), "done")
    chat.send("do things")
    for choice in (chat.allow_button, chat.always_button):
        assert chat.approval_asked.wait(WAIT)
        assert "shell" in chat.approval_text.value and chat.approval_box.layout.display == "flex"
        choice.click()
    assert chat.wait_idle(WAIT)  # the third call was allowed by "Always allow" without asking
    tools_msgs = [m for m in read_session(nb.session_path) if role_of(m) == "tool"]
    assert [m.content for m in tools_msgs] == ["ran: ls", "ran: pwd", "ran: rm"]
    assert [m.meta["approval"] for m in tools_msgs] == [
        "allowed by user", "allowed by user (always)", "allowed by user (always)"]
    html = chat.transcript_html
    assert html.count('class="brute-tool"') == 3 and "allowed by user" in html
    assert chat.approval_box.layout.display == "none"


def test_deny_button(nb: NotebookAgent, chat: ChatWidget) -> None:
    model(nb).add(reply("", call("shell", {"text": "rm"})), "fine")
    chat.send("delete")
    assert chat.approval_asked.wait(WAIT)
    chat.deny_button.click()
    assert chat.wait_idle(WAIT)
    tool_msg = next(m for m in read_session(nb.session_path) if role_of(m) == "tool")
    assert tool_msg.content.startswith("Error: ApprovalDenied") and tool_msg.meta["approval"] == "denied by user"


def test_history_and_cell_turns_show_up(nb: NotebookAgent) -> None:
    model(nb).add("from before")
    nb.agent.start("earlier question")
    chat = ChatWidget(nb)
    assert "earlier question" in chat.transcript_html and "from before" in chat.transcript_html
    model(nb).add("from a cell", "from the widget")
    nb.agent.start("cell question")  # a %%brute cell between widget turns
    chat.send("widget question")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    assert html.index("from before") < html.index("cell question") < html.index("widget question")
    assert html.count("from before") == 1


def test_errors_are_shown_and_the_widget_goes_on(nb: NotebookAgent, chat: ChatWidget) -> None:
    chat.send("no reply scripted")
    assert chat.wait_idle(WAIT)
    assert "ScriptExhaustedError" in chat.transcript_html
    model(nb).add("ok now")
    chat.send("retry")
    assert chat.wait_idle(WAIT)
    assert "ok now" in chat.transcript_html


def test_model_text_cannot_inject_markup(nb: NotebookAgent, chat: ChatWidget) -> None:
    model(nb).add("<script>alert(1)</script>")
    chat.send("x")
    assert chat.wait_idle(WAIT)
    assert "<script>" not in chat.transcript_html


def test_coalescer_limits_writes_and_keeps_the_last() -> None:
    written: list[int] = []
    done = threading.Event()

    def write(v: int) -> None:
        written.append(v)
        if v == 99:
            done.set()

    c = Coalescer(write, rate=15)
    for i in range(100):
        c.push(i)
    assert done.wait(WAIT)  # the trailing write arrives without another push
    assert written[-1] == 99 and len(written) <= 3


def test_chat_entry_point_and_display(nb: NotebookAgent, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.notebook import registry as registry_module
    from brute_nb.notebook.settings import SettingsError

    reg = registry_module.Registry()
    monkeypatch.setattr(registry_module, "_registry", reg)
    monkeypatch.setattr(reg, "get", lambda name=None: nb)
    w = widget_module.chat("chat", approve="shell=allow", budget="tools=3")
    assert nb.settings.approve == {"shell": "allow"} and nb.settings.budget == {"tools": 3.0}
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    with pytest.raises(SettingsError, match="unknown option colour"):
        widget_module.chat("chat", colour="red")


def test_status_names_the_model_a_replayed_session_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No --model and no provider set by hand: the model comes from the cassette, and the status line says so.
    monkeypatch.delenv("BRUTE_MODEL", raising=False)
    cassette = tmp_path / "s.jsonl"
    cassette.write_text(json.dumps({"method": "POST", "path": "/v1/messages", "request": {"model": "claude-x"},
                                    "status": 200, "body": "{}"}) + "\n")
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(replay=cassette))
    assert "claude-x · idle" in ChatWidget(nb).status.value


def test_status_without_any_provider_still_renders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(key, raising=False)
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl")
    assert "default model · idle" in ChatWidget(nb).status.value
