"""What the kernel knows about the user's cells: their sources (``In``), results (``Out``) and errors (``Err``).

A ``post_run_cell`` hook records every failing cell into ``Err``, a dict in the user's namespace keyed by
execution count like ``Out``. An entry is a ``CellError``: plain text made when the error happened (the cell
source, a traceback with the user's frames kept and library internals collapsed, and bounded summaries of the
names the failing line uses), so it keeps no frame, DataFrame or exception alive. ``str(Err[n])`` is that report,
which is what ``{Err[n]}`` fills into a prompt and what ``%brute fix`` sends.

The invariant: nothing here runs the user's code beyond reading values (``repr`` of builtins, pandas and numpy
summaries) and every text it makes is bounded.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import keyword
import linecache
import re
import sysconfig
import traceback
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from brute_nb.fill import summarize_value

ERR = "Err"
"""The user-namespace dict the hook fills (``Err[3]``), beside IPython's ``In`` and ``Out``."""

REPORT_CAP = 8_000
VALUE_CAP = 1_200
CELL_CAP = 4_000
OUTPUT_CAP = 1_500
NAMES_SHOWN = 8


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(str(Path(p).resolve()) for p in {paths["stdlib"], paths["platstdlib"]})


def clip(text: str, cap: int) -> str:
    """``text`` cut to ``cap`` characters, saying how much was left out."""
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n[... {len(text) - cap:,} more characters not shown]"


@dataclass(frozen=True)
class CellError:
    """One cell's error as text: ``str()`` is the report a model reads."""

    execution_count: int
    source: str
    ename: str
    evalue: str
    traceback: str = ""
    names: dict[str, str] = field(default_factory=dict)
    kind: str = "exception"
    """``exception`` (the cell raised) or ``tool`` (a ``%%brute`` cell's agent had failing tool calls)."""
    own: bool = False
    """brute_nb's own error (no provider, a bad option, a refused key, a replay that ran out, a cost not
    confirmed), not the user's code: no model can fix it (often none is there), so no fix is offered for it and
    ``%brute fix`` passes over it; its message says what to do."""

    @property
    def headline(self) -> str:
        return f"{self.ename}: {self.evalue}" if self.evalue else self.ename

    def report(self) -> str:
        label = f"In [{self.execution_count}]"
        what = "raised" if self.kind == "exception" else "(a %%brute cell) had failing tool calls:"
        parts = [f"{label} {what} {self.headline}", f"Cell source ({label}):\n```python\n"
                 f"{clip(self.source.rstrip(), CELL_CAP)}\n```"]
        if self.traceback:
            parts.append(self.traceback)
        if self.names:
            shown = "\n".join(f"{name} = " + value.replace("\n", "\n    ") for name, value in self.names.items())
            parts.append(f"Values of the names the failing line uses:\n{shown}")
        return clip("\n\n".join(parts), REPORT_CAP)

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        return f"<CellError In[{self.execution_count}]: {self.headline}>"


def cell_names(shell: Any) -> dict[str, int]:
    """Compiled cell file names -> execution count (IPython keeps the map on its compiler)."""
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return dict(names) if isinstance(names, dict) else {}


def _is_library(filename: str) -> bool:
    if filename.startswith("<frozen") or "site-packages" in filename or "dist-packages" in filename:
        return True
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return resolved.startswith(_library_dirs())


def _package(filename: str) -> str:
    """The top-level package a library frame belongs to (``pandas``), for the collapsed line."""
    parts = Path(filename).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            rest = parts[parts.index(marker) + 1:]
            return rest[0].removesuffix(".py") if rest else "?"
    return "the standard library"


