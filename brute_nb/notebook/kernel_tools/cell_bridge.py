"""The cell tools' channel to a live notebook: where a person has the notebook open, edits go to its document.

One hidden anywidget per kernel (``cell_bridge.js``) applies the operations it is sent to the notebook's shared
model, as the chat's "Insert as cell" button does, so the user sees a cell change the moment the agent makes it
and the editor's own undo reverts it. Operations go as synced widget state (kernel-notes Q1, pitfall 7).

The tools never trust what they sent. The front end answers as synced state too: the document's cells as they
are (``doc``, at load and after every change) and each operation's outcome (``applied``). A ``%%brute`` cell
blocks the kernel's shell channel while it runs, so answers sent meanwhile are heard when it ends: a cell the
model names is checked against the cells the user had when the turn began (plus those the agent made since,
``sources``), and an outcome is waited for only where the kernel can hear it (a chat panel's turn, between
cells). A front end with stdin but no notebook document (VS Code, jupyter console, a terminal) never answers:
``live`` is then None and the tools change the saved file, saying so (``NOT_ANSWERED``).

Each change is also kept on the agent's undo list (``agent.state["cell_edits"]``) with its inverse, so
``%brute undo`` reverts the agent's last cell edit when it is the agent's last change (``undo_last``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from brute_nb.tools.stores import snapshots

ESM = Path(__file__).with_name("cell_bridge.js")
EDITS_KEY = "cell_edits"
"""``agent.state`` key: the inverse operations of the agent's cell edits, newest last."""
ANSWER_WAIT = 10.0
"""Seconds a tool waits for the front end to say it applied an operation, where the kernel can hear it."""
NOT_ANSWERED = ("no notebook document answered in this front end (VS Code, jupyter console and terminals show "
                "none, and a notebook run with Run All answers only when the run ends), so the saved file was "
                "changed instead: reload the notebook from disk to see it")


class CellBridge:
    """The kernel's one bridge; ``send`` an operation, and the front end applies it once and says so."""

    def __init__(self) -> None:
        self._widget: Any = None
        self._count = 0
        self._lock = threading.Lock()
        self._heard = threading.Condition()
        self._outcomes: dict[int, str] = {}
        self._sent: dict[str, tuple[int, str, str | None]] = {}
        """Cell id -> (operation number, source, cell type if an insert said it) of the last edit or insert sent."""

    def open(self) -> None:
        """Make the widget now, so the front end's first answer (its cells) comes while the kernel is idle."""
        with self._lock:
            self._widget = self._widget or self._made()

    def send(self, op: dict[str, Any]) -> int:
        """Send ``op``; its number, which ``outcome`` takes."""
        with self._lock:
            widget = self._widget = self._widget or self._made()
            self._count += 1
            widget.ops = [*widget.ops, {**op, "n": self._count}]
            if op.get("op") in ("edit", "insert"):
                self._sent[str(op["id"])] = (self._count, str(op["source"]), op.get("cell_type"))
            return self._count

    def pending(self, cell_id: str) -> tuple[str, str | None] | None:
        """(source, cell type of an insert) last sent to ``cell_id`` while the front end has not answered for it
        (this cell's turn keeps the kernel from hearing): what the document holds once it applies it; None when
        nothing is pending."""
        sent = self._sent.get(cell_id)
        if sent is None or self.outcome(sent[0]) is not None:
            return None  # answered: the document the front end sent with its answer says what the cell holds
        return sent[1], sent[2]

    def cells(self) -> dict[str, tuple[str, str]] | None:
        """The live document's cells (id -> (cell type, source)) as the front end last said, or None when no
        front end with a notebook document has answered."""
        doc = getattr(self._widget, "doc", None)
        if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
            return None
        return {str(c.get("id")): (str(c.get("cell_type", "code")), str(c.get("source", "")))
                for c in doc["cells"] if isinstance(c, dict)}

    def outcome(self, n: int, wait: float = 0.0) -> str | None:
        """What the front end said of operation ``n`` ("" applied, else why not), waiting up to ``wait`` seconds;
        None when it has not said."""
        with self._heard:
            self._heard.wait_for(lambda: n in self._outcomes, timeout=wait)
            return self._outcomes.get(n)

    def _answered(self, change: Any) -> None:
        """The front end's outcomes arrived (on the kernel's main thread): note them, wake the waiting tools, and
        drop the operations they answer, so a view opened later (a reload) does not apply them again."""
        heard = {int(a["n"]): str(a.get("why") or "") for a in change.get("new") or [] if isinstance(a, dict)}
        with self._heard:
            self._outcomes.update(heard)
            self._heard.notify_all()
        with self._lock:
            if self._widget is not None and any(op.get("n") in heard for op in self._widget.ops):
                self._widget.ops = [op for op in self._widget.ops if op.get("n") not in self._outcomes]

    def _made(self) -> Any:
        widget = _widget()
        widget.observe(self._answered, names="applied")
        return widget

    def close(self) -> None:
        with self._lock:
            if self._widget is not None:
                self._widget.close()
            self._widget = None


