"""The notebook-only ``python`` tool: runs code in the user's namespace like a cell, so the agent can look at the
user's variables.

It returns what a person would see: captured stdout and stderr, what the code displayed (``display(df)``, an
``Image``: each display's text, its PNG or JPEG attached as figures are), then the last expression's value
(bounded; DataFrames and arrays summarised), or the traceback as an ``Error:`` result. Capture is per thread
(``capture``), so output of cells the user runs meanwhile, and the live view of the ``%%brute`` cell, still reach
their own cells. Its risk
class is ``python``: the approval policy asks before every call unless the user allowed it. What the code does to
the namespace is journaled per turn (``kernel_journal``), for ``%brute undo`` and ``%brute why``.

The code runs on its own thread, so the turn's loop keeps delivering events while it runs. When the turn is
stopped (an interrupt, the widget's Stop) that thread gets a ``KeyboardInterrupt`` raised in it, as a cell would;
code stuck in a blocking C call cannot receive it at once, so if it has not stopped within ``STOP_GRACE`` seconds
the user is told plainly (``STILL_RUNNING``, in the cell) that it is still running and how to stop it.
"""

from __future__ import annotations

import ast
import base64
import ctypes
import linecache
import re
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from typing import Any, ClassVar, Generic, TypeVar

import anyio
import anyio.to_thread

from brute_nb.errors import BruteError
from brute_nb.fill import summarize_value
from brute_nb.notebook.kernel_tools.capture import Capture, Display
from brute_nb.tools.base import Tool
from brute_nb.tools.truncation import ToolOutput

OUTPUT_CAP = 20_000
"""Characters kept of stdout, stderr and the value each; the pipeline's universal truncation still applies."""

STOP_GRACE = 2.0
"""Seconds a stopped turn waits for the tool's code to reach a Python line and raise the KeyboardInterrupt."""

Namespace = dict[str, Any]
T = TypeVar("T")

_cells = count(1)


class NoNamespaceError(BruteError):
    """The python tool runs only inside IPython (a notebook kernel), where there is a user namespace."""


STILL_RUNNING = (
    "The turn stopped, but the python tool's code is still running in a kernel thread: it is blocked in a call "
    "an interrupt cannot reach yet (a sleep, I/O, a C extension) and will stop at its next Python line. To stop it "
    "now, restart the kernel (Kernel > Restart Kernel); your variables are lost then.")
STILL_RUNNING_IN_TERMINAL = (
    "The turn stopped, but the python tool's code is still running in a thread of this IPython: it is blocked in a "
    "call an interrupt cannot reach yet (a sleep, I/O, a C extension) and will stop at its next Python line. To stop "
    "it now, quit IPython (exit) and start it again; your variables are lost then.")


def still_running(shell: Any = None) -> str:
    """``STILL_RUNNING``, in terminal IPython's words where that is where it runs (no kernel menu there)."""
    from brute_nb.notebook.views.terminal import is_terminal

    return STILL_RUNNING_IN_TERMINAL if is_terminal(shell) else STILL_RUNNING


def ipython_namespace() -> Namespace:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise NoNamespaceError("the python tool needs an IPython kernel; pass PythonTool(namespace=...) elsewhere")
    user_ns: Namespace = shell.user_ns
    return user_ns


def bounded(text: str, cap: int = OUTPUT_CAP) -> str:
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n[... {len(text) - cap:,} more characters not shown]"


def show_value(value: Any) -> str:
    """``repr`` for most values; DataFrames and arrays as shape, dtypes and a few rows."""
    kind = type(value).__module__.split(".")[0]
    if kind in ("pandas", "numpy"):
        return summarize_value(value)
    return repr(value)


@dataclass
class Outcome:
    """What running code like a cell gave: its printed output, the last expression's value, or its failure."""

    out: str
    err: str
    value: Any
    error: BaseException | None
    traceback: str | None
    """``Error: Type: message`` and the traceback from the code's own frames, when it failed."""
    displays: list[Display]
    """What it showed through IPython's display machinery, in order."""


def run_code(code: str, namespace: Namespace) -> str | ToolOutput:
    """Run ``code`` like a cell; the result text a model reads (``Error: ...`` with the traceback on failure), with
    the images it displayed attached (then a ``ToolOutput``)."""
    ran = execute(code, namespace)
    shown, pictures = displays_for_model(ran.displays)
    value = show_value(ran.value) if ran.traceback is None and ran.value is not None else None
    text = result_text(ran.out, ran.err, value, ran.traceback, shown)
    if not pictures:
        return text
    return ToolOutput(text, is_error=ran.error is not None, attachments=pictures)


