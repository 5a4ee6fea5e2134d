"""The live-update coalescer (leading edge, trailing flush, cap) on an injected clock and timers: no sleeping."""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Callable
from typing import Any

from brute_nb.notebook.views.coalesce import Coalescer, TimerThread, start_thread_timer
from brute_nb.notebook.views.display import CellView

RATE = 10  # a 0.1 s interval keeps the arithmetic readable


class Clock:
    """A manual clock whose timers fire when time is advanced past them."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[FakeTimer] = []

    def __call__(self) -> float:
        return self.now

    def start(self, delay: float, fn: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(self.now + delay, fn)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        self.now += seconds
        while due := [t for t in self.timers if t.due <= self.now + 1e-9 and not t.done]:
            due[0].done = True
            due[0].fn()

    @property
    def pending(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.done]


class FakeTimer:
    def __init__(self, due: float, fn: Callable[[], None]) -> None:
        self.due, self.fn, self.done = due, fn, False

    def cancel(self) -> None:
        self.done = True


def coalescer(clock: Clock) -> tuple[Coalescer, list[tuple[float, Any]]]:
    written: list[tuple[float, Any]] = []
    return Coalescer(lambda v: written.append((clock.now, v)), RATE, clock=clock, start_timer=clock.start), written


def test_leading_edge_writes_at_once_when_idle() -> None:
    clock = Clock()
    c, written = coalescer(clock)
    c.push("a")
    assert written == [(100.0, "a")] and not clock.pending
    clock.advance(0.5)  # idle for longer than an interval: the next push is written at once too
    c.push("b")
    assert written[-1] == (100.5, "b") and not clock.pending


def test_trailing_flush_after_a_pause_shows_the_latest_value() -> None:
    clock = Clock()
    c, written = coalescer(clock)
    c.push("a")
    clock.advance(0.02)
    c.push("ab")
    clock.advance(0.02)
    c.push("abc")  # then the stream pauses: no further push
    assert written == [(100.0, "a")]
    assert len(clock.pending) == 1  # one timer for the window, not one per push
    clock.advance(0.06)  # the end of the interval
    assert written == [(100.0, "a"), (100.1, "abc")]
    clock.advance(1.0)
    assert len(written) == 2  # nothing held, nothing rewritten


def test_at_most_one_write_per_interval_under_a_fast_stream() -> None:
    clock = Clock()
    c, written = coalescer(clock)
    for i in range(1000):  # one push a millisecond for a second
        c.push(i)
        clock.advance(0.001)
    clock.advance(1.0)
    times = [t for t, _ in written]
    assert written[-1][1] == 999  # the last value always arrives
    assert all(b - a >= 0.1 - 1e-9 for a, b in itertools.pairwise(times)), times
    assert 10 <= len(written) <= 11  # the cap, and no more coalescing than it needs


def test_force_writes_at_once_and_supersedes_the_timer() -> None:
    clock = Clock()
    c, written = coalescer(clock)
    c.push("a")
    clock.advance(0.01)
    c.push("b")
    c.push("final", force=True)
    assert [v for _, v in written] == ["a", "final"] and not clock.pending
    clock.advance(1.0)
    assert [v for _, v in written] == ["a", "final"]


def test_a_stale_timer_that_fires_late_does_nothing() -> None:
    clock = Clock()
    c, written = coalescer(clock)
    c.push("a")
    c.push("b")
    stale = clock.pending[0]
    c.push("c", force=True)  # cancels it, but a real timer may already be running its callback
    clock.advance(0.01)
    c.push("d")  # a new window with its own timer
    stale.fn()  # the old callback arrives now
    assert [v for _, v in written] == ["a", "c"]  # "d" still waits for its own interval
    clock.advance(0.1)
    assert [v for _, v in written] == ["a", "c", "d"]


def test_cancel_drops_the_held_value() -> None:
    clock = Clock()
    c, written = coalescer(clock)
    c.push("a")
    c.push("b")
    c.cancel()
    clock.advance(1.0)
    assert [v for _, v in written] == ["a"] and not clock.pending


def test_cell_view_shows_text_held_back_during_a_pause() -> None:
    clock = Clock()
    shown: list[str] = []
    view = CellView(publish=lambda *a, **k: None, update=lambda bundle, display_id: shown.append(bundle["text/html"]),
                    rate=RATE, clock=clock, start_timer=clock.start)
    view.model.on_delta({}, {"text": "Hello"})
    clock.advance(0.01)
    view.model.on_delta({}, {"text": " wor"})  # inside the interval: held; then the model pauses
    assert len(shown) == 1 and "wor" not in shown[0]
    clock.advance(0.1)
    assert len(shown) == 2 and "Hello wor" in shown[1]
    view.model.on_delta({}, {"text": "ld"})
    clock.advance(0.01)
    view.model.on_delta({}, {"text": "!"})
    view.finish()  # a held update must not land after the placeholder
    clock.advance(1.0)
    assert shown[-1] == "" and not clock.pending


def test_the_thread_timer_runs_in_the_pushing_threads_context() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="none")
    seen: list[str] = []
    done = threading.Event()

    def worker() -> None:
        var.set("cell-7")  # what ipykernel's parent header is to the worker thread
        start_thread_timer(0.0, lambda: (seen.append(var.get()), done.set()))

    threading.Thread(target=contextvars.copy_context().run, args=(worker,)).start()
    assert done.wait(10)
    assert seen == ["cell-7"]


def test_timers_share_one_thread_run_soonest_first_and_skip_cancelled_ones() -> None:
    timers = TimerThread()
    ran: list[str] = []
    done = threading.Event()
    before = threading.active_count()
    timers.start(0.2, lambda: (ran.append("late"), done.set()))
    dropped = timers.start(0.05, lambda: ran.append("cancelled"))
    timers.start(0.1, lambda: ran.append("soon"))
    timers.start(0.0, lambda: ran.append("now"))
    dropped.cancel()
    assert threading.active_count() <= before + 1  # one thread for all four, not a thread a timer
    assert done.wait(10)
    assert ran == ["now", "soon", "late"]


def test_a_timer_that_raises_does_not_stop_the_later_ones(monkeypatch: Any) -> None:
    timers = TimerThread()
    hooked: list[type[BaseException] | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: hooked.append(args.exc_type))
    done = threading.Event()

    def boom() -> None:
        raise ValueError("a write failed")

    timers.start(0.0, boom)
    timers.start(0.05, done.set)
    assert done.wait(10)
    assert hooked == [ValueError]


def test_a_timer_started_on_the_brute_loop_waits_there_and_runs_on_the_timer_thread() -> None:
    """A turn's stream pushes from brute_nb's loop: the loop keeps the time (no other thread is woken for a timer
    a short reply cancels), and the call still runs off the loop, in the pushing code's context."""
    from brute_nb.event_loop import run_sync, shared_loop
    from brute_nb.notebook.views.coalesce import timer_thread

    var: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="none")
    ran: list[tuple[str, bool]] = []
    done = threading.Event()
    loop = shared_loop()

    async def push() -> tuple[int, int]:
        var.set("cell-9")
        waiting = len(timer_thread()._heap)
        start_thread_timer(0.05, lambda: (ran.append((var.get(), loop.on_it())), done.set()))
        cancelled = start_thread_timer(0.0, lambda: ran.append(("cancelled", loop.on_it())))
        cancelled.cancel()
        return waiting, len(timer_thread()._heap)

    before, after = run_sync(push)
    assert after <= before  # nothing handed to the timer thread yet (it may have dropped an old cancelled one)
    assert done.wait(10)
    assert ran == [("cell-9", False)]


