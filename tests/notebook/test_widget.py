"""The chat widget, driven from Python as a person would (type, click Send, wait for idle), over the real default
stack (real tool pipeline, real tools) and the strict fake provider server reached through the real SDK."""

from __future__ import annotations

import ast
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from notebook_helpers import HOLD, WAIT, wait_for

from brute_nb.errors import CassetteMismatchError
from brute_nb.message import INTERRUPTED_RESULT, role_of, unanswered_calls
from brute_nb.notebook.front import widget as widget_module
from brute_nb.notebook.front.widget import ChatWidget
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.views import render
from brute_nb.notebook.views.coalesce import Coalescer
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.transcript import proposed
from brute_nb.notebook.views.transcript_html import markdown_html
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, reply, slow

VIEW = "application/vnd.jupyter.widget-view+json"


def users(nb: NotebookAgent) -> list[str]:
    return [m.content for m in read_session(nb.session_path) if role_of(m) == "user"]


def sent_prompts(fake: FakeProvider) -> list[str]:
    """The last user message of each request the fake server received."""
    return [[m for m in r["json"]["messages"] if m["role"] == "user"][-1]["content"] for r in fake.requests]


def tokens(nb: NotebookAgent) -> tuple[int, int]:
    meta = [m.meta for m in read_session(nb.session_path) if role_of(m) == "assistant"]
    return sum(m["input_tokens"] for m in meta), sum(m["output_tokens"] for m in meta)


def click_send(chat: ChatWidget, text: str) -> None:
    chat.input.value = text
    chat.send_button.click()


@pytest.fixture
def chat(nb: NotebookAgent) -> ChatWidget:
    return ChatWidget(nb)


@pytest.fixture
def shell_allowed(nb: NotebookAgent) -> None:
    nb.configure(approve={"shell": "allow"})


