"""The live-update coalescer (leading edge, trailing flush, cap) on an injected clock and timers: no sleeping."""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Callable
from typing import Any

from brute_nb.notebook.coalesce import Coalescer, start_thread_timer
from brute_nb.notebook.display import CellView

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
    view.on_delta({}, {"text": "Hello"})
    clock.advance(0.01)
    view.on_delta({}, {"text": " wor"})  # inside the interval: held; then the model pauses
    assert len(shown) == 1 and "wor" not in shown[0]
    clock.advance(0.1)
    assert len(shown) == 2 and "Hello wor" in shown[1]
    view.on_delta({}, {"text": "ld"})
    clock.advance(0.01)
    view.on_delta({}, {"text": "!"})
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


def test_the_live_view_writes_each_chunk_of_a_fast_model_at_once() -> None:
    from brute_nb.notebook.live import LIVE_RATE

    assert LIVE_RATE == 50
    clock = Clock()
    view, sink = live_view(clock)
    for i in range(100):  # 33 chunks a second, a fast model: no coalescing, one message a chunk, no delay
        view.on_delta({}, {"text": f"w{i:04d} "})
        assert sink.sent[-1][0] == clock.now and len(sink.sent) == i + 1
        clock.advance(0.03)
    assert not clock.pending


def test_the_live_view_coalesces_only_chunks_faster_than_50_a_second() -> None:
    clock = Clock()
    view, sink = live_view(clock)
    pushed: list[float] = []
    for i in range(500):  # 200 chunks a second for 2.5 s
        view.on_delta({}, {"text": f"w{i:04d} "})
        pushed.append(clock.now)
        clock.advance(0.005)
    clock.advance(1.0)
    times = [t for t, _ in sink.sent]
    assert 120 <= len(times) <= 126  # 50 writes a second, not fewer
    assert all(b - a >= 0.02 - 2e-6 for a, b in itertools.pairwise(times))
    text = "".join(op.get("a", "") for _, ops in sink.sent for op in ops)
    assert text == "".join(f"w{i:04d} " for i in range(500))  # every chunk arrives, none later than 20 ms
    assert max(min(t for t in times if t >= p - 1e-9) - p for p in pushed) <= 0.02 + 2e-6
