"""One execution path: the core is async, and every turn brute_nb runs goes on one long-lived event loop.

The invariant: a kernel (a process) has **one** brute_nb event loop, on its own daemon thread, started on first
use and never closed; every ``%%brute`` cell, widget turn, ``ask``, ``run_sync`` and ``agent.start()`` runs there.
The SDK clients keep pooled keep-alive connections, and a connection belongs to the loop that opened it: a fresh
loop a turn (the old design) left the next turn reading a socket of a closed loop ("Event loop is closed", or a
lost reply the SDK silently sent again). One loop keeps every connection usable, and reused (no new TLS handshake
a turn).

A ``Worker`` is one coroutine on that loop, run as a task inside ``contextvars.copy_context()`` of the code that
made it (so ipykernel routes its output to the calling cell, kernel-notes Q1) and inside a ``CancelScope`` any
thread can cancel. The caller waits on an Event, never ``Thread.join`` (CPython gh-90882 makes ``join`` lie after
an interrupt). A KeyboardInterrupt in the waiting thread cancels the task, waits for its cleanup (``finally`` blocks
persist the session), then re-raises so the cell ends as interrupted and "Run all" stops.

Code already running on the brute_nb loop that calls ``run_sync`` (it would wait on itself forever) gets a private
loop on a new thread for that one call, the old design, which is safe there since it is one call. This loop waits
meanwhile, so nothing living on it can answer that call: why MCP sessions keep loop threads of their own
(``tools.mcp_connection``, measured in ``bench/mcp_loops.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

CLEANUP_WAIT = 30.0
"""Seconds an interrupted caller waits for the worker's cleanup (closing tool calls, writing the log)."""


class LoopThread:
    """An asyncio event loop running forever on a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.pid = os.getpid()
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def alive(self) -> bool:
        # A fork copies the loop object but not its thread: the child needs its own.
        return self.pid == os.getpid() and self.thread.is_alive() and not self.loop.is_closed()

    def on_it(self) -> bool:
        return threading.current_thread() is self.thread

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)


_shared: LoopThread | None = None
_shared_lock = threading.Lock()


def shared_loop() -> LoopThread:
    """The process's brute_nb loop, started on first use (and again only if its thread died or the process forked)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            # Started in an empty context: the loop thread itself must not carry a cell's output routing.
            _shared = contextvars.Context().run(LoopThread, "brute-loop")
        return _shared


def current_shared_loop() -> asyncio.AbstractEventLoop | None:
    """The process's brute_nb loop if the calling code runs on its thread, else None (never starts it)."""
    shared = _shared
    return shared.loop if shared is not None and shared.on_it() and shared.alive else None


def loop_local(cache: dict[Any, Any], make: Callable[[], T],
               close: Callable[[T], Awaitable[Any]] | None = None) -> T:
    """The object ``make()`` built for the running event loop (for none, outside one), kept in ``cache``: for
    things bound to a loop, like an SDK client's pooled connections. ``close(obj)`` is awaited when that loop
    shuts down (``asyncio.run``, ``anyio.run`` and pytest's runner end by finalising async generators), so
    its sockets close with it; entries of loops since closed are dropped."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    entry = cache.get(loop)
    if entry is None:
        for old in [k for k in cache if k is not None and k.is_closed()]:
            del cache[old]
        obj = make()
        entry = cache[loop] = (obj, _closer(obj, close) if loop is not None and close is not None else None)
    found: T = entry[0]
    return found


def _closer(obj: T, close: Callable[[T], Awaitable[Any]]) -> AsyncGenerator[None, None]:
    """An async generator the running loop finalises when it shuts down, closing ``obj`` then."""

    async def watch() -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await close(obj)

    gen = watch()
    # The first step registers the generator with the running loop (its firstiter hook) and stops at the yield
    # without awaiting anything, so it can be driven here, synchronously.
    with contextlib.suppress(StopIteration):
        gen.__anext__().send(None)
    # The loop holds its generators weakly: kept here until the loop ends, so closing never depends on when the
    # garbage collector happens to run (after the loop closed, it could no longer close anything).
    loop = asyncio.get_running_loop()
    for old in [k for k in _closers if k.is_closed()]:
        del _closers[old]
    _closers.setdefault(loop, []).append(gen)
    return gen


_closers: dict[asyncio.AbstractEventLoop, list[AsyncGenerator[None, None]]] = {}

_handed: set[Any] = set()
"""Closes handed to another thread's loop (``aclose_local``), held until they are done."""