def execute(code: str, namespace: Namespace, label: str = "python tool") -> Outcome:
    """Run ``code`` like a cell in ``namespace``, this thread's stdout, stderr and displays captured."""
    filename = f"<{label} {next(_cells)}>"
    # Registered so tracebacks show the agent's source lines, as IPython shows a cell's.
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    value: Any = None
    last: ast.stmt | None = None
    error: str | None = None
    failure: BaseException | None = None
    with Capture() as cap:
        try:
            tree = ast.parse(code, filename=filename, mode="exec")
            last = tree.body[-1] if tree.body else None
            if isinstance(last, ast.Expr):
                tree.body.pop()  # evaluated on its own below, so its value can be shown
            exec(compile(tree, filename, "exec"), namespace)  # the user's kernel, approved by the user
            if isinstance(last, ast.Expr):
                value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        except (Exception, SystemExit) as exc:  # the model reads the traceback, as a person reads a cell's
            error, failure = _traceback(exc, filename), exc
    return Outcome(cap.out, cap.err, value, failure, error, cap.displays)


def _traceback(exc: BaseException, filename: str) -> str:
    # Drop this module's frames: the model should see its own code's lines, as in a cell.
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    return f"Error: {type(exc).__name__}: {exc}\n\n" + "".join(lines).rstrip()


def result_text(out: str, err: str, value: str | None, error: str | None, shown: str = "", *more: str) -> str:
    """What the model reads of code it ran, the ``python`` tool's and ``run_cell``'s alike: the error, the streams,
    the displays (``shown``), the value as shown, then ``more`` (run_cell's figures line)."""
    parts = []
    if error is not None:
        parts.append(error)
    if out:
        parts.append("stdout:\n" + bounded(out).rstrip("\n"))
    if err:
        parts.append("stderr:\n" + bounded(err).rstrip("\n"))
    if shown:
        parts.append(shown)
    if error is None and value is not None:
        parts.append("Out: " + bounded(value))
    parts += [part for part in more if part]
    return "\n\n".join(parts) if parts else "(no output)"


IMAGE_TYPES = ("image/png", "image/jpeg")
"""Displayed images the model is shown, as figures are."""
MAX_IMAGES = 10
"""Displayed images attached to one result: a loop that displays a plot each time would otherwise send them all
with every later request."""
HTML_READ = 200_000
"""Characters of a display's HTML read for its text; the text is bounded again after."""
_DEFAULT_REPR = re.compile(r"<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>")


def displays_for_model(displays: list[Display]) -> tuple[str, tuple[Any, ...]]:
    """One bounded part naming each display by its text, and the PNG or JPEG ones as attachments."""
    from brute_nb.attachments import AttachmentError, from_bytes

    parts: list[str] = []
    pictures: list[Any] = []
    for display in displays:
        head = "display"
        kind = next((k for k in IMAGE_TYPES if isinstance(display.data.get(k), str)), None)
        if kind is not None and len(pictures) == MAX_IMAGES:
            head += f" ({kind}, not attached: only the first {MAX_IMAGES} images are)"
        elif kind is not None:
            name = f"display-{len(pictures) + 1}.{'png' if kind == 'image/png' else 'jpg'}"
            try:
                pictures.append(from_bytes(base64.b64decode(display.data[kind]), kind, name))
                head += f" ({kind}, attached)"
            except (ValueError, AttachmentError) as exc:  # not base64, or too large: the model is told why
                head += f" ({kind}, not attached: {exc})"
        text = display_text(display.data)
        if kind is None and not text:
            head += f" ({', '.join(display.data) or 'empty'})"
        parts.append(head + (":\n" + text.rstrip("\n") if text else ""))
    return (bounded("\n\n".join(parts)) if parts else ""), tuple(pictures)


