"""Sockets a test left to the garbage collector, found at that test's end so the leak fails the test that leaked.

A socket nobody closed is closed by its finalizer, with a ``ResourceWarning``, when the last reference goes. Held
in a reference cycle (a client whose pool refers back to it, a traceback), that happens whenever the cyclic
collector next runs: inside some later test, which then fails on a ``PytestUnraisableExceptionWarning`` it did not
cause (issue 39 §2.16; CI failed that way on one test in 2,101). So every socket a test makes is remembered, weakly,
from the interpreter's ``socket.__new__`` audit event, and a test that ends with one still alive and open has the
garbage it made collected then; a socket that collection finalises fails the test, named.

What it costs: a collection of the whole heap is ~500,000 objects (0.3-3 s on a loaded 2-core machine), which
after most tests with a model client (its idle pooled connection is still open) came to minutes. So the heap is
frozen while a test runs (``gc.freeze``: moved aside, O(1)) and the collection at its end walks only what the test
made; it is let go again (``gc.unfreeze``) when the test ends. A frozen heap makes ``brute_nb.sessions.lines``'s
``paused_gc`` leave a parse's messages in the young generations ("a program that froze objects keeps them
frozen"), which costs time only; its own test lets the heap go first. A socket still open after the collection (a
pooled connection of a client still in use) is in use, not leaked, and is left alone.
"""

from __future__ import annotations

import gc
import socket
import sys
import warnings
import weakref
from typing import Any

import brute_nb.sessions.lines  # noqa: F401  # reads the interpreter's own frozen count at import: before any test's

_opened: list[weakref.ref[socket.socket]] | None = None
"""The sockets made since ``watch()``, or None when no test is watched."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # A server's side of a connection (made by accept: the frames are this hook, socket.__init__, accept) is its
    # connection thread's to close, which the stdlib server always does.
    if (event == "socket.__new__" and _opened is not None and isinstance(args[0], socket.socket)
            and sys._getframe(2).f_code.co_name != "accept"):
        _opened.append(weakref.ref(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one only reads the event's name when nothing is watched


def watch() -> None:
    """Remember every socket made from now on, and set the heap made so far aside (a test's start)."""
    global _opened
    _opened = []
    gc.freeze()


def left_open() -> list[socket.socket]:
    """The sockets made since ``watch()`` that are still alive and open."""
    return [s for s in (ref() for ref in _opened or ()) if s is not None and s.fileno() != -1]


def leaked() -> list[str]:
    """Stop watching; the sockets made since ``watch()`` that only the garbage collector would have closed."""
    global _opened
    try:
        return _collected() if left_open() else []
    finally:
        _opened = None
        gc.unfreeze()


def _collected() -> list[str]:
    """Collect what is not frozen with ``ResourceWarning`` an error, so a finalizer's warning reaches
    ``sys.unraisablehook`` now; the hook is borrowed for the collection to keep those warnings (anything else goes
    on to the previous hook)."""
    found: list[str] = []
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, ResourceWarning):
            found.append(str(unraisable.exc_value))
        else:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            gc.collect()
    finally:
        sys.unraisablehook = previous
    return found
