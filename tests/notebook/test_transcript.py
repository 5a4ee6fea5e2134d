"""The chat transcript's "Insert as cell" blocks (issue 17 §4): which code blocks get a button and the code each
inserts, read from the sanitised HTML with the very selector the browser uses (``transcript.CODE_BLOCKS``), and
``propose_cell`` in a widget turn (shown in the chat, never a ``set_next_input`` that would ride on the next cell's
reply). The click itself is tested in JupyterLab: ``tests/browser/test_lab_insert_cell.py``."""

from __future__ import annotations

import json
from typing import Any

from notebook_helpers import WAIT

from brute_nb.message import Message, Role, ToolCall
from brute_nb.notebook.front.widget import ChatWidget
from brute_nb.notebook.kernel_tools.notebook_tools import ProposeCell
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.transcript import BUTTON, CODE_BLOCKS, Transcript, blocks, esm, proposal_html, proposed
from brute_nb.notebook.views.transcript_html import log_html
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.tools.context import use_env

TRICKY = 'if a < b and c & d:\n\tprint("</code></pre><img src=x onerror=alert(1)>", \'’\')\n```not a fence end'
SECOND = "df.head()"


def test_only_the_assistants_code_blocks_get_buttons_and_each_holds_its_exact_code() -> None:
    answer = f"Two cells:\n\n~~~~python\n{TRICKY}\n~~~~\n\nthen\n\n```\n{SECOND}\n```\n\nand `inline` code."
    messages = [
        Message(Role.USER, "my code:\n```python\nuser_code()\n```"),
        Message(Role.ASSISTANT, "Reading.", tool_calls=(ToolCall("c1", "read", {"file_path": "a.py"}),)),
        Message(Role.TOOL, "1\tresult_code()\n", tool_call_id="c1"),
        Message(Role.ASSISTANT, answer),
    ]
    html = log_html(messages)
    assert "user_code()" in html and "result_code()" in html  # the user's and the tool's code show, unbuttoned
    assert blocks(html) == [TRICKY, SECOND]
    assert "<img" not in html and BUTTON not in html  # inert, and no button in the static HTML


def test_a_proposal_shows_its_code_as_a_block_with_a_button() -> None:
    ok = ToolView(call_id="c", name="propose_cell", arguments={"code": TRICKY + "\n", "explanation": "fixes *it*"},
                  status="ok")
    html = proposal_html(ok)
    assert blocks(html) == [TRICKY] and "Proposed cell: fixes <em>it</em>" in html and "<img" not in html
    for other in (ToolView(call_id="c", name="propose_cell", arguments={"code": "x = 1"}, status="error"),
                  ToolView(call_id="c", name="propose_cell", arguments={"code": "  "}, status="ok"),
                  ToolView(call_id="c", name="read", arguments={"code": "x = 1"}, status="ok")):
        assert proposal_html(other) == ""


def test_the_transcript_widget_knows_its_panel_and_the_browser_uses_the_same_selector(
        nb: NotebookAgent, fake: FakeProvider) -> None:
    panel = ChatWidget(nb)
    assert isinstance(panel.transcript, Transcript) and panel.transcript.anchor == panel.model_id
    code = esm()
    assert f"const CODE_BLOCKS = {json.dumps(CODE_BLOCKS)};" in code and json.dumps(BUTTON) in code
    fake.add(f"Here:\n\n```python\n{SECOND}\n```")
    panel.send("show me")
    assert panel.wait_idle(WAIT)
    assert blocks(panel.transcript.value) == [SECOND]
    static = panel._repr_mimebundle_()["text/html"]  # what nbconvert and GitHub show: no button that does nothing
    assert SECOND in static and BUTTON not in static and "<button" not in static


class Shell:
    def __init__(self) -> None:
        self.inputs: list[str] = []

    def set_next_input(self, text: str, replace: bool = False) -> None:
        self.inputs.append(text)


def test_propose_cell_in_a_chat_turn_leaves_the_cell_to_the_widget() -> None:
    shell = Shell()
    tool = ProposeCell(shell=lambda: shell)
    with use_env({"insert_cell": proposed}):
        result = tool.execute("x = 1", "sets x")
    assert shell.inputs == [] and result.startswith("Shown in the chat") and BUTTON in result
    assert "new cell below" in tool.execute("x = 1") and shell.inputs == ["x = 1"]  # in a cell: set_next_input


def test_a_proposal_in_a_widget_turn_shows_in_the_transcript(nb: NotebookAgent, fake: FakeProvider) -> None:
    panel = ChatWidget(nb)
    fake.add(reply("A cell for you.", call("propose_cell", {"code": TRICKY, "explanation": "the fix"})), "Done.")
    panel.send("fix it")
    assert panel.wait_idle(WAIT)
    html = panel.transcript_html
    assert blocks(html) == [TRICKY] and "Done." in html
    results: list[Any] = [m.content for m in read_session(nb.session_path) if m.role == Role.TOOL]
    assert results and results[-1].startswith("Shown in the chat")
    assert blocks(ChatWidget(nb).transcript_html) == [TRICKY]  # a new panel over the history shows it too
