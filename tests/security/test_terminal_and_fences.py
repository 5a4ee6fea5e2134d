"""Issue 14 §3: a tool result cannot break out of its Markdown fence, and terminal escapes never reach plain text.

The Markdown alternative is read back with mistune (CommonMark fences, as nbconvert and JupyterLab read them):
the whole result must come out as one code block. Plain text is what a terminal IPython, ``jupyter console`` or a
log shows; an OSC sequence there can set the title, plant a hyperlink or write the clipboard (OSC 52).
"""

from __future__ import annotations

import mistune
import pytest

from brute_nb.notebook.views import render
from brute_nb.notebook.views.display import tool_bundle
from brute_nb.notebook.views.tool_markdown import tool_markdown
from brute_nb.notebook.views.tool_row import ToolView

BREAKOUT = "ok\n~~~~\n\n<img src=x onerror=alert(1)> ![x](https://attacker.example/c.png)\n\n~~~~~~~~~\nafter"
ESCAPES = {
    "colour": "\x1b[31mred\x1b[0m",
    "clear screen": "\x1b[2J\x1b[H",
    "title (OSC 0)": "\x1b]0;owned\x07",
    "hyperlink (OSC 8)": "\x1b]8;;https://attacker.example\x1b\\click\x1b]8;;\x1b\\",
    "clipboard (OSC 52)": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "8-bit CSI": "\x9b2J",
    "DCS": "\x1bPq#0;2;0;0;0\x1b\\",
    "carriage return overwrite": "rm -rf ~\rls     ",
    "bell and backspace": "a\x07b\x08c",
}


def test_a_result_holding_fences_stays_inside_its_code_block() -> None:
    view = ToolView("c", "read", {"file_path": "x.md"}, status="ok", result=BREAKOUT)
    html = mistune.create_markdown(escape=False)(tool_markdown(view))
    assert isinstance(html, str)
    assert html.count("<pre>") == 1 and "<img" not in html
    code = html.split("<pre><code>", 1)[1].split("</code></pre>", 1)[0]
    assert "after" in code and "onerror" in code  # everything is inside, as text
    assert html.rstrip().endswith("</code></pre>")


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_escape_sequences_never_reach_plain_text(name: str) -> None:
    payload = f"before {ESCAPES[name]} after"
    view = ToolView("c", f"tool{ESCAPES[name]}", {"command": payload}, status="ok", result=payload)
    plains = [
        render.text_bundle(payload)["text/plain"],
        tool_bundle(view)["text/plain"],
        tool_bundle(view)["text/markdown"],
        render.notice_bundle(payload, "error")["text/plain"],
        render.footer_bundle({"model": payload, "tool_calls": 1})["text/plain"],
    ]
    for text in plains:
        assert not any(ch in text for ch in "\x1b\x9b\x07\x08\r"), repr(text)
        assert "before" in text and "after" in text
