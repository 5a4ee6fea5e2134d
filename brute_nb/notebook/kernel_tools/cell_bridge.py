"""The cell tools' channel to a live notebook: where a person has the notebook open, edits go to its document.

One hidden anywidget per kernel (``cell_bridge.js``) applies the operations it is sent to the notebook's shared
model, as the chat's "Insert as cell" button does, so the user sees a cell change the moment the agent makes it
and the editor's own undo reverts it. A ``%%brute`` cell blocks the kernel's shell channel while it runs, so the
front end cannot answer: operations go one way, as synced widget state (kernel-notes Q1, pitfall 7), and the
bridge remembers what it set (``sources``) so ``run_cell`` runs what the user now sees.

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


class CellBridge:
    """The kernel's one bridge; ``send`` an operation, and the front end applies it once."""

    def __init__(self) -> None:
        self._widget: Any = None
        self._count = 0
        self._lock = threading.Lock()
        self.sources: dict[str, str] = {}
        """Cell id -> the source this bridge last gave it (what the user's document holds now)."""

    def send(self, op: dict[str, Any]) -> None:
        with self._lock:
            widget = self._widget = self._widget or _widget()
            self._count += 1
            widget.ops = [*widget.ops, {**op, "n": self._count}]
            if op.get("op") in ("edit", "insert"):
                self.sources[str(op["id"])] = str(op["source"])

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

    return CellOps()


_bridge: CellBridge | None = None
_bridge_lock = threading.Lock()


def front() -> CellBridge | None:
    """The bridge when a person's front end shows the notebook (its client allows stdin: JupyterLab, Notebook 7);
    None headless (nbclient, nbval, papermill, a script), where the tools change the saved file instead."""
    from brute_nb.notebook.approvals import stdin_available

    global _bridge
    if not stdin_available():
        return None
    with _bridge_lock:
        _bridge = _bridge or CellBridge()
        return _bridge


def record(state: dict[str, Any], inverse: dict[str, Any]) -> None:
    """Keep ``inverse`` (the operation that reverts an edit) with where the file undo stack stood."""
    store = snapshots({"state": state})
    last = store.last()
    edits: list[tuple[dict[str, Any], Any]] = state.setdefault(EDITS_KEY, [])
    edits.append((inverse, (last, store.depth(last) if last else 0)))


def undo_last(state: dict[str, Any], bridge: CellBridge | None) -> str | None:
    """Revert the agent's last cell edit if nothing changed in a file since; what was done, or None."""
    edits: list[tuple[dict[str, Any], Any]] = state.get(EDITS_KEY) or []
    if not edits or bridge is None:
        return None
    inverse, mark = edits[-1]
    store = snapshots({"state": state})
    last = store.last()
    if mark != (last, store.depth(last) if last else 0):
        return None  # a file change came after it: that is the last change to undo
    edits.pop()
    bridge.send(inverse)
    if inverse["op"] == "delete":
        return f"removed the cell the agent inserted (id {inverse['id']})"
    return f"restored the source of cell {inverse['id']} as it was before the agent's edit"
