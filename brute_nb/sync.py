"""One execution path: the core is async; ``run_sync`` is the thin wrapper for sync callers.

With no event loop in the calling thread it is plain ``anyio.run``. Inside a running loop (a Jupyter cell, where
ipykernel's asyncio loop owns the main thread) it runs the coroutine on a worker thread started inside
``contextvars.copy_context()`` (so ipykernel routes the worker's output to the calling cell) and waits on an
Event, never ``Thread.join`` (CPython gh-90882 makes ``join`` lie after an interrupt). A KeyboardInterrupt in the
waiting thread cancels the worker's scope, waits for its cleanup (``finally`` blocks persist the session), then
re-raises so the cell ends as interrupted and "Run all" stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

T = TypeVar("T")

CLEANUP_WAIT = 30.0
"""Seconds an interrupted caller waits for the worker's cleanup (closing tool calls, writing the log)."""


def loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` to completion from sync code, whether or not this thread already runs a loop."""
    if not loop_running():
        return anyio.run(fn)
    return run_in_worker(fn)


class Worker:
    """A coroutine running on its own thread and anyio loop, cancellable from any thread."""

    def __init__(self, fn: Callable[[], Awaitable[T]], *, name: str = "brute-worker") -> None:
        self._fn = fn
        self._ready = threading.Event()
        self.done = threading.Event()
        self._scope: anyio.CancelScope | None = None
        self._token: Any = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.cancelled = False
        ctx = contextvars.copy_context()
        self._thread = threading.Thread(target=ctx.run, args=(self._work,), name=name, daemon=True)

    def start(self) -> Worker:
        self._thread.start()
        self._ready.wait()
        return self

    async def _main(self) -> None:
        with anyio.CancelScope() as scope:
            self._scope = scope
            self._token = anyio.lowlevel.current_token()
            self._ready.set()
            self.result = await self._fn()
        self.cancelled = scope.cancelled_caught

    def _work(self) -> None:
        try:
            _forget_async_library()
            anyio.run(self._main)
        except BaseException as exc:  # handed to the waiting thread, which re-raises it
            self.error = exc
        finally:
            self._ready.set()
            self.done.set()

    def cancel(self) -> None:
        """Cancel the coroutine (safe from any thread, and after it finished)."""
        if self.done.is_set() or self._scope is None:
            return
        # RuntimeError: the loop closed between the check and the call, so nothing is left to cancel.
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run_sync(self._scope.cancel, token=self._token)

    def wait(self, poll: float = 0.1) -> Any:
        """Block until done; on KeyboardInterrupt cancel, wait for cleanup and re-raise."""
        try:
            while not self.done.wait(poll):
                pass
        except KeyboardInterrupt:
            self.cancel()
            self.done.wait(CLEANUP_WAIT)
            raise
        if self.error is not None:
            raise self.error
        return self.result


def _forget_async_library() -> None:
    """Clear the running-library mark a copied context may carry (anyio sets sniffio's context variable), so a
    worker started from code under anyio (an async test, an anyio app, another worker) can start its own loop
    instead of failing with "Already running asyncio in this thread"."""
    try:
        import sniffio
    except ImportError:  # anyio then looks for a running loop in this thread, and this new thread has none
        return
    sniffio.current_async_library_cvar.set(None)


def run_in_worker(fn: Callable[[], Awaitable[T]]) -> T:
    result: T = Worker(fn).start().wait()
    return result
