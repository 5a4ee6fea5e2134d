"""Calling user code that may be sync or async: one helper, one cancel policy, used by every layer.

Tools, handlers, askers, summarisers, prompt sources and hooks are written by users either way. The rule:

* An async callable (a coroutine function, an object with an async ``__call__``, a ``functools.partial`` of
  either) is awaited inline, on the loop: no thread hop.
* A sync callable runs on a worker thread (``thread=True``, the default for anything that may block: a model
  call, ``input()``, a tool), so the loop, and with it events, other tools and cancellation, goes on.
  Cheap hooks that must see the loop's state as it is (a prompt source, an approval hook, a compactor that edits
  the log in place) pass ``thread=False`` and run inline.
* Whatever a sync callable returns that is awaitable (a plain function returning a coroutine) is awaited too.

The cancel policy: a sync callable on a worker thread is **abandoned** on cancel (anyio's ``abandon_on_cancel``).
Python cannot interrupt a thread, so waiting for it would make Stop and Ctrl-C wait on whatever it blocks on, an
``input()`` no one answers or a tool that hangs, while the turn holds the session lock. Abandoned, the call ends
at once with the cancellation; the thread runs to its end in the background and its result is dropped. A caller
whose callable writes shared state (the agent's handler appends to the log) hands it a private view, so a late
write from an abandoned thread lands nowhere (``agent._Terminal``).

The worker threads (``_Workers``) are what ``anyio.to_thread.run_sync`` gives, for less: a tool loop hops to a
thread on every plain-function tool call, and anyio's hop takes three turns of the event loop (a checkpoint, its
capacity limiter's own, then the result) where one is needed: 70-130 us of CPU a hop here, ~0.1 ms a model call of
a tool loop. To the code it runs, a thread here is an anyio worker thread: ``anyio.from_thread.run`` reaches the
loop and ``check_cancelled`` sees a Stop, as under anyio, and the callable runs in a copy of the caller's context.
Up to ``MAX_THREADS`` (anyio's default limit) run at once; calls beyond that, and calls on another event loop
library, take anyio's own hop (under its own limit).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

import anyio.lowlevel
import anyio.to_thread
import sniffio

try:  # what anyio's own worker threads set, read by anyio.from_thread.run / check_cancelled inside the callable
    from anyio._core._eventloop import threadlocals as _anyio_thread
except ImportError:  # an anyio that keeps it elsewhere: its own hop, which sets it
    _anyio_thread = None  # type: ignore[assignment]

MAX_THREADS = 40
"""Sync calls running at once on brute_nb's workers (anyio's default thread limit); more wait in anyio's hop."""
IDLE_SECONDS = 10.0
"""A worker idle this long ends (anyio's own figure)."""


def is_async(fn: object) -> bool:
    """Whether calling ``fn`` gives a coroutine by its definition (partials and async ``__call__`` included)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - a class instance with an async __call__
    )


async def call_maybe_async(fn: Callable[..., Any], *args: Any, thread: bool = True) -> Any:
    """``fn(*args)``, awaited if async; a sync ``fn`` on a worker thread (abandoned on cancel) unless ``thread``
    is False. Keyword arguments go through ``functools.partial`` (a tool may well have a ``thread`` parameter)."""
    if is_async(fn):
        return await fn(*args)
    if thread:
        result = await on_worker(fn, *args)
    else:
        result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def on_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a worker thread, abandoned on cancel: ``anyio.to_thread.run_sync(fn, *args,
    abandon_on_cancel=True)`` in one turn of the event loop (see the module's docstring)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another event loop library (trio)
        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
    if _anyio_thread is None:
        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
    await anyio.lowlevel.checkpoint_if_cancelled()  # a call cancelled before it starts never runs, as under anyio
    future: asyncio.Future[Any] = loop.create_future()
    token = anyio.lowlevel.current_token()
    context = contextvars.copy_context()
    context.run(sniffio.current_async_library_cvar.set, None)  # the thread runs no event loop
    with anyio.CancelScope() as scope:  # what check_cancelled reads: cancelled with the caller
        worker = _WORKERS.take()
        if worker is None:
            return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
        worker.jobs.put((loop, future, context, fn, args, token, scope))
        return await future


Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[..., Any], tuple[Any, ...],
            Any, Any]


class _Worker(threading.Thread):
    """One thread running the jobs handed to it, one at a time; back on the idle list after each."""

    def __init__(self, workers: _Workers) -> None:
        super().__init__(name="brute_nb worker", daemon=True)  # an abandoned call never holds up the exit
        self.workers = workers
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                if self.workers.retire(self):
                    return
                continue  # taken off the idle list just now: its job is on the way
            loop, future, context, fn, args, token, scope = job
            result, error = _run(future, context, fn, args, token, scope)
            self.workers.idle(self)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits for this result
                loop.call_soon_threadsafe(_report, future, result, error)
            del job, loop, future, context, fn, args, token, scope, result, error


def _run(future: asyncio.Future[Any], context: contextvars.Context, fn: Callable[..., Any], args: tuple[Any, ...],
         token: Any, scope: Any) -> tuple[Any, BaseException | None]:
    if future.cancelled():  # abandoned before it started: not run at all, as under anyio
        return None, None
    _anyio_thread.current_token, _anyio_thread.current_cancel_scope = token, scope
    try:
        return context.run(fn, *args), None
    except BaseException as exc:  # handed to the caller, whatever it is
        return None, exc
    finally:
        del _anyio_thread.current_token, _anyio_thread.current_cancel_scope


def _report(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():  # abandoned: its caller has moved on
        return
    if isinstance(error, StopIteration):  # a future cannot carry it (as anyio does)
        wrapped = RuntimeError("coroutine raised StopIteration")
        wrapped.__cause__ = error
        error = wrapped
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class _Workers:
    """The idle workers, reused call after call (a tool loop needs one), and how many there are."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._count = 0

    def take(self) -> _Worker | None:
        """An idle worker, or a new one; None when MAX_THREADS are busy."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
            if self._count >= MAX_THREADS:
                return None
            self._count += 1
        worker = _Worker(self)
        try:
            worker.start()
        except BaseException:  # no thread to be had: not counted
            with self._lock:
                self._count -= 1
            raise
        return worker

    def idle(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """Whether an idle ``worker`` may end (False: it was just taken, and a job is on its way)."""
        with self._lock:
            if worker not in self._idle:
                return False
            self._idle.remove(worker)
            self._count -= 1
            return True

    def forget(self) -> None:
        """After a fork: the child has none of the parent's threads."""
        self.__init__()  # type: ignore[misc]


_WORKERS = _Workers()
os.register_at_fork(after_in_child=_WORKERS.forget)
