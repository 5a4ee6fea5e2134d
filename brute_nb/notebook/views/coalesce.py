"""Coalescing of live display writes, shared by the cell view (``CellView``) and the chat widget.

Writes are capped at ``rate`` a second: ``MAX_UPDATES_PER_S`` (15) where every write re-sends a whole view (the
chat widget, a cell without the live widget); ``live.LIVE_RATE`` (10) for the cell's live widget, whose writes are
small appends but each an IOPub message whose envelope (~600 bytes, ~0.3 ms of the kernel's CPU) dwarfs a chunk
(a chunk is held only when the last write was less than 1/10 s ago, and at most that long).
Invariants:

- leading edge: a push when nothing was written during the last interval is written at once, except, with
  ``hold_first``, the very first push (a force push too), held one interval: a turn that is over by then never
  shows a live view at all (the cell's live widget costs messages a short reply does not need);
- trailing edge: a push inside the interval is held, and a timer writes the latest held value when the interval
  ends, so a pause in the stream never leaves stale text on screen;
- at most one write per interval, except ``force`` pushes (rare structural events: a tool call starts or ends, a
  reply is complete), which are written at once;
- writes never overlap and keep their order (one lock); ``cancel`` drops what is held, and a timer that fires
  after a cancel or a newer write does nothing.

Threads: pushes come from a turn's worker thread, which runs in the cell's copied ``contextvars`` context (that is
how ipykernel knows which cell an output belongs to). The trailing timer therefore runs inside a copy of the
pushing thread's context, so its write lands in the same cell (kernel-notes Q1). Every timer runs on one long-lived
thread (``TimerThread``), not a thread a timer.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

MAX_UPDATES_PER_S = 15


class Timer(Protocol):
    def cancel(self) -> None: ...


StartTimer = Callable[[float, Callable[[], None]], Timer]


def start_thread_timer(delay: float, fn: Callable[[], None]) -> Timer:
    """Run ``fn`` after ``delay`` seconds on the timer thread (``TimerThread``), in a copy of the caller's context.

    Started on brute_nb's own event loop (a turn's stream pushes from there), the loop keeps the time
    (``call_later``: a heap entry, no other thread woken) and hands the call to the timer thread when it is due, so a
    write still never runs on the loop. A short reply's turn ends before its live view's first timer is due: that
    timer then costs the turn nothing but the entry, where waking the timer thread to wait for it cost a thread
    switch on a busy machine."""
    ctx = contextvars.copy_context()  # taken on the pushing (worker) thread: the cell's own context
    entry = _Entry(lambda: ctx.run(fn))
    loop = _shared_loop_here()
    if loop is not None:
        loop.call_later(delay, timer_thread().add, 0.0, entry)
    else:
        timer_thread().add(delay, entry)
    return entry


def _shared_loop_here() -> asyncio.AbstractEventLoop | None:
    """brute_nb's loop when this code runs on it (it runs forever, so a ``call_later`` there always comes due)."""
    from brute_nb.event_loop import current_shared_loop

    return current_shared_loop()