class Sink:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.sent: list[tuple[float, list[Any]]] = []

    def send(self, display_id: str, ops: list[Any]) -> None:
        self.sent.append((self.clock.now, ops))

    def close(self) -> None:
        pass


def live_view(clock: Clock) -> tuple[CellView, Sink]:
    sink = Sink(clock)
    view = CellView(publish=lambda *a, **k: None, update=lambda *a, **k: None, live=sink, clock=clock,
                    start_timer=clock.start)  # the live widget's default rate: live.LIVE_RATE
    return view, sink


def test_the_live_view_writes_a_fast_model_ten_times_a_second_at_most() -> None:
    """Issue 29: a message per chunk cost 4-8x a print stream's bytes; ten writes a second keep every chunk on
    screen within 100 ms (print: ~200 ms) at a fraction of the messages."""
    from brute_nb.notebook.views.live import LIVE_RATE

    assert LIVE_RATE == 10
    clock = Clock()
    view, sink = live_view(clock)
    pushed: list[float] = []
    for i in range(100):  # 33 chunks a second, a fast model, for 3 s
        view.model.on_delta({}, {"text": f"w{i:04d} "})
        pushed.append(clock.now)
        for _ in range(3):  # time in 10 ms steps, so that a timer fires (nearly) when it is due
            clock.advance(0.01)
    clock.advance(1.0)
    times = [t for t, _ in sink.sent]
    assert 28 <= len(times) <= 31  # ten a second, not one a chunk
    assert all(b - a >= 0.1 - 2e-6 for a, b in itertools.pairwise(times))
    text = "".join(op.get("a", "") for _, ops in sink.sent for op in ops)
    assert text == "".join(f"w{i:04d} " for i in range(100))  # every chunk arrives, none later than 100 ms
    assert max(min(t for t in times if t >= p - 1e-9) - p for p in pushed) <= 0.1 + 0.01
    assert not clock.pending