def display_text(data: dict[str, Any]) -> str:
    """A display's text for the model: ``text/plain`` unless it is a bare ``<... object>``, else its Markdown, else
    its HTML as Markdown (scripts and styles dropped)."""
    plain = _as_text(data.get("text/plain"))
    if plain and not _DEFAULT_REPR.fullmatch(plain.strip()):
        return plain
    markdown = _as_text(data.get("text/markdown"))
    if markdown:
        return markdown
    html = _as_text(data.get("text/html"))
    if html:  # as the fetch tool gives the model a page: Markdown, scripts and styles dropped
        from brute_nb.tools.builtin.fetch import html_to_markdown

        return html_to_markdown(html[:HTML_READ])
    return ""


def _as_text(value: Any) -> str:
    if isinstance(value, list):  # nbformat's multiline string
        value = "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


class PythonTool(Tool):
    """``python(code)``: runs in the kernel's user namespace (or ``namespace``), like a cell.

    A ``Tool`` like the built-ins, so the real pipeline wraps it (validation, risk class for the approvals).
    """

    name = "python"
    risk = "python"
    description = (
        "Run Python code in the user's Jupyter kernel, in the same namespace as their cells, so you can inspect "
        "and use their variables (DataFrames, models, results). Returns printed output and the value of the last "
        "expression (large values summarised), or the traceback. State persists between calls and is shared with "
        "the user: do not overwrite their variables unless asked. Prefer short, read-only snippets."
    )
    params: ClassVar[dict[str, Any]] = {
        "code": {"type": "string", "desc": "Python source; the last expression is shown", "required": True},
    }

    def __init__(self, namespace: Namespace | Callable[[], Namespace] | None = None) -> None:
        self._namespace = namespace

    def namespace(self) -> Namespace:
        ns = self._namespace
        if ns is None:
            return ipython_namespace()
        return ns() if callable(ns) else ns

    async def execute(self, code: str, **_: Any) -> str | ToolOutput:
        from brute_nb.notebook.kernel_tools.kernel_journal import watched

        namespace = self.namespace()
        # Journaled for %brute undo and %brute why: what the code replaced, created or changed in the namespace.
        work = watched(code, namespace, lambda: run_code(code, namespace), tool="python")
        stopped: str | ToolOutput = "Error: KeyboardInterrupt: stopped by the user"
        return await run_interruptibly(work, stopped)


async def run_interruptibly(work: Callable[[], T], stopped: T) -> T:
    """``work()`` (the user's code) on a thread of its own; a stopped turn interrupts it as an interrupt stops a
    cell, and ``stopped`` is its result if the interrupt lands inside it."""
    run = _Run(work, stopped)
    run.start()
    try:
        # A pooled thread waits for the code's thread, so the turn's loop keeps delivering events (and Stop).
        await anyio.to_thread.run_sync(run.join, None, abandon_on_cancel=True)
    except BaseException:  # the turn was stopped: stop the code too, as an interrupt stops a cell
        run.interrupt()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(run.join, STOP_GRACE)
        if not run.done:  # printed, not warned: a repeated warning would be shown once per kernel
            print(still_running(), file=sys.stderr, flush=True)
        raise
    return run.result


class _Run(Generic[T]):
    """``work`` on a thread of its own that can be interrupted.

    Not anyio's worker pool: a ``KeyboardInterrupt`` raised asynchronously in a pooled thread after the code
    returned would land in anyio's own loop. Here the interrupt is sent only while the code runs (a lock orders
    it against the end), and one still pending at the end is cleared.
    """

    def __init__(self, work: Callable[[], T], stopped: T) -> None:
        self.work, self.stopped = work, stopped
        self.result = stopped
        self.done = False
        self._lock = threading.Lock()
        self._running = False
        self._thread = threading.Thread(target=self._main, name="brute-python-tool", daemon=True)

    def start(self) -> None:
        self._running = True
        self._thread.start()

    def join(self, timeout: float | None) -> None:
        self._thread.join(timeout)

    def interrupt(self) -> None:
        with self._lock:
            if self._running and self._thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread.ident),
                                                           ctypes.py_object(KeyboardInterrupt))

    def _main(self) -> None:
        try:
            self.result = self.work()
        except KeyboardInterrupt:
            self.result = self.stopped
        while True:  # an interrupt sent just as the code returned may fire here, once: stop it from escaping
            try:
                with self._lock:
                    self._running = False
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), None)
                break
            except KeyboardInterrupt:
                continue
        self.done = True


PYTHON = PythonTool()
"""The ``python`` tool, off unless named (``--tools +python``): the ``brute_nb.tools`` entry point ``python``."""