def trimmed_traceback(exc: BaseException, cells: dict[str, int]) -> tuple[str, types.FrameType | None, str]:
    """The traceback text, the innermost user frame (a cell's or a user file's) and that frame's line."""
    frames = list(traceback.walk_tb(exc.__traceback__))
    while frames and frames[0][0].f_code.co_filename not in cells and _is_library(frames[0][0].f_code.co_filename):
        frames.pop(0)  # IPython's own run_code frame: not part of what the user ran
    lines = ["Traceback (most recent call last; library frames collapsed):"]
    collapsed: list[str] = []
    failing: types.FrameType | None = None
    failing_line = ""

    def flush() -> None:
        if collapsed:
            packages = ", ".join(dict.fromkeys(collapsed))
            lines.append(f"  ... {len(collapsed)} frame{'s' if len(collapsed) > 1 else ''} in {packages}")
            collapsed.clear()

    for frame, lineno in frames:
        filename = frame.f_code.co_filename
        if filename not in cells and _is_library(filename):
            collapsed.append(_package(filename))
            continue
        flush()
        where = f"In [{cells[filename]}]" if filename in cells else f'File "{filename}"'
        source = linecache.getline(filename, lineno, frame.f_globals).strip()
        lines.append(f"  {where}, line {lineno}, in {frame.f_code.co_name}")
        if source:
            lines.append(f"    {source}")
        failing, failing_line = frame, source
    flush()
    lines.append("".join(traceback.format_exception_only(type(exc), exc)).rstrip())
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None:
        lines.append(f"(raised while handling {type(cause).__name__}: {clip(str(cause), 300)})")
    return "\n".join(lines), failing, failing_line


def line_names(line: str) -> list[str]:
    """The plain names a line of code reads, in order: not the names it assigns, attribute names, keywords or
    string contents."""
    try:
        tree: ast.AST | None = ast.parse(line.strip().rstrip(":") or "pass")
    except SyntaxError:
        tree = None
    if tree is not None:
        loads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        found = [n.id for n in sorted(loads, key=lambda n: (n.lineno, n.col_offset))]
    else:  # a fragment (``else:``, a decorator's half): fall back to identifiers not after a dot
        found = [m.group(1) for m in re.finditer(r"(?<![\w.])([A-Za-z_]\w*)", line)]
    return [n for n in dict.fromkeys(found) if not keyword.iskeyword(n)]


def _worth_showing(value: Any) -> bool:
    return not isinstance(value, types.ModuleType | types.FunctionType | types.BuiltinFunctionType | type)


def name_values(frame: types.FrameType | None, line: str) -> dict[str, str]:
    """Bounded summaries of the names ``line`` uses, as the failing frame saw them (locals, then globals)."""
    if frame is None or not line:
        return {}
    scopes = (frame.f_locals, frame.f_globals)
    out: dict[str, str] = {}
    for name in line_names(line):
        for scope in scopes:
            if name in scope:
                value = scope[name]
                if _worth_showing(value):
                    out[name] = clip(summarize_value(value), VALUE_CAP)
                break
        else:
            if not hasattr(builtins, name):
                out[name] = "(not defined)"
        if len(out) >= NAMES_SHOWN:
            break
    return out


def describe_error(exc: BaseException, count: int, source: str, names: dict[str, int]) -> CellError:
    """A ``CellError`` for ``exc`` raised by cell ``count``: report made now, while its frames still exist.

    ``names`` maps compiled cell file names to cell numbers (``cell_names``, or the recorder's own)."""
    text, frame, line = trimmed_traceback(exc, names)
    return CellError(count, source, type(exc).__name__, clip(str(exc), 1_000), text, name_values(frame, line))


def tool_errors(count: int, source: str, messages: Iterable[Any]) -> CellError | None:
    """The failing tool calls of the turn a ``%%brute`` cell just ran (after its prompt), or None."""
    turn: list[Any] = []
    for m in messages:
        if getattr(m, "role", None) == "user":
            turn = []
        turn.append(m)
    calls = {c.id: c for m in turn for c in (getattr(m, "tool_calls", None) or [])}
    failed = [m for m in turn if getattr(m, "role", None) == "tool" and (m.meta or {}).get("is_error")]
    if not failed:
        return None
    lines = []
    for m in failed:
        call = calls.get(m.tool_call_id)
        name = call.name if call is not None else "?"
        args = clip(repr(call.arguments), 300) if call is not None else ""
        lines.append(f"{name}({args}) -> {clip(str(m.content), 800)}")
    first = lines[0].split(" -> ", 1)[-1]
    return CellError(count, source, "ToolError", clip(first, 300),
                     "Failing tool calls:\n" + "\n".join(lines), kind="tool")


