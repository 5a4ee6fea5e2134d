"""The notebook-aware tools: ``notebook`` (read the cells), ``variables`` (the user's namespace) and
``propose_cell`` (put code into a new cell below, unrun).

None of them runs code: ``notebook`` reads the saved ``.ipynb`` and the kernel's own history, ``variables`` reads
values (``repr`` of builtins, pandas and numpy summaries, the class name of anything else) and ``propose_cell``
hands text to the front end: the turn's ``env["insert_cell"](code, explanation)`` where its front end gives one
(the chat widget, whose turns run from comm handlers: a ``set_next_input`` payload would ride on the reply of
whatever cell runs next), else IPython's ``set_next_input``. The ``python`` tool stays the only way to execute.
Every text they return is bounded.
"""

from __future__ import annotations

import re
import reprlib
import types
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from brute_nb.notebook.kernel_tools import ipynb_cells
from brute_nb.notebook.kernel_tools.cell_tools import EDIT_CELL, INSERT_CELL, RUN_CELL, read_document
from brute_nb.notebook.kernel_tools.cells import ERR, CellError, clip, executed_cells, raw_sources, recorder_of
from brute_nb.tools.base import Tool
from brute_nb.tools.context import current_env

LIST_CAP = 12_000
CELL_CAP = 12_000
FIRST_LINE = 80
ROWS = 3
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

ShellSource = Callable[[], Any]


def _ipython() -> Any:
    from IPython import get_ipython

    return get_ipython()


def _text(value: Any) -> str:
    """A notebook field that should be text or a list of lines, as text whatever it holds (the file may be odd)."""
    return "".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class NbCell:
    """A cell of the saved notebook or, with ``count``, one the kernel ran that the saved file lacks."""

    label: str
    kind: str
    source: str
    outputs: str = ""
    error: str = ""

    def line(self) -> str:
        first = next((ln for ln in self.source.splitlines() if ln.strip()), "")
        first = first if len(first) <= FIRST_LINE else first[:FIRST_LINE] + "..."
        flags = [f for f in ("outputs" if self.outputs else "", f"error: {self.error}" if self.error else "") if f]
        return f"{self.label:<7} {self.kind:<8} {first}" + (f"   ({'; '.join(flags)})" if flags else "")

    def full(self) -> str:
        fence = "```python" if self.kind == "code" else "```markdown"
        parts = [f"{self.label} ({self.kind}):\n{fence}\n{self.source.rstrip()}\n```"]
        if self.outputs:
            parts.append("Outputs:\n" + self.outputs)
        return clip("\n".join(parts), CELL_CAP)


def _output_text(output: dict[str, Any]) -> tuple[str, str]:
    """One saved output as text, and its error headline when it is an error."""
    kind = output.get("output_type")
    if kind == "stream":
        return _text(output.get("text")), ""
    if kind == "error":
        tb = _ANSI.sub("", "\n".join(str(t) for t in _list(output.get("traceback"))) or _text(output.get("traceback")))
        head = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return clip(tb or head, 3_000), head
    found = output.get("data")
    data: dict[str, Any] = found if isinstance(found, dict) else {}
    if "text/plain" in data:
        return _text(data["text/plain"]), ""
    return f"[{', '.join(sorted(data)) or 'no data'}]", ""


def saved_cells(path: Path) -> list[NbCell]:
    """The cells of a saved notebook (nbformat 4 JSON), with their outputs as bounded text; a file that is not one
    is a ``NotebookFileError`` naming it."""
    data = ipynb_cells.document(read_document(path), path.name)  # a FIFO, a huge file, a link out: refused unread
    cells = []
    for i, cell in enumerate(data["cells"]):
        texts, error = [], ""
        for output in _list(cell.get("outputs")):
            if not isinstance(output, dict):
                continue
            text, head = _output_text(output)
            texts.append(text.rstrip())
            error = error or head
        cells.append(NbCell(f"[{i}]", str(cell.get("cell_type", "?")), _text(cell.get("source")),
                            clip("\n".join(t for t in texts if t), 4_000), error))
    return cells


