"""A tool row as Markdown: the cell's ``text/markdown`` and each tool call of a Markdown export.

The summary line (name in bold, arguments as code, status, time, size), then the result as the row's model gives
it (``tool_row``) in a fence it cannot close (``render.fence``: longer than any run of ``~`` in it), then, when it
was cut, the note saying where the rest is. JupyterLab and nbconvert render raw HTML inside Markdown, so nothing of
the row's reaches the text outside that fence unescaped: the name is Markdown-escaped, the arguments' backticks
cannot end their code span, and everything is ``render.plain`` (no terminal escape, no key).
"""

from __future__ import annotations

from brute_nb.notebook.views.render import fence, md_escape, plain
from brute_nb.notebook.views.tool_row import ToolView


def tool_markdown(view: ToolView) -> str:
    args = view.args_line.replace("`", "'")
    head = f"**{md_escape(plain(view.name))}** `{args}` — {' · '.join(view.summary_bits())}"
    if view.shown_result is None:
        return head
    bar = fence(view.shown_result)
    text = f"{head}\n\n{bar}\n{view.shown_result}\n{bar}"
    return text + "\n\n*" + view.cut_note(lambda name: f"`{name}`") + "*" if view.cut else text