def test_send_button_runs_a_turn_and_renders_it(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add("Hello **there**")
    click_send(chat, "hi <b>me</b>")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    assert "hi &lt;b&gt;me&lt;/b&gt;" in html  # the prompt, escaped
    assert "<strong>there</strong>" in html  # assistant markdown rendered
    assert "brute-footer" in html
    assert chat.input.value == ""
    assert users(nb) == ["hi <b>me</b>"] and sent_prompts(fake) == ["hi <b>me</b>"]


def test_footer_says_replayed_when_the_model_is_a_cassette(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add("from the tape")
    monkeypatch.setattr(type(nb), "replayed", property(lambda self: True))  # what a cassette replay reports
    click_send(chat, "hi")
    assert chat.wait_idle(WAIT)
    assert "replayed" in chat.transcript_html.split("brute-footer")[-1]


def test_transcript_renders_like_the_cell(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, shell_allowed: None
) -> None:
    fake.add(
        reply("Let me *look*.", call("shell", {"command": "echo hi"}), call("read", {"file_path": "missing.txt"})),
        "Done: `hi`.",
    )
    click_send(chat, "look around")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    # What a %%brute cell publishes for the same messages, built by the cell's own view.
    published: list[dict[str, str]] = []
    cell = CellView(publish=lambda bundle, *a, **k: published.append(dict(bundle)), update=lambda *a, **k: None)
    cell.model.messages = list(read_session(nb.session_path))
    cell.finish()
    blocks = [b["text/html"] for b in published if "brute-tool" in b.get("text/html", "")]
    texts = [b["text/plain"] for b in published if "brute-text" in b.get("text/html", "")]
    assert len(blocks) == 2 and texts == ["Let me *look*.", "Done: `hi`."]
    for block in blocks:
        assert block in html  # the same collapsible block, byte for byte
    for text in texts:
        assert markdown_html(text) in html
    assert html.count('<details class="brute-tool">') == 2  # collapsed until clicked
    assert html.index("Let me") < html.index("echo hi") < html.index("missing.txt") < html.index("Done")
    assert "error" in blocks[1] and "ok" in blocks[0]


def test_status_line_running_then_idle(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, shell_allowed: None
) -> None:
    root = nb.root
    fake.add(reply("", call("shell", {"command": HOLD})), "all done")
    chat.send("go")  # returns at once: the kernel is free for other cells
    wait_for((root / "entered").exists, "the shell tool to start")
    assert chat.running and not chat.wait_idle(0)
    status = chat.status_html
    assert "gpt-fake" in status and "running" in status and "1 tool call" in status
    assert not chat.stop_button.disabled
    (root / "gate").touch()
    assert chat.wait_idle(WAIT)
    inp, out = tokens(nb)
    status = chat.status_html
    assert "idle" in status and f"{inp:,} in / {out:,} out tokens" in status and "1 tool call" in status
    assert inp > 0 and chat.stop_button.disabled
    assert "released" in chat.transcript_html


def test_messages_typed_meanwhile_are_sent_in_order(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, shell_allowed: None
) -> None:
    fake.add(reply("", call("shell", {"command": HOLD})), "r1", "r2", "r3")
    click_send(chat, "one")
    wait_for((nb.root / "entered").exists, "the shell tool to start")
    click_send(chat, "two")
    click_send(chat, "three")
    assert list(chat.queue) == ["two", "three"]
    assert "2 queued" in chat.status_html
    (nb.root / "gate").touch()
    assert chat.wait_idle(WAIT)
    assert users(nb) == ["one", "two", "three"]
    assert sent_prompts(fake) == ["one", "one", "two", "three"]  # "one" twice: before and after its tool call
    html = chat.transcript_html
    assert html.index("r1") < html.index("two") < html.index("r2") < html.index("three") < html.index("r3")


def test_stop_cancels_cleanly_and_the_next_turn_is_accepted(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, shell_allowed: None
) -> None:
    fake.add(reply("working", call("shell", {"command": "touch entered; sleep 30; touch finished"})))
    chat.send("long job")
    wait_for((nb.root / "entered").exists, "the shell tool to start")
    chat.send("queued after")
    chat.stop_button.click()
    assert chat.wait_idle(WAIT)
    saved = read_session(nb.session_path)
    assert [role_of(m) for m in saved] == ["user", "assistant", "tool"]
    assert unanswered_calls(saved) == [] and saved[-1].content == INTERRUPTED_RESULT
    html = chat.transcript_html
    assert "stopped: the turn was cancelled" in html
    assert f"<span style=\"{render.STATUS_STYLE['interrupted']}\">interrupted</span>" in html  # not "error"
    assert chat.input.value == "queued after"  # nothing typed is lost
    assert not (nb.root / "finished").exists()  # the command was killed, not waited for
    # The strict server accepts the next request (it refuses a call without its result).
    fake.add("back")
    chat.send("again")
    assert chat.wait_idle(WAIT)
    assert read_session(nb.session_path)[-1].content == "back"
    assert len(fake.requests) == 2 and "back" in chat.transcript_html


def test_stop_while_asking_for_approval(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add(reply("", call("shell", {"command": "touch ran"})))
    chat.send("do it")
    assert chat.approval_asked.wait(WAIT)
    chat.stop()
    assert chat.wait_idle(WAIT)
    assert chat.approval_box.layout.display == "none"
    saved = read_session(nb.session_path)
    assert unanswered_calls(saved) == [] and not (nb.root / "ran").exists()
    chat.allow_button.click()  # a late click answers nothing
    fake.add("ok")
    chat.send("next")
    assert chat.wait_idle(WAIT)
    assert read_session(nb.session_path)[-1].content == "ok"


def test_stop_mid_stream_keeps_the_reply_so_far_on_screen_and_in_the_session(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider
) -> None:
    """Issue 28 §3 through the widget's Stop: what streamed stays in the transcript and becomes the assistant's
    reply, marked interrupted, so the next request holds no two user turns in a row."""
    words = " ".join(f"word{i}" for i in range(100))
    fake.add(slow(words, delay=0.1))  # about ten seconds, stopped after a few words
    chat.send("tell me a long story")
    wait_for(lambda: "word3 " in chat.transcript_html, "the reply to start streaming")
    chat.stop_button.click()
    assert chat.wait_idle(WAIT)
    saved = read_session(nb.session_path)
    assert [role_of(m) for m in saved] == ["user", "assistant"]
    partial = saved[1]
    assert partial.content.startswith("word0 word1 word2 word3") and "word99" not in partial.content
    assert partial.meta["interrupted"] is True and partial.finish_reason == "interrupted"
    html = chat.transcript_html
    assert "word3" in html and "word99" not in html and "stopped: the turn was cancelled" in html
    assert html.count("word1 ") == 1  # kept once: the finished turn replaced the live text, it did not add to it

    fake.add("Carrying on.")
    chat.send("go on")
    assert chat.wait_idle(WAIT)
    sent = [m for m in fake.requests[-1]["json"]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert str(sent[1]["content"]).startswith("word0") and "Carrying on." in chat.transcript_html


def from_browser(chat: ChatWidget, data: dict[str, Any]) -> None:
    """A comm message from the input box's front-end, handled as ipywidgets handles one from the browser."""
    chat.input._handle_msg({"content": {"data": data}, "buffers": []})


def type_into_box(chat: ChatWidget, text: str) -> None:
    """What the ES module sends on each ``input`` event: the box's whole text as a state update."""
    from_browser(chat, {"method": "update", "state": {"value": text}, "buffer_paths": []})


def press_enter(chat: ChatWidget, **content: Any) -> None:
    """What the ES module sends on Enter without Shift: the cleared box, then the submit message with the text."""
    text = chat.input.value
    type_into_box(chat, "")
    from_browser(chat, {"method": "custom", "content": {"type": "submit", "value": text, **content}})


def test_enter_sends_the_text_with_its_newlines(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add("ok")
    type_into_box(chat, "line one")
    type_into_box(chat, "line one\n")  # Shift+Enter: a newline in the box, nothing sent
    type_into_box(chat, "line one\n\nline two\n")  # even one at the end (the old "Enter at the end" rule is gone)
    assert not chat.running and fake.requests == []
    press_enter(chat)
    assert chat.wait_idle(WAIT)
    assert users(nb) == ["line one\n\nline two"] and sent_prompts(fake) == ["line one\n\nline two"]
    assert chat.input.value == ""
    assert "line one\n\nline two" in chat.transcript_html  # one user block, shown with its line breaks
    assert chat.transcript_html.count('class="brute-user"') == 1


def test_enter_while_a_turn_runs_queues(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, shell_allowed: None
) -> None:
    fake.add(reply("", call("shell", {"command": HOLD})), "r1", "r2")
    type_into_box(chat, "first")
    press_enter(chat)
    wait_for((nb.root / "entered").exists, "the shell tool to start")
    type_into_box(chat, "second\nwith two lines")
    press_enter(chat)
    assert list(chat.queue) == ["second\nwith two lines"] and chat.input.value == ""
    (nb.root / "gate").touch()
    assert chat.wait_idle(WAIT)
    assert users(nb) == ["first", "second\nwith two lines"]


def test_submit_messages_that_send_nothing(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    type_into_box(chat, "  \n ")
    press_enter(chat)  # only blanks
    from_browser(chat, {"method": "custom", "content": {"type": "something else", "value": "hi"}})
    chat.input.disabled = True
    type_into_box(chat, "not now")
    from_browser(chat, {"method": "custom", "content": {"type": "submit", "value": "not now"}})
    assert chat.input.value == "not now"  # a disabled box keeps its text and sends nothing
    assert chat.wait_idle(0) and fake.requests == [] and users(nb) == []


def test_submit_without_a_value_sends_the_synced_text(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add("ok")
    type_into_box(chat, "from the trait\nsecond line")
    from_browser(chat, {"method": "custom", "content": {"type": "submit"}})
    assert chat.wait_idle(WAIT)
    assert users(nb) == ["from the trait\nsecond line"] and chat.input.value == ""


def test_input_box_front_end(chat: ChatWidget) -> None:
    from brute_nb.notebook.views.chat_input import PLACEHOLDER

    box = chat.input
    assert box.placeholder == PLACEHOLDER == "Message the agent (Enter sends, Shift+Enter for a new line)"
    state = box.get_state()
    assert state["_model_module"] == "anywidget" and "export default" in state["_esm"]
    assert 'model.send({ type: "submit", value: text })' in state["_esm"]
    assert "event.isComposing" in state["_esm"] and "if (event.shiftKey)" in state["_esm"]  # IME, new line
    assert "--jp-border-color1" in state["_css"]


def test_allow_then_always_allow_a_real_shell_call(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add(*(reply("", call("shell", {"command": f"echo {word}"})) for word in ("one", "two", "three")), "done")
    chat.send("do things")
    for button in (chat.allow_button, chat.always_button):
        assert chat.approval_asked.wait(WAIT)
        assert "shell" in chat.approval_text.value and chat.approval_box.layout.display == "flex"
        button.click()
    assert chat.wait_idle(WAIT)  # the third call was allowed by "Always allow" without asking
    tool_msgs = [m for m in read_session(nb.session_path) if role_of(m) == "tool"]
    assert [m.content.strip() for m in tool_msgs] == ["one", "two", "three"]
    assert [m.meta["approval"] for m in tool_msgs] == [
        "allowed by user",
        "allowed by user (always)",
        "allowed by user (always)",
    ]
    html = chat.transcript_html
    assert html.count('class="brute-tool"') == 3 and "approval: allowed by user (always)" in html
    assert chat.approval_box.layout.display == "none"


def test_deny_button(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add(reply("", call("shell", {"command": "touch ran"})), "fine")
    chat.send("make a file")
    assert chat.approval_asked.wait(WAIT)
    chat.deny_button.click()
    assert chat.wait_idle(WAIT)
    assert not (nb.root / "ran").exists()
    tool_msg = next(m for m in read_session(nb.session_path) if role_of(m) == "tool")
    assert tool_msg.content.startswith("Error: ApprovalDenied") and tool_msg.meta["approval"] == "denied by user"
    sent = fake.requests[-1]["json"]["messages"][-1]
    assert sent["role"] == "tool" and sent["content"].startswith("Error: ApprovalDenied")  # the model is told
    html = chat.transcript_html
    assert "denied" in html and "approval: denied by user" in html


def test_history_and_cell_turns_show_up(nb: NotebookAgent, fake: FakeProvider) -> None:
    fake.add("from before")
    nb.ask("earlier question", display=False)
    chat = ChatWidget(nb)
    assert "earlier question" in chat.transcript_html and "from before" in chat.transcript_html
    fake.add("from a cell", "from the widget")
    nb.ask("cell question", display=False)  # a %%brute cell between widget turns
    chat.send("widget question")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    assert html.index("from before") < html.index("cell question") < html.index("widget question")
    assert html.count("from before") == 1
    footers = html.count('class="brute-footer"')
    assert footers == 3, html  # history and the cell's turn have their footers too, as the cells showed them
    first = html[html.index("from before"):html.index("cell question")]
    assert "in /" in first and "0 tool calls" in first


def test_a_new_panel_after_the_session_file_was_deleted_starts_where_the_session_is(
    nb: NotebookAgent, fake: FakeProvider
) -> None:
    """A demo's second Run All deletes its session folder, then opens a new panel (issue 41 item 2, issue 39 Also):
    the panel showed the first run's turns (the agent's last turn, kept in the kernel), then the same turns again as
    the second run replayed them."""
    fake.add("first run reply", "second run reply")
    nb.ask("the demo prompt", display=False)
    nb.session_path.unlink()  # what the demos' setup cell does to ``<notebook>.brute/``

    chat = ChatWidget(nb)
    assert "the demo prompt" not in chat.transcript_html  # the session starts afresh, as the next turn will
    assert list(nb.log) == [] and len(nb.df) == 0  # what brute_nb.current() shows agrees
    chat.send("the demo prompt")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    assert html.count("the demo prompt") == 1 and "first run reply" not in html and "second run reply" in html


def test_errors_are_shown_and_the_widget_goes_on(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    chat.send("no reply scripted")  # the fake server answers 500
    assert chat.wait_idle(WAIT)
    assert "ProviderError" in chat.transcript_html and "idle" in chat.status_html
    fake.add("ok now")
    chat.send("retry")
    assert chat.wait_idle(WAIT)
    assert "ok now" in chat.transcript_html


def test_model_text_cannot_inject_markup(chat: ChatWidget, fake: FakeProvider) -> None:
    fake.add("<script>alert(1)</script>")
    chat.send("x")
    assert chat.wait_idle(WAIT)
    assert "<script>" not in chat.transcript_html


def test_the_widget_holds_no_agent_logic(nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider) -> None:
    # Every turn is the kernel agent's own turn ...
    turns: list[tuple[str, Any]] = []
    run_turn = nb.aask

    async def recording(prompt: str, **extra: Any) -> Any:
        turns.append((prompt, extra))
        return await run_turn(prompt, **extra)

    nb.aask = recording  # type: ignore[method-assign]
    fake.add("one")
    chat.send("hello")
    assert chat.wait_idle(WAIT)
    assert turns == [("hello", {"approval_asker": chat._ask_approval, "insert_cell": proposed})]
    # ... and the module imports no stack, middleware, tool or provider: it is a view over the agent's events.
    tree = ast.parse(Path(widget_module.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    ours = {m for m in imported if m.startswith("brute_nb")}
    assert ours <= {
        "brute_nb.cost",
        "brute_nb.errors",
        "brute_nb.message",
        "brute_nb.event_loop",
        "brute_nb.notebook",
        "brute_nb.notebook.views",
        "brute_nb.notebook.views.render",
        "brute_nb.notebook.views.tool_row",  # a tool row's model, and the HTML form the panel shows it in
        "brute_nb.notebook.views.tool_html",
        "brute_nb.notebook.views.live",  # the live display's HTML while a turn streams
        "brute_nb.notebook.views.chat_input",
        "brute_nb.notebook.views.transcript_html",
        "brute_nb.notebook.views.chat_static",
        "brute_nb.notebook.views.coalesce",
        "brute_nb.notebook.views.turn_model",
        "brute_nb.notebook.session",
        "brute_nb.notebook.registry",
        "brute_nb.notebook.settings",
        "brute_nb.notebook.views.thumbnails",
        "brute_nb.notebook.views.transcript",
        "brute_nb.notebook.views.short_errors",
        "brute_nb.notebook.front.side",  # where the panel is shown: a sidecar's outputs
        "brute_nb.notebook.views.key_entry",  # the box for a key when there is none: it sets a key, runs no turn
    }, ours


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
    from brute_nb.errors import SettingsError
    from brute_nb.notebook import registry as registry_module

    reg = registry_module.Registry()
    monkeypatch.setattr(registry_module, "_registry", reg)
    monkeypatch.setattr(reg, "get", lambda name=None: nb)
    w = widget_module.chat("chat", approve="shell=allow", budget="tools=3")
    assert nb.settings.approve == {"shell": "allow"} and nb.settings.budget == {"tools": 3.0}
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    with pytest.raises(SettingsError, match="unknown setting 'colour'"):
        widget_module.chat("chat", colour="red")


def test_a_side_panel_opens_in_a_sidecar_and_a_second_one_replaces_it(
    nb: NotebookAgent, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidecar import Sidecar

    from brute_nb.notebook import registry as registry_module

    reg = registry_module.Registry()
    monkeypatch.setattr(registry_module, "_registry", reg)
    monkeypatch.setattr(reg, "get", lambda name=None: nb)
    panel = widget_module.chat("chat", side=True)
    car = reg.beside["chat"]
    assert isinstance(car, Sidecar) and car.anchor == "right" and "chat" in car.title
    copy, view = car.outputs  # as in a cell: the static copy, then the live view (chat_static.STYLE shows one)
    assert "brute-chat-saved" in copy["data"]["text/html"] and "%brute chat --side" in copy["data"]["text/html"]
    assert view["data"][VIEW]["model_id"] == panel.model_id
    fake.add("beside the notebook")
    panel.send("hello")
    assert panel.wait_idle(WAIT)
    assert "beside the notebook" in car.outputs[0]["data"]["text/plain"]  # the copy follows the conversation

    again = widget_module.chat("chat", side=True)  # a second Run All
    assert car.comm is None and reg.beside["chat"] is not car  # the old tab closed, one tab per session
    assert reg.beside["chat"].outputs[1]["data"][VIEW]["model_id"] == again.model_id


@pytest.mark.anyio
async def test_awaiting_idle_leaves_the_event_loop_free(
    nb: NotebookAgent, chat: ChatWidget, fake: FakeProvider, shell_allowed: None
) -> None:
    # The turn is released by a task on this loop, which runs only if ``await chat.idle()`` does not block it
    # (as a notebook cell awaiting the panel must leave the kernel's loop free).
    fake.add(reply("", call("shell", {"command": HOLD})), "done")
    chat.send("go")
    wait_for((nb.root / "entered").exists, "the shell tool to start")

    async def release() -> None:
        (nb.root / "gate").touch()

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(release)
            await chat.idle()
    assert chat.wait_idle(0) and "done" in chat.transcript_html


def test_status_names_the_model_a_replayed_session_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No --model and no provider set by hand: the model comes from the cassette, and the status line says so.
    monkeypatch.delenv("BRUTE_MODEL", raising=False)
    cassette = tmp_path / "s.jsonl"
    cassette.write_text(
        json.dumps(
            {"method": "POST", "path": "/v1/messages", "request": {"model": "claude-x"}, "status": 200, "body": "{}"}
        )
        + "\n"
    )
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(replay=cassette))
    assert "claude-x · idle" in ChatWidget(nb).status.value


def test_status_without_any_provider_still_renders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(key, raising=False)
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl")
    assert "default model · idle" in ChatWidget(nb).status.value


def test_a_streaming_reply_resends_only_the_running_turn(chat: ChatWidget, fake: FakeProvider) -> None:
    """The finished turns are one trait and the running turn another: while a reply streams, its updates never
    carry the history again (a long chat would otherwise resend all of it ~15 times a second)."""
    from brute_nb.testing import slow

    fake.add("First answer, " + "long " * 200)
    click_send(chat, "one")
    assert chat.wait_idle(WAIT)
    history_writes: list[str] = []
    live_writes: list[str] = []
    chat.transcript.observe(lambda change: history_writes.append(change["new"]), names="value")
    chat.transcript.observe(lambda change: live_writes.append(change["new"]), names="live")
    fake.add(slow(" ".join(f"w{i}" for i in range(60)), delay=0.01))
    click_send(chat, "two")
    assert chat.wait_idle(WAIT)
    streamed = [w for w in live_writes if "w1" in w and "w59" not in w]
    assert len(streamed) >= 2, live_writes  # the reply showed as it came, in the live part only
    assert all("First answer" not in w for w in live_writes)
    assert len(history_writes) <= 2 and "w59" in history_writes[-1]  # at most: prompt shown, turn finished
    assert chat.transcript.live == "" and "w59" in chat.transcript_html


def test_front_end_programs_ship_as_files_with_their_constants_filled_in() -> None:
    """The widgets' JavaScript and CSS are package files (anywidget reads them); the transcript's constants are
    Python's, so a button's label or selector cannot drift between the two."""
    import json

    from brute_nb.notebook.views import chat_input, live, transcript

    program = transcript.esm()
    assert "__CODE_BLOCKS__" not in program and "__LABEL__" not in program and "__ENDED__" not in program
    assert f"const LABEL = {json.dumps(transcript.BUTTON)};" in program
    for path in (chat_input.ESM, chat_input.CSS, transcript.ESM, transcript.CSS):
        assert path.is_file() and path.stat().st_size > 100
    assert "export default" in live.ESM


def test_no_front_end_program_is_written_in_a_python_string() -> None:
    """Issue 26 item 5: three widgets' programs once sat in Python strings, out of reach of a JavaScript linter or
    an editor; every program is a ``.js`` file of the package now, and a new one must be too."""
    import brute_nb

    package = Path(brute_nb.__file__).parent
    inline = [f"{path.relative_to(package)}:{node.lineno}" for path in sorted(package.rglob("*.py"))
              for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Constant) and isinstance(node.value, str)
              and any(mark in node.value for mark in ("export default", "function render(", "addEventListener("))]
    assert inline == []
    assert {p.name for p in package.rglob("*.js")} == {"chat_input.js", "live.js", "transcript.js", "cell_bridge.js"}


def test_a_finished_turn_moves_from_live_to_history_in_one_message(chat: ChatWidget, fake: FakeProvider) -> None:
    """The front end must never see the finished turn in both parts (shown twice) or in neither: the history and
    the cleared running turn change inside one ``hold_sync``, which ipywidgets sends as one message."""
    held: list[tuple[str, bool]] = []
    chat.transcript.observe(lambda change: held.append((change["name"], chat.transcript._holding_sync)),
                            names=["value", "live"])
    fake.add("The answer.")
    click_send(chat, "question")
    assert chat.wait_idle(WAIT)
    assert ("value", True) in held and ("live", True) in held
    assert all(inside for _, inside in held), held


def test_a_replay_without_the_prompt_says_so_in_plain_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41: the panel, like the cell, leads with what happened and the command that goes live, not a class."""
    monkeypatch.delenv("BRUTE_MODEL", raising=False)
    cassette = tmp_path / "s.jsonl"
    cassette.write_text(json.dumps({"method": "POST", "path": "/v1/messages", "request": {"model": "claude-x"},
                                    "status": 200, "body": "{}"}) + "\n")
    chat = ChatWidget(NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(replay=cassette, tools="none")))
    click_send(chat, "a prompt of my own")
    assert chat.wait_idle(WAIT)
    shown = re.sub(r"<details.*?</details>", "", chat.transcript_html, flags=re.S)  # the traceback, folded
    assert "this notebook replays a recording; your prompt is not in it" in shown
    assert "%brute live" in shown and "CassetteMismatchError" not in shown


def test_tb_shows_a_chat_turns_replay_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel's message says "%tb shows how": after a chat turn (or "Fix with brute", which is one), ``%tb``
    reads ``sys.last_value``, so the turn's error is put there."""
    monkeypatch.delenv("BRUTE_MODEL", raising=False)
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):  # what the turn sets, put back after
        monkeypatch.setattr(sys, name, None, raising=False)
    cassette = tmp_path / "s.jsonl"
    cassette.write_text(json.dumps({"method": "POST", "path": "/v1/messages", "request": {"model": "claude-x"},
                                    "status": 200, "body": "{}"}) + "\n")
    chat = ChatWidget(NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(replay=cassette, tools="none")))
    click_send(chat, "a prompt of my own")
    assert chat.wait_idle(WAIT)
    error = sys.last_value
    assert isinstance(error, CassetteMismatchError) and "a prompt of my own" in error.diff


def test_the_chat_subcommand_opens_a_panel_in_the_cell_or_beside_it(shell: Any) -> None:
    """``%brute chat [--side]`` is the one entry point the saved copy tells a user to type (issue 41 item 2)."""
    from IPython.core.error import UsageError

    from brute_nb.notebook.registry import registry

    in_cell = shell.run_line_magic("brute", "chat")
    beside = shell.run_line_magic("brute", "chat --side")
    assert isinstance(in_cell, ChatWidget) and not in_cell.side and isinstance(beside, ChatWidget) and beside.side
    assert registry().beside["default"].outputs[1]["data"][VIEW]["model_id"] == beside.model_id
    assert isinstance(shell.run_line_magic("brute", "widget"), ChatWidget)  # the old name still works
    with pytest.raises(UsageError, match=r"usage: %brute chat \[--side\]"):
        shell.run_line_magic("brute", "chat --wide")