def _widget() -> Any:
    import anywidget
    import traitlets

    class CellOps(anywidget.AnyWidget):
        _esm = ESM
        ops: Any = traitlets.List().tag(sync=True)
        doc: Any = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
        applied: Any = traitlets.List().tag(sync=True)

    return CellOps()


_bridge: CellBridge | None = None
_bridge_lock = threading.Lock()


def front() -> CellBridge | None:
    """The bridge when a person may be looking (the client allows stdin: JupyterLab, Notebook 7, but also VS Code
    and jupyter console, which have no document to change: see ``live``); None headless (nbclient, nbval,
    papermill, a script), where the tools change the saved file instead."""
    from brute_nb.notebook.approvals import stdin_available

    global _bridge
    if not stdin_available() or not _in_kernel():
        return None
    with _bridge_lock:
        _bridge = _bridge or CellBridge()
        return _bridge


def _in_kernel() -> bool:
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None  # a terminal has no front end to draw a widget


def live(bridge: CellBridge | None) -> CellBridge | None:
    """``bridge`` when a notebook document answered through it, else None (the saved file is changed)."""
    return bridge if bridge is not None and bridge.cells() is not None else None


def can_hear() -> bool:
    """Whether the front end's answers reach the kernel now: no cell is running (a chat panel's turn), so the
    kernel's main thread handles widget messages while a tool waits."""
    from IPython import get_ipython

    from brute_nb.notebook.kernel_tools.cells import running_cell

    shell = get_ipython()
    return shell is not None and running_cell(shell) is None


def record(state: dict[str, Any], inverse: dict[str, Any]) -> None:
    """Keep ``inverse`` (the operation that reverts an edit) with where the file undo stack stood."""
    store = snapshots({"state": state})
    last = store.last()
    edits: list[tuple[dict[str, Any], Any]] = state.setdefault(EDITS_KEY, [])
    edits.append((inverse, (last, store.depth(last) if last else 0)))


def revert(bridge: CellBridge, inverse: dict[str, Any]) -> str:
    """Send ``inverse``; how it went, in words for the undo report (applied, refused, or sent unanswered)."""
    n = bridge.send(inverse)
    said = bridge.outcome(n, ANSWER_WAIT if can_hear() else 0.0)
    what = ("removed (the agent inserted it)" if inverse["op"] == "delete"
            else "source restored as it was before the agent's edit")
    if said is None:
        return f"cell {inverse['id']}: sent to the open notebook to be {what.split(' (')[0]} (it applies it as it " \
               "gets it; this cell keeps the kernel from hearing its answer)"
    if said:
        return f"cell {inverse['id']}: not restored: {said}"
    return f"cell {inverse['id']}: {what}"


def undo_last(state: dict[str, Any], bridge: CellBridge | None) -> str | None:
    """Revert the agent's last cell edit if nothing changed in a file since; what was done, or None."""
    edits: list[tuple[dict[str, Any], Any]] = state.get(EDITS_KEY) or []
    bridge = live(bridge)
    if not edits or bridge is None:
        return None
    inverse, mark = edits[-1]
    store = snapshots({"state": state})
    last = store.last()
    if mark != (last, store.depth(last) if last else 0):
        return None  # a file change came after it: that is the last change to undo
    edits.pop()
    return revert(bridge, inverse)