def kernel_cells(shell: Any, saved: list[NbCell]) -> list[NbCell]:
    """Cells this kernel ran whose source is not in the saved file: run since the last save (or edited since)."""
    if shell is None:
        return []
    known = {c.source.strip() for c in saved}
    err = shell.user_ns.get(ERR) if isinstance(shell.user_ns.get(ERR), dict) else {}
    out = []
    for cell in executed_cells(shell):
        if cell.source.strip() in known:
            continue
        entry = err.get(cell.count)
        report = entry.report() if isinstance(entry, CellError) else ""
        outputs = "\n".join(t for t in (cell.output and f"Out: {cell.output}", report) if t)
        out.append(NbCell(f"In[{cell.count}]", "code", cell.source, outputs, cell.error))
    return out


class Notebook(Tool):
    """``notebook(action, cell, query)``: the user's notebook, read-only."""

    name = "notebook"
    description = (
        "Read the user's Jupyter notebook (read-only). action=list: every cell with its index, type, first line "
        "and whether it has outputs or an error; action=read with cell='3' (a saved cell's index) or "
        "cell='In[7]' (a cell the kernel ran): the cell's source and outputs; action=search with query: the "
        "cells whose source or outputs contain it. Reads the saved .ipynb file plus the kernel's history for "
        "cells run since the last save, and says which it used."
    )
    params: ClassVar[dict[str, Any]] = {
        "action": {"type": "string", "enum": ["list", "read", "search"], "desc": "what to do", "required": True},
        "cell": {"type": "string", "desc": "for read: a saved cell's index ('3') or a kernel cell ('In[7]')"},
        "query": {"type": "string", "desc": "for search: text to look for (case-insensitive)"},
    }

    def __init__(self, notebook: Callable[[], Path | None] | None = None, shell: ShellSource = _ipython) -> None:
        self._notebook = notebook
        self._shell = shell

    def notebook_path(self) -> Path | None:
        if self._notebook is not None:
            return self._notebook()
        path = current_env().get("notebook")  # the session's notebook, which it hands each turn's env
        return Path(path) if path else None

    def cells(self) -> tuple[str, list[NbCell], list[NbCell]]:
        """Where the cells came from, the saved ones, and the kernel's unsaved ones."""
        path = self.notebook_path()
        saved: list[NbCell] = []
        if path is not None and path.is_file():
            saved = saved_cells(path)
            when = datetime.fromtimestamp(path.stat().st_mtime).isoformat(sep=" ", timespec="seconds")
            source = f"the saved notebook {path} (saved {when})"
        else:
            source = f"no saved notebook file ({path or 'path unknown'}), so only the kernel's history"
        extra = kernel_cells(self._shell(), saved)
        if extra:
            source += f"; {len(extra)} cell{'s' if len(extra) > 1 else ''} from the kernel's history, run since " \
                      "the last save (labelled In[n])"
        return "Source: " + source, saved, extra

    def execute(self, action: str, cell: str | None = None, query: str | None = None) -> str:
        source, saved, extra = self.cells()
        everything = saved + extra
        if action == "list":
            lines = [c.line() for c in saved]
            if extra:
                lines.append("Run in this kernel since the last save:")
                lines += [c.line() for c in extra]
            return clip(f"{source}\n" + ("\n".join(lines) or "(no cells)"), LIST_CAP)
        if action == "read":
            if not cell:
                return "Error: action=read needs cell, e.g. cell='3' or cell='In[7]' (see action=list)"
            label = cell.strip()
            label = f"[{label}]" if label.isdigit() else label.replace(" ", "")
            found = next((c for c in everything if c.label == label), None)
            if found is None:
                return f"Error: no cell {cell!r}. {source}. Use action=list to see the cells."
            return f"{source}\n\n{found.full()}"
        if not query:
            return "Error: action=search needs query"
        needle = query.lower()
        hits = [c for c in everything if needle in c.source.lower() or needle in c.outputs.lower()]
        if not hits:
            return f"{source}\nNo cell contains {query!r}."
        lines = [c.line() for c in hits]
        return clip(f"{source}\n{len(hits)} cell{'s' if len(hits) > 1 else ''} contain {query!r}:\n" +
                    "\n".join(lines), LIST_CAP)


