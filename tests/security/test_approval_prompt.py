"""Issue 14 §7: what a person approves is the whole call, never a shortened one.

A 243-character shell command whose tail (``&& touch ...``) ran after "y" while the prompt showed 200 characters;
here the full command must be in the cell's text and in the widget's approval box, wrapped (no horizontal cut), and
characters that hide or reorder text (carriage return, escapes, bidi overrides) must show instead of acting.
"""

from __future__ import annotations

from html import unescape

import pytest

from brute_nb.message import ToolCall
from brute_nb.notebook.approvals import describe, input_asker
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_row import ToolView

TAIL = "&& touch /tmp/brute_nb_hidden_tail"
LONG = "echo " + "a" * (243 - len("echo  ") - len(TAIL)) + " " + TAIL


def test_the_long_command_is_243_characters() -> None:
    assert len(LONG) == 243


def test_the_cell_prompt_shows_the_whole_command(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert input_asker(ToolCall(id="c", name="shell", arguments={"command": LONG}), "shell") == "deny"
    shown = capsys.readouterr().out
    assert LONG in shown and TAIL in shown and "…" not in shown


def test_hiding_characters_are_shown_not_obeyed() -> None:
    sneaky = "ls\r" + " " * 10 + "\x1b[2K\u202e; rm -rf ~"
    text = describe(ToolCall(id="c", name="shell", arguments={"command": sneaky}), "shell")
    assert "\r" not in text and "\x1b" not in text and "\u202e" not in text
    assert "\\u000d" in text and "\\u001b" in text and "\\u202e" in text and "rm -rf ~" in text


def test_the_widget_approval_box_shows_the_whole_command_wrapped() -> None:
    view = ToolView(call_id="c", name="shell", arguments={"command": LONG}, status="asking")
    html = tool_html(view, open_=True)
    assert LONG in unescape(html)
    pre = html.split("<b>arguments</b></div>", 1)[1]
    assert pre.startswith('<pre style="white-space:pre-wrap')  # long lines wrap instead of scrolling out of view
