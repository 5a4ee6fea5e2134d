"""A step of the model of a notebook user that does not end is a failure that names the step, never a stuck job.

Each step runs under ``bounded``: past ``STEP_LIMIT`` seconds a timer thread notes where every thread and every task
on brute_nb's loop waits, then interrupts the main thread with a real SIGINT (it wakes a blocking call as Ctrl-C
does, so a ``%%brute`` turn cancels its worker and ends as interrupted). When the step has unwound, ``StepHung``
is raised with the step, the steps before it and those stacks. A turn's ``run_cell`` cannot swallow it, as it
swallowed pytest-timeout's exception and left a run going on: it is raised outside the cell (and pytest-timeout's
own exception, wherever in a step it lands, ends the run as a ``StepHung``). If even the
interrupt does not end the step, faulthandler ends the process ``GRACE`` seconds later with every thread's stack:
a failed job, with the place it hung.

``StepHung`` is a ``BaseException`` on purpose (test code, not brute_nb's: the product's errors stay
``Exception``s): hypothesis shrinks a failing ``Exception`` by replaying many sequences, and a hang costs
``STEP_LIMIT`` a replay and may leave a turn's task holding a lock that makes every later replay hang too; a
``BaseException`` ends the run at once, as ``KeyboardInterrupt`` does. The message carries the sequence instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any

STEP_LIMIT = 60.0
"""Seconds one step may take. A step takes well under 5 s even on a loaded 2-core machine (a turn with a fault
waits at most the SDKs' backoff, 0.5 s then 1 s); the SDK's own stall timeout is 90 s, so a stall is caught here."""
GRACE = 60.0
"""Seconds the interrupted step has to unwind (a turn waits up to 30 s for its cleanup) before the process ends."""


class StepHung(BaseException):
    """A step of the model did not end within its limit."""


class _Watch:
    def __init__(self, name: str, limit: float) -> None:
        self.name = name
        self.limit = limit
        self.lock = threading.Lock()
        self.done = False
        self.fired = False
        self.delivered = False
        self.stacks = ""
        self.main = threading.main_thread().ident

    def fire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.fired = True
            self.stacks = where_everything_waits()
            assert self.main is not None
            signal.pthread_kill(self.main, signal.SIGINT)

    def on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.fired:
            self.delivered = True
        raise KeyboardInterrupt

    def hung(self, steps: Sequence[str]) -> StepHung:
        before = "".join(f"\n  {s}" for s in steps) or " none"
        return StepHung(f"step {self.name} did not end within {self.limit:g} s, so it was interrupted.\n"
                        f"Steps of this sequence before it:{before}\n"
                        f"Where each thread and brute_nb task was waiting then:\n{self.stacks}")


@contextlib.contextmanager
def bounded(name: str, steps: Sequence[str] = (), limit: float = STEP_LIMIT) -> Iterator[None]:
    """Run the block as step ``name`` (``steps``: the sequence before it); past ``limit`` seconds, ``StepHung``."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only; the model runs there
        return
    watch = _Watch(name, limit)
    old = signal.signal(signal.SIGINT, watch.on_sigint)
    timer = threading.Timer(limit, watch.fire)
    timer.daemon = True
    faulthandler.dump_traceback_later(limit + GRACE, exit=True, file=sys.__stderr__)
    timer.start()
    try:
        try:
            yield
        except BaseException as exc:
            if watch.fired:
                raise watch.hung(steps) from exc
            if _ended_by_pytest(exc):  # pytest-timeout's Failed, which hypothesis would take for a failure to shrink
                raise StepHung(f"step {name} was ended by {type(exc).__name__}: {exc}") from exc
            raise
        _absorb(watch)
        if watch.fired:
            raise watch.hung(steps)
    finally:
        with watch.lock:
            watch.done = True
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
        with contextlib.suppress(KeyboardInterrupt):
            _absorb(watch)
        signal.signal(signal.SIGINT, old)


def _ended_by_pytest(exc: BaseException) -> bool:
    outcomes = sys.modules.get("_pytest.outcomes")
    return outcomes is not None and isinstance(exc, outcomes.Failed)


def _absorb(watch: _Watch) -> None:
    """Wait for a SIGINT that was sent but not yet handled, so it cannot land after the step, in hypothesis' code."""
    with watch.lock:
        watch.done = True
    deadline = time.monotonic() + 5
    try:
        while watch.fired and not watch.delivered and time.monotonic() < deadline:
            time.sleep(0.01)
    except KeyboardInterrupt:
        pass


def where_everything_waits() -> str:
    """Every thread's stack, and every task's on brute_nb's loop (the main thread only shows ``Worker.wait``)."""
    parts = []
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        stack = "".join(traceback.format_stack(frame)[-12:])
        parts.append(f"--- thread {names.get(ident, ident)}\n{stack}")
    parts += [f"--- task {name}\n{stack}" for name, stack in _tasks()]
    return "\n".join(parts)


def _tasks() -> list[tuple[str, str]]:
    from brute_nb import event_loop

    shared: Any = event_loop._shared
    if shared is None:
        return []
    for _ in range(3):  # the set of tasks may change while it is read from this thread
        try:
            tasks = list(asyncio.all_tasks(shared.loop))
            break
        except RuntimeError:
            continue
    else:
        return []
    return [(task.get_name(), _awaits(task.get_coro())[-6000:]) for task in tasks]


def _awaits(coro: Any) -> str:
    """The chain of awaits under a task's coroutine, to the innermost (``Task.get_stack`` shows only the first)."""
    lines = []
    while coro is not None and len(lines) < 60:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            lines += traceback.format_list(traceback.extract_stack(frame, limit=1))
        coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None) or getattr(coro, "gi_yieldfrom", None)
    return "".join(lines)