_SIMPLE = (int, float, complex, bool, str, bytes, type(None), list, tuple, dict, set, frozenset, range)
_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlist, _repr.maxdict = 80, 80, 8, 6


def _shape(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return f"shape={shape}"
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset | range):
        return f"len={len(value)}"
    return ""


def describe_value(value: Any, *, detail: bool = False) -> str:
    """A value summarised without running the user's own code: builtins by ``reprlib``, pandas and numpy by
    their own summaries, anything else by its class."""
    package = type(value).__module__.split(".")[0]
    if package == "pandas" and hasattr(value, "columns") and hasattr(value, "head"):
        dtypes = ", ".join(f"{k}: {v}" for k, v in value.dtypes.items())
        rows = value.head(ROWS if not detail else 10).to_string()
        return f"columns ({dtypes})\n{rows}"
    if package == "pandas" and hasattr(value, "dtype") and hasattr(value, "head"):
        return f"dtype {value.dtype}\n{value.head(ROWS if not detail else 10).to_string()}"
    if package == "numpy" and hasattr(value, "dtype"):
        import numpy as np

        with np.printoptions(threshold=20 if not detail else 200, edgeitems=3):
            return f"dtype {value.dtype}: {value!s}"
    if isinstance(value, _SIMPLE):
        return _repr.repr(value) if not detail else clip(repr(value), 4_000)
    if isinstance(value, types.FunctionType):
        return f"function {value.__qualname__}"
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__}"
    return f"<{type(value).__module__}.{type(value).__qualname__} object>"


