"""brute_nb's own errors as one red line and one hint, not a page of traceback through the SDK.

While the extension is loaded, IPython hands a ``BruteError`` that ends a cell to ``show`` (``set_custom_exc``):
the cell fails as before (an ``error`` output, "Run all" stops), but the output holds only the message (which says
what to set or type) and a line saying where the rest is. The invariant: the full traceback stays one step away,
never lost. ``sys.last_*`` are set as IPython's own handler sets them, so ``%tb`` and ``%debug`` show it, and
``%brute config debug=true`` shows it in place. Other exceptions keep IPython's handler; unloading restores it.
The interrupt that ends a stopped turn is shown the same way (``interrupted``), under the cell's one-line notice.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

from brute_nb.errors import BruteError, remember_last

RED, DIM, RESET = "\x1b[0;31m", "\x1b[2m", "\x1b[0m"
HINT = "the full traceback: %tb (or %brute config debug=true to show it every time)"

_previous: dict[int, tuple[Any, Any]] = {}
"""Per shell: the custom handler and exception types there were before ``install``, restored by ``uninstall``."""
_debug: dict[int, Callable[[], bool]] = {}
"""Per shell: whether to show the full traceback (``%brute config debug=true``), asked at each error."""


def _never() -> bool:
    return False


def short_lines(exc: BaseException, hint: str = HINT) -> list[str]:
    """The error as a structured traceback of two lines: ``Type: message`` in red, the hint dimmed.

    The message may quote a server's error body: it goes through ``render.plain`` (no escape sequences, no key).
    """
    from brute_nb.notebook.views.render import plain

    message = str(exc)
    if getattr(exc, "shown_plain", False) and message:  # words a reader acts on, not a class name (a replay's end)
        return [f"{RED}{plain(message)}{RESET}", f"{DIM}{hint}{RESET}"]
    head = f"{RED}{type(exc).__name__}{RESET}" + (f": {plain(message)}" if message else "")
    return [head, f"{DIM}{hint}{RESET}"]


def full_text(exc: BaseException) -> str:
    """The whole traceback as text, keys redacted: for a view that has no ``%tb`` (the chat widget)."""
    from brute_nb.notebook.views.render import plain

    return plain("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def show(shell: Any, etype: type[BaseException], value: BaseException, tb: TracebackType | None,
         tb_offset: int | None = None) -> list[str]:
    """IPython's custom exception handler: publish the short (or, with ``debug``, the full) traceback."""
    remember_last(value, tb)
    if _debug.get(id(shell), _never)():
        stb: list[str] = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    else:
        stb = short_lines(value)
    shell._showtraceback(etype, value, stb)
    return stb


def interrupted(stop: KeyboardInterrupt) -> KeyboardInterrupt:
    """``stop``, the interrupt that ends a stopped turn, made to show as one red line and the hint.

    The cell above it already says in one line that the turn stopped; the interrupt landed in the wait for the
    turn, so IPython's traceback would end in ``threading``'s frames (``__tracebackhide__`` never hides the last
    frame). ``_render_traceback_`` is IPython's hook for an exception that renders its own traceback, asked once
    here: only this interrupt, and only in its cell, is shown short; every other one as IPython shows it. It stays
    a ``KeyboardInterrupt`` (the cell ends as interrupted, "Run all" stops), and ``%tb`` shows it in full, as
    ``%brute config debug=true`` does in place."""

    def render() -> list[str]:
        from IPython import get_ipython

        delattr(stop, "_render_traceback_")  # once: %tb, asked later, shows the traceback IPython would
        shell = get_ipython()
        if shell is not None and _debug.get(id(shell), _never)():
            full: list[str] = shell.InteractiveTB.structured_traceback(type(stop), stop, stop.__traceback__)
            return full
        return short_lines(stop)

    setattr(stop, "_render_traceback_", render)  # noqa: B010  # an instance attribute IPython looks up
    return stop


def install(shell: Any, debug: Callable[[], bool] = _never) -> None:
    """Show brute_nb's errors short in ``shell``; ``debug()`` true shows them in full (read at each error)."""
    _debug[id(shell)] = debug
    if id(shell) in _previous:
        return
    _previous[id(shell)] = (getattr(shell, "CustomTB", None), getattr(shell, "custom_exceptions", ()))
    shell.set_custom_exc((BruteError,), show)


def uninstall(shell: Any) -> None:
    _debug.pop(id(shell), None)
    previous = _previous.pop(id(shell), None)
    if previous is None:
        return
    handler, types = previous
    shell.CustomTB, shell.custom_exceptions = handler, types
