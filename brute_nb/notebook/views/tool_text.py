"""A tool row as plain text: the cell's ``text/plain``, a notebook export's, and the terminal's one line.

``tool_plain`` is the row's summary line then the result as the row's model gives it (``tool_row``), with the note
saying where the rest is when it was cut; ``tool_line`` is the summary line alone, what a terminal prints when a
call ends (one line a call: the result stays in ``%brute tools``), coloured by ``LINE_STYLE``. Everything passes
through ``render.plain``: no terminal escape sequence from a tool or the model, no key.
"""

from __future__ import annotations

from brute_nb.notebook.views.render import plain
from brute_nb.notebook.views.tool_row import ToolView

LINE_STYLE = {"ok": "green", "error": "red", "denied": "red", "interrupted": "yellow"}
"""A terminal line's ``rich`` colour by the row's tone (``ToolView.tone``)."""


def tool_line(view: ToolView) -> str:
    """``[name] arguments — status · time · size``."""
    return plain(f"[{view.name}] {view.args_line} — {' · '.join(view.summary_bits())}")


def tool_plain(view: ToolView) -> str:
    head = tool_line(view)
    if view.shown_result is None:
        return head
    text = head + "\n" + view.shown_result
    return text + "\n\n" + view.cut_note() if view.cut else text
