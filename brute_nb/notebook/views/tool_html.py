"""A tool row as HTML: the cell's ``text/html``, the chat panel's transcript and live view, the HTML export.

A static ``<details>`` block that needs no kernel and no widget, so saved notebooks show it: the summary line
(name, arguments, status, time, size), then the whole arguments as JSON and the result as the row's model gives it
(``tool_row``), a unified diff in it coloured. Names, arguments and results may be an attacker's (a page or file
the agent read): every one passes through ``html.escape``, after ``render.plain`` took out terminal escapes and
keys, and the block is one line (``render.one_block``) so no exporter can read the rest of it as Markdown.
"""

from __future__ import annotations

import json
from html import escape

from brute_nb.notebook.views.render import STATUS_STYLE, WRAP, one_block, plain, tone, visible
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.redact import redact

BLOCK = ("margin:.2em 0 .5em .35em;padding:.1em 0 .2em .8em;"
         "border-left:2px solid var(--jp-border-color1,#d0d7de)")
"""An open tool block's body: a rule down its side groups it under its summary line."""
RESULT_PRE = f"{WRAP};tab-size:2;margin:.2em 0"
"""``read`` numbers lines as ``<n>\\t<text>``: a tab of 2, not 8, keeps the number beside its line."""
ADDED = tone("--jp-success-color1", "#1a7f37")
REMOVED = tone("--jp-error-color1", "#cf222e")


def tool_html(view: ToolView, *, open_: bool = False) -> str:
    bits = view.summary_bits()
    status = f'<span style="{STATUS_STYLE.get(view.tone, "")}">{escape(bits[0])}</span>'
    rest = "".join(f" · {escape(b)}" for b in bits[1:])
    summary = (
        f'<summary><code>{escape(plain(view.name))}</code> <span style="opacity:.75">{escape(view.args_line)}'
        f"</span> — {status}{rest}</summary>"
    )
    # JSON shows every character of every argument (control characters as \\u escapes), wrapped, never cut:
    # what a person approves is the whole call.
    pretty = visible(redact(json.dumps(dict(view.arguments), indent=2, ensure_ascii=False, default=str)))
    body = [f'<div style="{BLOCK}"><div><b>arguments</b></div><pre style="{WRAP};margin:.2em 0">{escape(pretty)}'
            "</pre>"]
    if view.shown_result is not None:
        body.append(f'<div><b>result</b></div><pre style="{RESULT_PRE}">{diff_html(view.shown_result)}</pre>')
        if view.cut:
            body.append(f"<div><small>{view.cut_note(lambda name: f'<code>{escape(name)}</code>')}</small></div>")
    if "approval" in view.meta:
        body.append(f"<div><small>approval: {escape(plain(str(view.meta['approval'])))}</small></div>")
    body.append("</div>")
    attr = " open" if open_ else ""
    return one_block(f'<details class="brute-tool"{attr}>{summary}{"".join(body)}</details>')


def diff_html(text: str) -> str:
    """``text`` escaped, the lines of a unified diff in it (from its first ``@@`` hunk on, as ``patch`` and
    ``write`` report) coloured: added green, removed red, hunk headers dimmed."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
    out = [escape(line) for line in lines[:start]]
    for line in lines[start:]:
        style = ("opacity:.65" if line.startswith("@@") else ADDED if line.startswith("+")
                 else REMOVED if line.startswith("-") else "")
        out.append(f'<span style="{style}">{escape(line)}</span>' if style else escape(line))
    return "\n".join(out)