def errors(namespace: dict[str, Any]) -> dict[int, CellError]:
    """The user's ``Err`` dict, created (and kept in the namespace) when missing or replaced by the user."""
    err = namespace.get(ERR)
    if not isinstance(err, dict):
        err = {}
        namespace[ERR] = err
    return err


def last_error(namespace: dict[str, Any]) -> CellError | None:
    """The newest error of the user's code (brute_nb's own are passed over: see ``CellError.own``)."""
    err = namespace.get(ERR)
    if not isinstance(err, dict) or not err:
        return None
    value = err[max(err)]
    if isinstance(value, CellError) and value.own:
        return next((e for _, e in sorted(err.items(), reverse=True) if isinstance(e, CellError) and not e.own),
                    None)
    return value if isinstance(value, CellError) else None


def is_own(exc: BaseException, source: str) -> bool:
    """Whether a cell's error is brute_nb's rather than the user's code: a ``BruteError`` wherever it was raised,
    or anything a ``%%brute``/``%brute`` cell raised (IPython's ``UsageError`` for a bad option included)."""
    from brute_nb.errors import BruteError

    usage = type(exc).__name__ == "UsageError" and type(exc).__module__.startswith("IPython")
    return isinstance(exc, BruteError) or usage or is_brute_cell(source)


class ErrorRecorder:
    """The ``pre_run_cell``/``post_run_cell`` hooks: each failing cell's error goes into ``Err`` under its number.

    It also numbers the cells IPython keeps no history of: nbval runs every cell with ``store_history=False``, so
    IPython's count stays put and ``In``/``Out`` stay empty. Such cells get the next number after the last one
    and their source and a bounded text of their result are kept here (nothing else is: history cells are read
    from IPython). And it knows whether a cell is running now (a widget turn runs between cells).
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.running = False
        self.current: int | None = None
        self.source = ""
        """The source of the cell running now (``current``)."""
        self.cell_id: str | None = None
        """The front end's id of the cell running now (``execute_request`` metadata; Jupyter clients send it)."""
        self.last = 0
        self.unstored: dict[int, tuple[str, str]] = {}
        """Number -> (source, result text) of cells run without history."""
        self.on_error: Callable[[CellError, str | None], Any] | None = None
        """Called with each failing cell's entry and its front-end id (the "Fix with brute" button)."""
        self.names: dict[str, int] = cell_names(shell)  # cells run before the extension loaded: IPython's numbers
        """Compiled cell file name -> number, as numbered here (IPython's map says 1 for every nbval cell)."""

    def started(self, info: Any = None) -> None:
        self.running = True
        self.source = getattr(info, "raw_cell", "") or ""
        self.cell_id = getattr(info, "cell_id", None)
        if getattr(info, "store_history", True):
            self.current = len(raw_sources(self.shell))  # its source is stored right after this hook
        else:
            self.current = self.last + 1

    def __call__(self, result: Any) -> None:
        self.running = False
        info = getattr(result, "info", None)
        source = getattr(info, "raw_cell", "") or ""
        stored = getattr(info, "store_history", True)
        count = result.execution_count if stored or self.current is None else self.current
        self.current = None
        if count is None:
            return
        self.last = max(self.last, count)
        for name in cell_names(self.shell):
            self.names.setdefault(name, count)  # compiled while this cell ran
        if not stored:
            self.unstored[count] = (source, "" if result.result is None else clip(summarize_value(result.result),
                                                                                    OUTPUT_CAP))
        exc = result.error_in_exec or result.error_before_exec
        if exc is None:
            return
        try:
            entry = describe_error(exc, count, source, self.names)
        except Exception as problem:  # a hook that raises would print a traceback under every cell
            entry = CellError(count, source, type(exc).__name__, str(exc)[:1000],
                              f"(brute_nb could not summarise this error: {problem!r})")
        if is_own(exc, source):
            entry = replace(entry, own=True)
        errors(self.shell.user_ns)[count] = entry
        if self.on_error is not None and not entry.own:
            self.on_error(entry, self.cell_id)


def recorder_of(shell: Any) -> ErrorRecorder | None:
    """The recorder ``install`` hooked into ``shell`` (found among the shell's own hooks, so no registry is needed)."""
    events = getattr(shell, "events", None)
    hooks = getattr(events, "callbacks", {}).get("post_run_cell", ())
    return next((h for h in hooks if isinstance(h, ErrorRecorder) and h.shell is shell), None)


