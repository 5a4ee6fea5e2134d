"""The notebook editing tools: ``edit_cell``, ``insert_cell`` and ``run_cell`` (risk class ``notebook``, asked by
default: ``run_cell`` runs code, and an edit changes what the user made).

Where a person has the notebook open (JupyterLab, Notebook 7: the kernel's client allows stdin) they act on the
live document through the front end (``cell_bridge``), so the user sees the change at once and can undo it with
the editor's own undo. Without a front end (nbclient, nbval, a script) they change the saved ``.ipynb`` file:
nbformat reads and writes it (``ipynb_cells``), the path goes through the confinement (a workspace notebook inside
the root; the user's own notebook, wherever Jupyter opened it, inside its own folder: ``DocumentPaths``; either
way no link out, a regular file, bounded), the write is the file tools' atomic replace under the file's lock, and
the old bytes go on the agent's undo stack, so ``%brute undo`` reverts the edit as it reverts a file tool's.
``run_cell`` runs the cell's source in this kernel, like the ``python`` tool (a stop interrupts it), and returns
what it showed, printed text, displays (``display(df)``, an ``Image``) and figures, to the model; its outputs are
written under the cell. What the cell does to the namespace is journaled per turn (``kernel_journal``), for
``%brute undo`` and ``%brute why``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import anyio

from brute_nb import confine
from brute_nb.attachments import from_bytes
from brute_nb.confine import Place, read_all, replace
from brute_nb.notebook.kernel_tools import cell_bridge, ipynb_cells, run_count
from brute_nb.notebook.kernel_tools.cell_bridge import CellBridge
from brute_nb.notebook.kernel_tools.ipynb_cells import NotebookFileError, Ran
from brute_nb.tools.builtin.fs_common import WorkspaceTool, unified_diff
from brute_nb.tools.builtin.fs_edit import FSUndo, held
from brute_nb.tools.context import current_env, shown_path, state
from brute_nb.tools.stores import snapshots
from brute_nb.tools.truncation import ToolOutput

T = TypeVar("T")
NOTEBOOK_LIMIT = 64 * 1024 * 1024
"""The largest notebook file the cell tools read (one with many plots is a few MB)."""
LIVE = "the notebook open in the user's front end: they see the change now and can undo it (Ctrl+Z in the cell)"
APPLIED = "yes: the open notebook says it applied it"
SENT = ("sent to the open notebook, which applies it as it gets it (it cannot answer while this turn's cell runs); "
        "the cell was checked against the notebook as it was when the turn began")

NOTEBOOK_PARAM = {"type": "string", "desc": "another notebook file in the workspace (default: this notebook)"}
CELL_PARAM = {"type": "string", "desc": "the cell: its index as the notebook tool lists it ('3') or its id",
              "required": True}


def document() -> Path | None:
    """The user's own notebook, the one the session belongs to (the turn's env says which), as an absolute path."""
    value = current_env().get("notebook")
    return Path(os.path.abspath(os.path.expanduser(os.fspath(value)))) if value else None


class DocumentPaths(WorkspaceTool, abstract=True):
    """Where a tool opens the user's own notebook: in its own folder, not under the workspace root.

    The notebook a person has open is their document, not a workspace file: the demos set a root below its folder
    (``root="scratch"``), and a notebook may sit anywhere Jupyter opened it. So that one path (named by the
    session, never chosen by the model) is walked from its own folder: still no link out of that folder, a regular
    file, bounded (``confine.place``, ``read_all``). Every other path, another notebook included, is a workspace
    path, confined to the root.
    """

    def path(self, value: str | os.PathLike[str]) -> Path:
        own = document()
        if own is not None and os.path.isabs(os.path.expanduser(os.fspath(value))) and \
                Path(os.path.abspath(os.path.expanduser(os.fspath(value)))) == own:
            return own
        return super().path(value)

    def place(self, path: Path, *, create_parents: bool = False, follow_last: bool = True,
              missing: str = "File not found") -> contextlib.AbstractContextManager[Place]:
        if path == document():
            return confine.place(path, confine.real(path.parent), follow_last=follow_last, missing=missing)
        return super().place(path, create_parents=create_parents, follow_last=follow_last, missing=missing)

    def shown(self, path: Path) -> str:
        """The path as a result says it: the document by its file name (a result is sent, and a recording must
        replay from any checkout), a workspace file relative to the root."""
        return path.name if path == document() else shown_path(path)


def read_document(path: Path) -> bytes:
    """The user's own notebook's bytes, opened as the cell tools open it (``DocumentPaths``): inside its own folder,
    no link out of it, a regular file, at most ``NOTEBOOK_LIMIT``; whole, when a save was under way (``saved``)."""
    return saved(path, lambda: (confine.read_file(path, root=confine.real(path.parent), limit=NOTEBOOK_LIMIT,
                                                  why="the cell tools' notebook limit"), None))[0]


SAVE_WAIT = 5.0
"""Seconds a read of a notebook waits for a save under way to end (one takes milliseconds; a loaded disk, more)."""
S = TypeVar("S")


def saved(path: Path, read: Callable[[], tuple[bytes, S]]) -> tuple[bytes, S]:
    """``read()`` (a notebook's bytes, and what else the reader gives) once the file is whole.

    Jupyter Server saves a notebook in place: its ``atomic_writing`` keeps the old bytes aside as ``.~name``,
    truncates the file and writes it again. A person's save during a Run All (Ctrl+S) is normal, and a read in
    that moment saw a cut file: a proposal took the cell below as unknown and added a copy of it, a cell tool
    called the notebook invalid. So bytes that are not JSON are read again while that aside copy shows a save
    under way (and once more, for a save that ended between the read and the look), for at most ``SAVE_WAIT`` s.
    A save still under way then never ends (its server died, leaving the copy): a ``NotebookFileError`` says so and
    what to do; anything else not JSON is returned for the caller's own error."""
    aside = path.with_name(".~" + path.name)
    deadline = time.monotonic() + SAVE_WAIT
    again = True
    while True:
        got = read()
        if _whole(got[0]):
            return got
        saving = _saving(aside)
        if (saving or again) and time.monotonic() < deadline:
            again = saving
            time.sleep(0.02)
            continue
        if saving:
            raise NotebookFileError(
                f"{path.name} is cut short and Jupyter's copy {aside.name} beside it says a save is under way, which "
                f"has not ended in {SAVE_WAIT:g} s: try again once it is saved; if no save is running (the server "
                f"stopped mid-save), restore the notebook from {aside.name}")
        return got


def _whole(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):  # nesting deeper than the parser goes is not a save under way either
        return False
    return True


def _saving(aside: Path) -> bool:
    """Whether Jupyter's aside copy is there: looked at, never opened or followed (it may be anything)."""
    try:
        os.lstat(aside)
    except (OSError, ValueError):  # a name too long for one more two characters is no save of Jupyter's
        return False
    return True


class DocumentUndo(DocumentPaths, FSUndo):
    """``FSUndo`` that can also put the user's own notebook back (``%brute undo`` of a turn that edited it)."""


class CellTool(DocumentPaths, abstract=True):
    """What the three tools share: which notebook file, and a locked, atomic, undoable change to it."""

    risk = "notebook"

    def notebook_file(self, notebook: str | None) -> Path:
        value = notebook or document()
        if not value:
            raise NotebookFileError("no notebook file is known here; pass notebook='name.ipynb', or set it with "
                                    "%brute config notebook=PATH")
        path = self.path(value)
        if path.suffix != ".ipynb":
            raise NotebookFileError(f"{self.shown(path)} is not a notebook (.ipynb) file")
        return path

    async def change(self, path: Path, work: Callable[[Any], T]) -> T:
        """``work(notebook)`` on the file's cells, written back atomically if it changed, the old bytes kept for
        undo; a file that nbformat does not accept is refused untouched."""
        store = snapshots()
        where_name = self.shown(path)

        def run(where: Place) -> T:
            old, like = saved(path, lambda: read_all(where, limit=NOTEBOOK_LIMIT, why="the cell tools' notebook limit"))
            nb = ipynb_cells.read(old, where_name)
            result = work(nb)
            new = ipynb_cells.write(nb)
            if new != old:
                replace(where, new, like=like)
                store.push(path, old, new)
            return result

        return await held(self, path, run, missing="Notebook file not found")

    async def look(self, path: Path, work: Callable[[Any], T]) -> T:
        """``work(notebook)`` reading the file only."""
        where_name = self.shown(path)

        def run(where: Place) -> T:
            data, _ = saved(path, lambda: read_all(where, limit=NOTEBOOK_LIMIT, why="the cell tools' notebook limit"))
            return work(ipynb_cells.read(data, where_name))

        return await held(self, path, run, missing="Notebook file not found")

    def front(self, notebook: str | None) -> CellBridge | None:
        """The live document's bridge, when a notebook document answered through the turn's bridge and the cell is
        in the notebook it shows; otherwise the saved file is changed (``fallback`` says why)."""
        bridge: CellBridge | None = current_env().get("cell_front")
        if bridge is None or (notebook and self.notebook_file(notebook) != self.notebook_file(None)):
            return None
        return cell_bridge.live(bridge)

    def fallback(self, notebook: str | None) -> dict[str, str]:
        """The line a file result carries when a person may be looking at this notebook in a front end that showed
        no document (VS Code, jupyter console): the change is in the saved file, not on their screen."""
        bridge = current_env().get("cell_front")
        mine = not notebook or self.notebook_file(notebook) == self.notebook_file(None)
        return {"note": cell_bridge.NOT_ANSWERED} if bridge is not None and mine else {}

    async def live_cell(self, bridge: CellBridge, cell: str, notebook: str | None) -> tuple[str, str, str]:
        """(id, source, cell type) of ``cell`` in the live notebook, as its front end said it (or as the agent's
        edit sent since leaves it): named by id, or by its index in the saved file. A cell the open notebook does
        not have is refused, never sent into the void."""
        label = str(cell).strip()
        doc = bridge.cells() or {}
        cell_id = label
        if label not in doc and bridge.pending(label) is None:
            path = self.notebook_file(notebook) if notebook or document() else None
            saved = await self.look(path, _locator(label, self.shown(path))) if path and path.is_file() else None
            if saved is None:
                raise NotebookFileError(f"the open notebook has no cell {label!r} (it has {len(doc)} cells): name a "
                                        "cell by its id, or by its index as the notebook tool lists it")
            cell_id = saved
        pending = bridge.pending(cell_id)
        if pending is not None:
            return cell_id, pending[0], pending[1] or doc.get(cell_id, ("code", ""))[0]
        if cell_id not in doc:
            raise NotebookFileError(f"cell {label} (id {cell_id}) of the saved notebook is no longer in the open "
                                    "notebook: list the cells again (notebook tool) and name one it has")
        kind, source = doc[cell_id]
        return cell_id, source, kind

    async def applied(self, bridge: CellBridge, op: dict[str, Any]) -> str:
        """Send ``op`` and say what became of it: applied (the front end said so), or sent (this cell's turn keeps
        the kernel from hearing the answer); a refusal or no answer where one could come is an error."""
        n = bridge.send(op)
        hear = cell_bridge.can_hear()
        said = await anyio.to_thread.run_sync(lambda: bridge.outcome(n, cell_bridge.ANSWER_WAIT if hear else 0.0))
        if said:
            raise NotebookFileError(f"the open notebook did not apply it: {said}")
        if said is None and hear:
            raise NotebookFileError(f"sent, but the open notebook did not say it applied it within "
                                    f"{cell_bridge.ANSWER_WAIT:g} s: check the cell before relying on it")
        return APPLIED if said == "" else SENT


def _locator(label: str, where: str) -> Callable[[Any], str | None]:
    """The id of the saved notebook's cell ``label`` (an index or an id), or None."""
    def locate(nb: Any) -> str | None:
        try:
            return str(nb.cells[ipynb_cells.find(nb, label, where)].id)
        except NotebookFileError:
            return None

    return locate


class EditCell(CellTool):
    name = "edit_cell"
    description = (
        "Replace the source of a cell of the user's notebook (its outputs are cleared, as they no longer match). "
        "Name the cell by its index as the notebook tool lists it, or by its id. Returns a diff of the change. "
        "The user sees the edit and can undo it. Run it afterwards with run_cell if needed."
    )
    params: ClassVar[dict[str, Any]] = {
        "cell": CELL_PARAM,
        "source": {"type": "string", "desc": "the cell's complete new source", "required": True},
        "notebook": NOTEBOOK_PARAM,
    }

    async def execute(self, cell: str, source: str, notebook: str | None = None) -> dict[str, Any]:
        bridge = self.front(notebook)
        if bridge is not None:
            cell_id, old, _ = await self.live_cell(bridge, cell, notebook)
            applied = await self.applied(bridge, {"op": "edit", "id": cell_id, "source": source})
            cell_bridge.record(state(), {"op": "edit", "id": cell_id, "source": old})  # only what was applied
            return {"success": True, "notebook": LIVE, "id": cell_id, "applied": applied,
                    "diff": cell_diff(old, source)}
        path = self.notebook_file(notebook)

        def edit(nb: Any) -> tuple[int, str, str]:
            index = ipynb_cells.find(nb, cell, self.shown(path))
            return index, str(nb.cells[index].get("id", "")), ipynb_cells.replace_source(nb, index, source)

        index, cell_id, before = await self.change(path, edit)
        return {"success": True, "notebook": self.shown(path), "cell": f"[{index}]", "id": cell_id,
                "diff": cell_diff(before, source), **self.fallback(notebook)}


class InsertCell(CellTool):
    name = "insert_cell"
    description = (
        "Insert a new cell into the user's notebook, after the cell given (its index or id), or after the cell "
        "running now when none is given, or at the end. The cell is not run: use run_cell for that."
    )
    params: ClassVar[dict[str, Any]] = {
        "source": {"type": "string", "desc": "the new cell's source", "required": True},
        "after": {"type": "string", "desc": "the cell to insert after (index or id); default: the current cell"},
        "cell_type": {"type": "string", "enum": ["code", "markdown"], "desc": "code (default) or markdown"},
        "notebook": NOTEBOOK_PARAM,
    }

    async def execute(self, source: str, after: str | None = None, cell_type: str = "code",
                      notebook: str | None = None) -> dict[str, Any]:
        running = current_env().get("cell_id")
        bridge = self.front(notebook)
        if bridge is not None:
            anchor = (await self.live_cell(bridge, after, notebook))[0] if after is not None else running
            if cell_type not in ("code", "markdown"):
                raise NotebookFileError(f"cell_type must be code or markdown, got {cell_type!r}")
            cell_id = ipynb_cells.new_id()
            applied = await self.applied(bridge, {"op": "insert", "id": cell_id, "after": anchor,
                                                  "cell_type": cell_type, "source": source})
            cell_bridge.record(state(), {"op": "delete", "id": cell_id})
            return {"success": True, "notebook": LIVE, "id": cell_id, "applied": applied, "note": "inserted, not run"}
        path = self.notebook_file(notebook)

        def insert(nb: Any) -> tuple[int, str]:
            where = self.shown(path)
            if after is not None:
                index = ipynb_cells.find(nb, after, where) + 1
            else:
                at = [i for i, c in enumerate(nb.cells) if running and c.get("id") == running]
                index = at[0] + 1 if at else len(nb.cells)
            new = ipynb_cells.insert(nb, index, source, cell_type)
            return index, str(new.id)

        index, cell_id = await self.change(path, insert)
        return {"success": True, "notebook": self.shown(path), "cell": f"[{index}]", "id": cell_id,
                "note": "inserted, not run", **self.fallback(notebook)}


class RunCell(CellTool):
    name = "run_cell"
    description = (
        "Run a code cell of the user's notebook in their kernel (same namespace as their cells) and return what it "
        "showed: printed output, the last expression's value, figures, or the traceback. The outputs are saved "
        "under the cell. Name the cell by its index or id; edit it first with edit_cell if it needs a fix."
    )
    params: ClassVar[dict[str, Any]] = {"cell": CELL_PARAM, "notebook": NOTEBOOK_PARAM}

    def __init__(self, namespace: Callable[[], dict[str, Any]] | None = None) -> None:
        super().__init__()
        self._namespace = namespace

    async def execute(self, cell: str, notebook: str | None = None) -> ToolOutput:
        from brute_nb.notebook.kernel_tools.kernel_journal import watched
        from brute_nb.notebook.kernel_tools.python_tool import ipython_namespace, run_interruptibly

        namespace = (self._namespace or ipython_namespace)()
        stopped = Ran(error=("KeyboardInterrupt", "stopped by the user", []))
        bridge = self.front(notebook)
        if bridge is not None:
            cell_id, code, kind = await self.live_cell(bridge, cell, notebook)
            if kind != "code":
                raise NotebookFileError(f"cell {cell_id} is a {kind} cell; only code cells run")
            where = str(self.notebook_file(notebook)) if notebook or current_env().get("notebook") else None
            work = watched(code, namespace, lambda: run_source(code, namespace), tool="run_cell",
                           cell=f"id {cell_id}", notebook=where)
            ran = await run_interruptibly(work, stopped)
            bridge.send({"op": "outputs", "id": cell_id, "outputs": ipynb_cells.outputs(ran),
                         "execution_count": ran.count})
            return result_for(cell_id, ran)
        path = self.notebook_file(notebook)

        def locate(nb: Any) -> tuple[int, str, str, str]:
            index = ipynb_cells.find(nb, cell, self.shown(path))
            c = nb.cells[index]
            return index, str(c.get("id", "")), str(c.cell_type), str(c.source)

        index, cell_id, kind, source = await self.look(path, locate)
        if kind != "code":
            raise NotebookFileError(f"cell [{index}] is a {kind} cell; only code cells run")
        work = watched(source, namespace, lambda: run_source(source, namespace), tool="run_cell",
                       cell=f"[{index}] (id {cell_id})", notebook=str(path))
        ran = await run_interruptibly(work, stopped)

        def save(nb: Any) -> None:
            at = ipynb_cells.find(nb, cell_id or str(index), self.shown(path))
            if ipynb_cells.source_of(nb, at) == source:  # the cell changed meanwhile: its new source keeps no output
                ipynb_cells.set_outputs(nb, at, ran)

        await self.change(path, save)
        out = result_for(f"[{index}]", ran)
        note = self.fallback(notebook).get("note")
        return dataclasses.replace(out, text=f"{out.text}\n\n(Note: {note}.)") if note else out


def cell_diff(old: str, new: str) -> str:
    """The edit as the file tools show theirs; a cell's last line has no newline, which is no change to mark."""
    return unified_diff(old.rstrip("\n") + "\n", new.rstrip("\n") + "\n") or "(no change)"


def run_source(source: str, namespace: dict[str, Any]) -> Ran:
    """Run a cell's source like the ``python`` tool, numbered as a person's run of it would be (``run_count``); the
    figures it made are taken (and closed) as Jupyter's inline backend takes them, so they become the cell's outputs
    rather than pile up."""
    from brute_nb.notebook.kernel_tools.python_tool import execute, show_value

    before = _figure_numbers()
    count = run_count.take(source, namespace)
    outcome = execute(source, namespace, label="cell")
    run_count.keep(count, source, outcome.value, outcome.error)
    error = None
    if outcome.error is not None:
        tb = (outcome.traceback or "").split("\n\n", 1)[-1]
        error = (type(outcome.error).__name__, str(outcome.error), tb.splitlines())
    value = None if outcome.value is None or outcome.error is not None else show_value(outcome.value)
    return Ran(outcome.out, outcome.err, value, error, _new_figures(before), outcome.displays, count.number)


def _figure_numbers() -> set[int]:
    if "matplotlib.pyplot" not in sys.modules:
        return set()
    return set(sys.modules["matplotlib.pyplot"].get_fignums())


def _new_figures(before: set[int]) -> list[bytes]:
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    images = []
    for number in sorted(set(plt.get_fignums()) - before):
        figure = plt.figure(number)
        buffer = io.BytesIO()
        # no "Software" text chunk: it names the matplotlib release, so the same figure would be other bytes on
        # another release (a replayed cassette would no longer match it) and the model learns nothing from it.
        figure.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
        plt.close(figure)
        images.append(buffer.getvalue())
    return images


def result_for(label: str, ran: Ran) -> ToolOutput:
    """What the model reads of a run: as the ``python`` tool says it, the figures and displayed images attached."""
    from brute_nb.notebook.kernel_tools.python_tool import displays_for_model, result_text

    error = None
    if ran.error is not None:
        ename, evalue, tb = ran.error
        error = f"Error: {ename}: {evalue}" + ("\n\n" + "\n".join(tb) if tb else "")
    shown, displayed = displays_for_model(ran.displays)
    figures = f"[{len(ran.images)} figure{'s' if len(ran.images) > 1 else ''} attached]" if ran.images else ""
    text = f"Ran cell {label}.\n\n" + result_text(ran.stdout, ran.stderr, ran.result, error, shown, figures)
    pictures = tuple(from_bytes(png, "image/png", f"figure-{i + 1}.png") for i, png in enumerate(ran.images))
    return ToolOutput(text, is_error=ran.error is not None, attachments=pictures + displayed)


EDIT_CELL = EditCell()
INSERT_CELL = InsertCell()
RUN_CELL = RunCell()
