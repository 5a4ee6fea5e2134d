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

import anywidget
import traitlets

from brute_nb.notebook import render
from brute_nb.notebook.chat_static import ENDED
from brute_nb.notebook.render import ToolView

CODE_BLOCKS = ".brute-text pre"
"""The blocks that get a button: ``<pre>`` of rendered assistant Markdown (fenced or indented code)."""

BUTTON = "Insert as cell"
PROPOSE_CELL = "propose_cell"

# The cell that shows the chat: the notebook cell around the clicked view (exact when the panel is shown in two
# cells or nested in a layout), else, for a view outside the cell list (Lab's "New View for Cell Output"), the
# first cell whose outputs hold the panel's model id (``anchor``). Both index the shared notebook model that
# JupyterLab's widget manager exposes as ``context``. The code goes in below it with no execution count.
ESM = """
const CODE_BLOCKS = %(selector)s;
const LABEL = %(label)s;
const ENDED = %(ended)s;
const VIEW = "application/vnd.jupyter.widget-view+json";

function codeOf(pre) {
  return (pre.textContent || "").replace(/\\n+$/, "");
}

function holds(cell, anchor) {
  if (!anchor || cell.cell_type !== "code" || typeof cell.getOutputs !== "function") return false;
  return cell.getOutputs().some((o) => o && o.data && o.data[VIEW] && o.data[VIEW].model_id === anchor);
}

function domIndex(el) {
  const cell = el.closest(".jp-Notebook .jp-Cell");
  if (!cell) return -1;
  const index = Number.parseInt(cell.dataset.windowedListIndex ?? "", 10);
  if (!Number.isNaN(index)) return index;
  return Array.from(cell.parentElement.children).filter((c) => c.classList.contains("jp-Cell")).indexOf(cell);
}

function cellIndex(notebook, anchor, el) {
  const cells = notebook.cells || [];
  const around = domIndex(el);
  if (around >= 0 && around < cells.length) return around;
  for (let i = 0; i < cells.length; i++) if (holds(cells[i], anchor)) return i;
  return -1;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (error) {
    const area = document.createElement("textarea");
    area.value = text;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

function say(button, text) {
  button.textContent = text;
  setTimeout(() => { button.textContent = LABEL; }, 2000);
}

async function insert(model, el, code, button) {
  let notebook = null;
  try {
    const context = model.widget_manager && model.widget_manager.context;
    notebook = context && context.model && context.model.sharedModel;
  } catch (error) {
    notebook = null;  // a widget manager without a document (VS Code, Colab, Voila)
  }
  const usable = notebook && typeof notebook.insertCell === "function";
  const index = usable ? cellIndex(notebook, model.get("anchor"), el) : -1;
  if (index >= 0) {
    notebook.insertCell(index + 1, { cell_type: "code", source: code, metadata: {} });
    say(button, "inserted below");
    return;
  }
  say(button, (await copy(code)) ? "copied" : "copy failed: select the code");
}

// After a kernel restart the panel is dead (its model is gone from the kernel): its output area is marked ended,
// and the static copy beside it (chat_static.STYLE) takes its place instead of a Send button that does nothing.
function watchKernel(model, el) {
  let session = null;
  try {
    session = model.widget_manager && model.widget_manager.context && model.widget_manager.context.sessionContext;
  } catch (error) {
    session = null;
  }
  if (!session || !session.statusChanged) return () => {};
  const onStatus = (_, status) => {
    if (status !== "restarting" && status !== "autorestarting" && status !== "dead") return;
    const area = el.closest(".jp-OutputArea");
    if (area) area.classList.add(ENDED);
  };
  session.statusChanged.connect(onStatus);
  return () => session.statusChanged.disconnect(onStatus);
}

function render({ model, el }) {
  el.classList.add("brute-transcript");
  const unwatch = watchKernel(model, el);
  const content = document.createElement("div");
  content.className = "brute-transcript-content";
  el.appendChild(content);
  const finished = document.createElement("div");
  const running = document.createElement("div");
  content.append(finished, running);
  const fill = (box, html) => {
    box.innerHTML = html;
    for (const pre of box.querySelectorAll(CODE_BLOCKS)) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "brute-insert";
      button.textContent = LABEL;
      button.title = "Put this code in a new cell below the chat's cell, not run";
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        insert(model, el, codeOf(pre), button);
      });
      pre.after(button);
    }
  };
  const drawFinished = () => fill(finished, model.get("value"));
  const drawRunning = () => fill(running, model.get("live"));
  drawFinished();
  drawRunning();
  model.on("change:value", drawFinished);
  model.on("change:live", drawRunning);
  return () => {
    unwatch();
    model.off("change:value", drawFinished);
    model.off("change:live", drawRunning);
  };
}
export default { render };
"""

# What ipywidgets' HTML widget gives its content (the transcript was one before), but with the line height of
# text, not of a one-line control (28px made wrapped lines, such as an error's, read double-spaced).
CSS = """
.brute-transcript { box-sizing: border-box; font-size: var(--jp-widgets-font-size, 13px); }
.brute-transcript-content {
  align-self: stretch; flex: 1 1 auto; position: relative; line-height: var(--jp-content-line-height, 1.6);
}
.brute-insert {
  display: block; margin: .4em 0 .8em; padding: 0 8px; line-height: 20px; cursor: pointer;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: var(--jp-ui-font-size0, 11px);
  color: var(--jp-ui-font-color1, #222); background: var(--jp-layout-color2, #eee);
  border: var(--jp-border-width, 1px) solid var(--jp-border-color1, #bbb); border-radius: 2px;
}
.brute-insert:hover { background: var(--jp-layout-color3, #ddd); }
/* Inline code (a tool's name, `code` in a reply) as a cell shows it: JupyterLab styles it only in rendered HTML. */
.brute-transcript :not(pre) > code {
  background-color: var(--jp-layout-color2, #eee); padding: 1px 5px;
  font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 13px);
}
"""


def esm() -> str:
    return ESM % {"selector": json.dumps(CODE_BLOCKS), "label": json.dumps(BUTTON), "ended": json.dumps(ENDED)}


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