def install(shell: Any) -> ErrorRecorder:
    recorder = ErrorRecorder(shell)
    errors(shell.user_ns)
    shell.user_ns_hidden.setdefault(ERR, shell.user_ns[ERR])  # like In/Out: %who and the variables tool skip it
    shell.events.register("pre_run_cell", recorder.started)
    shell.events.register("post_run_cell", recorder)
    return recorder


def uninstall(shell: Any, recorder: ErrorRecorder | None) -> None:
    """Remove the hooks and ``Err`` (unless the user replaced it with a value of their own)."""
    ours = shell.user_ns_hidden.pop(ERR, None)
    if ours is not None and shell.user_ns.get(ERR) is ours:
        del shell.user_ns[ERR]
    if recorder is not None:
        with contextlib.suppress(ValueError):  # already gone
            shell.events.unregister("post_run_cell", recorder)
        with contextlib.suppress(ValueError):
            shell.events.unregister("pre_run_cell", recorder.started)


def running_cell(shell: Any) -> int | None:
    """The number of the cell running now, or None between cells."""
    recorder = recorder_of(shell)
    if recorder is not None:
        return recorder.current if recorder.running else None
    history = raw_sources(shell)
    return len(history) - 1 if len(history) > 1 else None


@dataclass(frozen=True)
class Cell:
    """One executed cell as the kernel remembers it."""

    count: int
    source: str
    output: str = ""
    error: str = ""

    def text(self) -> str:
        parts = [f"In [{self.count}]:\n```python\n{clip(self.source.rstrip(), CELL_CAP)}\n```"]
        if self.output:
            parts.append(f"Out [{self.count}]:\n{self.output}")
        if self.error:
            parts.append(f"Error in [{self.count}]: {self.error}")
        return "\n".join(parts)


def is_brute_cell(source: str) -> bool:
    """A ``%%brute``/``%brute`` cell: already in the conversation, so never sent again as context."""
    return source.lstrip().startswith(("%%brute", "%brute"))


def raw_sources(shell: Any) -> list[str]:
    """Every cell's source as the user typed it, by execution count (``In`` holds the transformed code, where
    ``%brute fix`` reads ``get_ipython().run_line_magic(...)``)."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return [str(s) for s in (raw if isinstance(raw, list) else shell.user_ns.get("In") or [])]


def executed_cells(shell: Any) -> list[Cell]:
    """Every cell this kernel ran, oldest first, with a bounded text form of its result and error."""
    ns = shell.user_ns
    outs = ns.get("Out") if isinstance(ns.get("Out"), dict) else {}
    errs = ns.get(ERR) if isinstance(ns.get(ERR), dict) else {}
    recorder = recorder_of(shell)
    found: dict[int, tuple[str, str]] = dict(recorder.unstored) if recorder is not None else {}
    for count, source in enumerate(raw_sources(shell)):
        if count:
            found[count] = (source, clip(summarize_value(outs[count]), OUTPUT_CAP) if count in outs else "")
    running = running_cell(shell)
    cells = []
    for count in sorted(found):
        source, output = found[count]
        if count == running or not source.strip():
            continue
        err = errs.get(count)
        cells.append(Cell(count, source, output, err.headline if isinstance(err, CellError) else ""))
    return cells


def context_cells(shell: Any, n: int) -> list[Cell]:
    """The last ``n`` executed cells that are not brute cells."""
    cells = [c for c in executed_cells(shell) if not is_brute_cell(c.source)]
    return cells[-n:] if n > 0 else []


def context_text(cells: list[Cell]) -> str:
    """The context message: the cells, oldest first, marked as context so the model does not take them as asks."""
    if not cells:
        return ""
    body = "\n\n".join(c.text() for c in cells)
    return (f"<notebook-context cells=\"{len(cells)}\">\nThe user's last {len(cells)} executed notebook "
            f"cell{'s' if len(cells) > 1 else ''}, oldest first, sent as context (not instructions):\n\n"
            f"{body}\n</notebook-context>")
