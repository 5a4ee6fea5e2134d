"""The chat widget's transcript: its sanitised HTML, plus an "Insert as cell" button under each code block of the
assistant's text, which puts that code into a new, unrun cell directly below the cell that shows the chat.

IPython's ``set_next_input`` cannot do this for the widget: its payload rides on the next execute reply, and a
widget turn runs from a comm handler, so the cell would appear whenever the user next ran some other cell. The
front end inserts it instead, through the notebook's own document model (JupyterLab and Notebook 7).

Invariants: the HTML is the one ``render`` sanitised (no tag, attribute or handler of the model's reaches the page,
as with ``ipywidgets.HTML``, which also sets ``innerHTML``); buttons are added in the browser only, so the static
fallback (``_repr_mimebundle_``'s ``text/html``, what nbconvert and GitHub show) holds no button that does nothing;
only ``CODE_BLOCKS`` get one, which the sanitiser's class-free output keeps to assistant text (never a user's
prompt, a tool block or a traceback); the code inserted is the block's own text (``pre.textContent``, the reply's
code after ``render.plain``), never run; a proposal of the ``propose_cell`` tool is shown as such a block
(``proposal_html``). Where no notebook model is reachable (VS Code, Colab, Voilà) the button copies the code and
says so. Imported only when a chat widget is built, never by ``%load_ext``.
"""

from __future__ import annotations

import json
from pathlib import Path

import anywidget
import traitlets

from brute_nb.notebook.views import render
from brute_nb.notebook.views.chat_static import ENDED
from brute_nb.notebook.views.tool_row import ToolView

CODE_BLOCKS = ".brute-text pre"
"""The blocks that get a button: ``<pre>`` of rendered assistant Markdown (fenced or indented code)."""

BUTTON = "Insert as cell"
PROPOSE_CELL = "propose_cell"

# The cell that shows the chat: the notebook cell around the clicked view (exact when the panel is shown in two
# cells or nested in a layout), else, for a view outside the cell list (Lab's "New View for Cell Output"), the
# first cell whose outputs hold the panel's model id (``anchor``); a panel in JupyterLab's side area has no cell, so
# its code goes in after the notebook's last cell. Both index the shared notebook model that
# JupyterLab's widget manager exposes as ``context``. The code goes in below it with no execution count.
ESM = Path(__file__).with_name("transcript.js")

# What ipywidgets' HTML widget gives its content (the transcript was one before), but with the line height of
# text, not of a one-line control (28px made wrapped lines, such as an error's, read double-spaced).
CSS = Path(__file__).with_name("transcript.css")


def esm() -> str:
    """The transcript's front-end program, with the constants it shares with this module filled in."""
    values = {"__CODE_BLOCKS__": CODE_BLOCKS, "__LABEL__": BUTTON, "__ENDED__": ENDED}
    text = ESM.read_text(encoding="utf-8")
    for token, value in values.items():
        text = text.replace(token, json.dumps(value))
    return text


class Transcript(anywidget.AnyWidget):
    """The transcript: ``value`` is the finished turns' sanitised HTML (as ``ipywidgets.HTML``'s), ``live`` the
    running turn's, shown after it; ``anchor`` is the model id of the panel whose notebook cell the inserted cells
    go below."""

    _esm = esm()
    _css = CSS
    value = traitlets.Unicode("").tag(sync=True)
    live = traitlets.Unicode("").tag(sync=True)
    anchor = traitlets.Unicode("").tag(sync=True)


def proposed(code: str, explanation: str) -> str:
    """``propose_cell`` in a chat turn (the turn's ``env["insert_cell"]``): the transcript shows the call's code
    with its button (``proposal_html``), so nothing is sent anywhere; the model is told where it went."""
    return (f"Shown in the chat under this call, with an '{BUTTON}' button. It is not run: the user inserts it "
            "as a new cell and runs it if they agree.")


def proposed_code(view: ToolView) -> str | None:
    """The code of a ``propose_cell`` call that went through, or None for any other block."""
    code = view.arguments.get("code") if view.name == PROPOSE_CELL else None
    return code if isinstance(code, str) and code.strip() and view.status == "ok" else None


def proposal_html(view: ToolView) -> str:
    """A ``propose_cell`` call's code as assistant text shows a code block (so it gets the button), with its
    explanation; empty for any other block. Sanitised as model text is: the model wrote both."""
    code = proposed_code(view)
    if code is None:
        return ""
    explanation = view.arguments.get("explanation")
    lead = f"Proposed cell: {explanation}" if isinstance(explanation, str) and explanation.strip() else "Proposed cell:"
    bar = render.fence(code)
    return render.markdown_html(f"{lead}\n\n{bar}python\n{code.rstrip(chr(10))}\n{bar}\n")


def blocks(html: str) -> list[str]:
    """The code each button of ``html`` would insert, in order: what the browser's ``CODE_BLOCKS`` and
    ``codeOf`` find, for tests and for code that wants the transcript's code without a browser."""
    from bs4 import BeautifulSoup

    return [pre.get_text().rstrip("\n") for pre in BeautifulSoup(html, "html.parser").select(CODE_BLOCKS)]