class _Entry:
    """One scheduled call; ``cancel`` only marks it (the thread drops it when it comes due)."""

    __slots__ = ("cancelled", "fn")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class TimerThread:
    """One daemon thread that runs every coalescer's timers, soonest first.

    A ``threading.Timer`` a timer started a thread each time: every cell's live view holds its first write one
    interval (``hold_first``), so every ``%%brute`` cell paid a thread start (``Thread.start`` waits for the new
    thread to run) on its turn's path, and the thread's wake-up and exit after. Here a timer is a heap entry and at
    most a ``notify``. A call runs on this thread outside the lock, so a write that takes long delays the timers
    due after it (as the coalescer's own lock already serialises a view's writes) but never loses them; an error
    in one is reported (``threading.excepthook``) and the thread goes on.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Entry]] = []
        self._count = itertools.count()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def start(self, delay: float, fn: Callable[[], None]) -> _Entry:
        """Run ``fn`` on this thread in ``delay`` seconds, unless the returned timer is cancelled first."""
        return self.add(delay, _Entry(fn))

    def add(self, delay: float, entry: _Entry) -> _Entry:
        if entry.cancelled:
            return entry  # cancelled while a loop kept its time (``start_thread_timer``): nothing to wake for
        due = time.monotonic() + delay
        with self._cond:
            self._ensure_thread()
            heapq.heappush(self._heap, (due, next(self._count), entry))
            if self._heap[0][2] is entry:  # sooner than what the thread waits for: wake it to wait less
                self._cond.notify()
        return entry

    def _ensure_thread(self) -> None:
        # A fork copies this object but not its thread: the child starts its own.
        if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
            self._heap = [item for item in self._heap if not item[2].cancelled]
            self._pid = os.getpid()
            # Started in an empty context: each call runs in the context its timer was started in.
            self._thread = threading.Thread(target=contextvars.Context().run, args=(self._run,),
                                            name="brute-timers", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            entry = self._next()
            if entry.cancelled:
                continue
            try:
                entry.fn()
            except Exception:
                threading.excepthook(threading.ExceptHookArgs((*sys.exc_info(), threading.current_thread())))

    def _next(self) -> _Entry:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                wait = self._heap[0][0] - time.monotonic()
                if wait <= 0:
                    return heapq.heappop(self._heap)[2]
                self._cond.wait(wait)


_timers = TimerThread()


def timer_thread() -> TimerThread:
    return _timers


_NOTHING: Any = object()
EARLY = 1e-6
"""A timer this close to its time is on time: a rounding error must not start a timer for a few nanoseconds,
and another, and another."""


class Coalescer:
    """Writes the values pushed to it at most ``rate`` times a second; the last value pushed is always written."""

    def __init__(self, write: Callable[[Any], None], rate: float = MAX_UPDATES_PER_S, *,
                 clock: Callable[[], float] = time.monotonic, start_timer: StartTimer = start_thread_timer,
                 hold_first: bool = False) -> None:
        self._write = write
        self.interval = 1 / rate
        self._clock = clock
        self._start_timer = start_timer
        self._lock = threading.Lock()
        self._pending: Any = _NOTHING
        self._last = -float("inf")  # nothing written yet: the first push goes out at once
        self._timer: Timer | None = None
        self._generation = 0  # which timer is the live one; an older one that fires late does nothing
        self._holding = hold_first  # nothing written yet, and the first write waits one interval

    def push(self, value: Any, *, force: bool = False) -> None:
        with self._lock:
            self._pending = value
            if self._holding:
                if self._timer is None:  # the first push: as if something had just been written
                    self._last = self._clock()
                    self._schedule_locked(self.interval)
                return
            wait = self._last + self.interval - self._clock()
            if force or wait <= 0:
                self._flush_locked()
            elif self._timer is None:
                self._schedule_locked(wait)

    def flush(self) -> None:
        """Write what is held now (if anything)."""
        with self._lock:
            self._flush_locked()

    def cancel(self) -> None:
        """Drop what is held and stop the timer: nothing more is written until the next push."""
        with self._lock:
            self._pending = _NOTHING
            self._stop_timer_locked()

    def _schedule_locked(self, wait: float) -> None:
        self._generation += 1
        generation = self._generation
        self._timer = self._start_timer(wait, lambda: self._on_timer(generation))

    def _on_timer(self, generation: int) -> None:
        with self._lock:
            if self._timer is None or generation != self._generation:
                return  # cancelled, or superseded by a write since it was started
            self._timer = None
            wait = self._last + self.interval - self._clock()
            if wait > EARLY:  # fired early (timer granularity): keep the cap
                self._schedule_locked(wait)
            else:
                self._flush_locked()

    def _stop_timer_locked(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _flush_locked(self) -> None:
        self._stop_timer_locked()
        if self._pending is _NOTHING:
            return
        value, self._pending = self._pending, _NOTHING
        self._holding = False
        self._last = self._clock()
        self._write(value)