def user_variables(namespace: dict[str, Any], hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """The user's own names: not private, not modules, not IPython's (``In``, ``Out``, ``Err``...)."""
    hidden = hidden or {}
    return {k: v for k, v in namespace.items()
            if not k.startswith("_") and not isinstance(v, types.ModuleType)
            and not (k in hidden and hidden[k] is v)}


class Variables(Tool):
    """``variables(name)``: the user's namespace as the model needs it, read-only."""

    name = "variables"
    description = (
        "List the variables in the user's Jupyter kernel (read-only; no code runs): name, type, shape or length "
        "and a one-line summary; DataFrames with their dtypes and first rows. Pass name to see one variable in "
        "more detail. To compute anything, use the python tool if it is enabled."
    )
    params: ClassVar[dict[str, Any]] = {
        "name": {"type": "string", "desc": "one variable to show in detail (default: list them all)"},
    }

    def __init__(self, shell: ShellSource = _ipython) -> None:
        self._shell = shell

    def execute(self, name: str | None = None) -> str:
        shell = self._shell()
        if shell is None:
            return "Error: no IPython kernel here, so there are no notebook variables to show"
        found = user_variables(shell.user_ns, getattr(shell, "user_ns_hidden", None))
        if name:
            if name not in found:
                close = ", ".join(sorted(k for k in found if name.lower() in k.lower())[:10])
                return f"Error: no variable {name!r}" + (f"; similar: {close}" if close else "")
            value = found[name]
            head = f"{name}: {type(value).__name__} {_shape(value)}".rstrip()
            return clip(f"{head}\n{describe_value(value, detail=True)}", CELL_CAP)
        if not found:
            return "(the user has defined no variables yet)"
        lines = []
        for key, value in found.items():
            summary = describe_value(value)
            head = f"{key}: {type(value).__name__} {_shape(value)}".rstrip()
            if "\n" in summary:
                lines.append(f"{head}\n" + "\n".join("    " + ln for ln in summary.splitlines()))
            else:
                lines.append(f"{head} = {summary}" if isinstance(value, _SIMPLE) else f"{head}  {summary}")
        return clip("\n".join(lines), LIST_CAP)


class ProposeCell(Tool):
    """``propose_cell(code, explanation)``: a new cell below the current one, for the user to review; never run."""

    name = "propose_cell"
    description = (
        "Propose Python code as a new notebook cell just below the current one. The code is NOT run: the user "
        "reviews it and runs it if they agree. Use it to fix a failing cell or to give the user code to run. "
        "Only the last proposal of a turn is inserted."
    )
    params: ClassVar[dict[str, Any]] = {
        "code": {"type": "string", "desc": "the complete cell source", "required": True},
        "explanation": {"type": "string", "desc": "one or two sentences: what the cell does and why"},
    }

    def __init__(self, shell: ShellSource = _ipython) -> None:
        self._shell = shell

    def execute(self, code: str, explanation: str = "") -> str:
        front_end = current_env().get("insert_cell")
        if front_end is not None:
            return str(front_end(code, explanation))
        shell = self._shell()
        if shell is None:
            return "Error: no IPython kernel here, so no cell can be proposed; show the code in your reply instead"
        notebook = current_env().get("notebook")
        if not insert_cell(shell, code, Path(notebook) if notebook else None):
            return "The cell just below the current one already holds this code (not run), so nothing was inserted."
        return "Proposed as a new cell below the current one. It is not run: the user reviews and runs it."


def insert_cell(shell: Any, code: str, notebook: Path | None = None) -> bool:
    """The front end puts ``code`` in a new cell below, unrun (a ``set_next_input`` payload in a kernel); False
    when the saved cell just below already holds it: a notebook run again (Run All) must not gain a copy each
    time."""
    code = code.rstrip("\n")
    if code.strip() and (cell_below(shell, notebook) or "").strip() == code.strip():
        return False
    shell.set_next_input(code, replace=False)
    return True


def cell_below(shell: Any, notebook: Path | None) -> str | None:
    """The source of the saved code cell just below the running one, or None when that is unknown.

    The running cell is found by the id JupyterLab sends with the request (``cellId``), else, where no id comes
    (nbclient, nbval), as the one saved cell whose source is the running cell's."""
    if notebook is None:
        return None
    try:
        cells = ipynb_cells.document(read_document(notebook), notebook.name)["cells"]
    except (OSError, ValueError):  # NotebookFileError is one: an unreadable notebook is an unknown cell below
        return None
    parent = getattr(shell, "parent_header", None)
    meta = parent.get("metadata") if isinstance(parent, dict) else None
    cell_id = meta.get("cellId") if isinstance(meta, dict) else None
    index = next((i for i, c in enumerate(cells) if cell_id and c.get("id") == cell_id), None)
    if index is None:
        recorder = recorder_of(shell)  # knows the source also of a cell run without history (nbval)
        raw = raw_sources(shell)
        running = (recorder.source if recorder is not None and recorder.running else raw[-1] if raw else "").strip()
        same = [i for i, c in enumerate(cells) if running and _text(c.get("source")).strip() == running]
        index = same[0] if len(same) == 1 else None
    if index is None or index + 1 >= len(cells) or cells[index + 1].get("cell_type") != "code":
        return None
    return _text(cells[index + 1].get("source"))


CODE_BLOCK = re.compile(r"```[ \t]*(?:python|py|ipython|python3)?[ \t]*\n(.*?)```", re.DOTALL)


def last_code_block(text: str) -> str | None:
    """The last fenced code block of a reply (Python or unlabelled), or None."""
    blocks = CODE_BLOCK.findall(text)
    return blocks[-1].rstrip("\n") if blocks else None


NOTEBOOK = Notebook()
VARIABLES = Variables()
PROPOSE_CELL = ProposeCell()
# One instance each, named so the brute_nb.tools entry points reach the very objects "all" holds.
NOTEBOOK_TOOLS: dict[str, Tool] = {"notebook": NOTEBOOK, "variables": VARIABLES, "propose_cell": PROPOSE_CELL,
                                   "edit_cell": EDIT_CELL, "insert_cell": INSERT_CELL, "run_cell": RUN_CELL}
"""On by default in a notebook (``--tools all``; the cell tools ask first, class ``notebook``); ``read-only`` keeps
``notebook`` and ``variables``."""
READ_ONLY_NAMES = ("notebook", "variables")