async def aclose_local(cache: dict[Any, Any]) -> None:
    """Close what ``loop_local`` keeps in ``cache`` now, and forget it (a later use makes a new one): for an object
    replaced or no longer used whose loop goes on. The kernel's loop never shuts down, so without this a replaced
    SDK client kept its idle kept-alive connection open for the kernel's life. Each object is closed on its own
    loop: awaited here when that is the running loop, else handed to it; a failure to close is no one's error."""
    entries = list(cache.items())
    cache.clear()
    running = asyncio.get_running_loop()
    for loop, (_, gen) in entries:
        if gen is None:
            continue
        gens = _closers.get(loop, [])
        if gen in gens:
            gens.remove(gen)
        if loop is running:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await gen.aclose()  # the generator's finally closes the object
        elif not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed meanwhile: its shutdown closed the object
                handed = asyncio.run_coroutine_threadsafe(gen.aclose(), loop)
                _handed.add(handed)
                handed.add_done_callback(_handed.discard)


def run_sync(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` to completion from sync code, on the brute_nb loop (whatever this thread runs)."""
    return run_in_worker(fn)


class Worker:
    """A coroutine running as a task on the brute_nb loop, in the creator's context, cancellable from any thread."""

    def __init__(self, fn: Callable[[], Awaitable[T]], *, name: str = "brute-worker",
                 host: LoopThread | None = None) -> None:
        self._fn = fn
        self.name = name
        self._ctx = contextvars.copy_context()
        self._host = host
        self.done = threading.Event()
        self._scope: anyio.CancelScope | None = None
        self._cancel_asked = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.cancelled = False

    def start(self) -> Worker:
        """Schedule the coroutine and return at once (so a caller on the loop itself may start one)."""
        host = self._host = self._host or shared_loop()
        # The task runs in the copied context: ipykernel reads its output routing (parent_header) from there. The
        # running-library mark anyio may leave in a copied context names asyncio, which is what this loop runs.
        host.loop.call_soon_threadsafe(lambda: host.loop.create_task(self._main(), context=self._ctx))
        return self

    async def _main(self) -> None:
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._cancel_asked:
                    scope.cancel()
                self.result = await self._fn()
            self.cancelled = scope.cancelled_caught
        except BaseException as exc:  # handed to the waiting thread; never let it reach (and stop) the loop
            self.error = exc
        finally:
            self.done.set()

    def _cancel_on_loop(self) -> None:
        self._cancel_asked = True
        if self._scope is not None:
            self._scope.cancel()

    def cancel(self) -> None:
        """Cancel the coroutine (safe from any thread, before it began and after it finished)."""
        if self.done.is_set() or self._host is None:
            return
        # RuntimeError: a private loop closed between the check and the call, so nothing is left to cancel.
        with contextlib.suppress(RuntimeError):
            self._host.loop.call_soon_threadsafe(self._cancel_on_loop)

    def wait(self, poll: float = 0.1) -> Any:
        """Block until done; on KeyboardInterrupt cancel, wait for cleanup and re-raise."""
        __tracebackhide__ = True  # an interrupted cell's traceback shows the user's cell, not brute_nb's plumbing
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


def run_in_worker(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` on the brute_nb loop and wait for it; on that loop's own thread, on a private one."""
    private = LoopThread("brute-private-loop") if shared_loop().on_it() else None
    try:
        result: T = Worker(fn, host=private).start().wait()
    finally:
        if private is not None:
            private.stop()
    return result