def test_the_live_view_shows_a_slow_models_chunks_at_once_after_the_first() -> None:
    clock = Clock()
    view, sink = live_view(clock)
    view.model.on_delta({}, {"text": "first "})
    assert sink.sent == []  # the first write waits one interval: the turn may be over by then
    clock.advance(0.1)
    assert [t for t, _ in sink.sent] == [100.1]
    for i in range(5):  # chunks 0.2 s apart: each written as it comes
        clock.advance(0.2)
        view.model.on_delta({}, {"text": f"w{i} "})
        assert sink.sent[-1][0] == clock.now
    text = "".join(op.get("a", "") for _, ops in sink.sent for op in ops)
    assert text == "first w0 w1 w2 w3 w4 "


def test_a_turn_over_within_the_first_interval_never_shows_the_live_widget() -> None:
    """A short reply: its delta, its complete message (a forced write) and the end of the turn all come before the
    first write is due, so no widget is made and the placeholder is not touched: the cell gets its final outputs
    only (issue 29: 13 IOPub messages for a one-line reply, against a raw SDK cell's 4)."""
    from brute_nb.message import Message

    clock = Clock()
    updates: list[Any] = []
    sink = Sink(clock)
    view = CellView(publish=lambda *a, **k: None, update=lambda *a, **k: updates.append(a), live=sink,
                    clock=clock, start_timer=clock.start)
    view.start()
    view.model.on_delta({}, {"text": "Hello!"})
    clock.advance(0.05)
    view.model.on_message({}, Message("assistant", "Hello!"))  # forced: still held, the first write is not due
    clock.advance(0.01)
    view.finish()
    view.detach(type("A", (), {"off": lambda *a: None})())
    clock.advance(1.0)
    assert sink.sent == [] and updates == []


def test_display_ids_are_unique_and_draw_no_randomness_a_cell(monkeypatch: Any) -> None:
    import os

    from brute_nb.notebook.views import display

    def no_syscall(n: int) -> bytes:
        raise AssertionError("a display id drew from os.urandom: a GIL release at every cell's start")

    monkeypatch.setattr(os, "urandom", no_syscall)
    ids = {CellView().display_id for _ in range(500)} | {display.display_id("brute-copy") for _ in range(500)}
    assert len(ids) == 1000 and all(i.startswith("brute-") for i in ids)
