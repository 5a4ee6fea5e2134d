"""Worker and run_sync: every turn on the one brute_nb loop, in the caller's context, cancellable from any thread."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import anyio
import anyio.lowlevel
import pytest

from brute_nb.event_loop import Worker, loop_local, run_sync, shared_loop

ROUTE: contextvars.ContextVar[str] = contextvars.ContextVar("route", default="none")
"""Stands in for ipykernel's parent_header, which routes a thread's output by context."""


async def _loop_id() -> int:
    return id(asyncio.get_running_loop())


@pytest.mark.anyio
async def test_a_worker_started_from_async_code_runs_on_the_brute_loop() -> None:
    # The worker copies this context, where anyio marks asyncio as running; it must run regardless.
    async def work() -> str:
        return threading.current_thread().name

    worker = Worker(work, name="brute-test-worker").start()
    assert worker.done.wait(10)
    assert worker.error is None
    assert worker.result == "brute-loop"


def test_every_call_runs_on_one_loop_that_outlives_it() -> None:
    loops = {run_sync(_loop_id) for _ in range(3)}
    loops.add(Worker(_loop_id).start().wait())
    assert len(loops) == 1
    assert not shared_loop().loop.is_closed()


def test_the_worker_runs_in_the_context_of_the_code_that_made_it() -> None:
    async def route() -> str:
        await anyio.lowlevel.checkpoint()
        return ROUTE.get()

    def in_cell(name: str) -> Worker:
        ROUTE.set(name)
        return Worker(route)

    first = contextvars.copy_context().run(in_cell, "cell-1").start()
    second = contextvars.copy_context().run(in_cell, "cell-2").start()
    assert (first.wait(), second.wait()) == ("cell-1", "cell-2")


def test_cancel_runs_the_cleanup_and_leaves_the_loop_serving() -> None:
    started, cleaned = threading.Event(), threading.Event()

    async def turn() -> None:
        started.set()
        try:
            await anyio.sleep(60)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.01)
                cleaned.set()

    worker = Worker(turn).start()
    assert started.wait(10)
    worker.cancel()
    assert worker.done.wait(10)
    assert cleaned.is_set() and worker.cancelled and worker.error is None
    assert run_sync(_loop_id) == id(shared_loop().loop)


def test_a_cancel_before_the_task_began_still_cancels_it() -> None:
    ran = threading.Event()

    async def turn() -> None:
        await anyio.sleep(60)
        ran.set()

    loop = shared_loop().loop
    hold = threading.Event()
    loop.call_soon_threadsafe(hold.wait, 5)  # keep the loop busy so the task cannot begin yet
    worker = Worker(turn).start()
    worker.cancel()
    hold.set()
    assert worker.done.wait(10)
    assert worker.cancelled and not ran.is_set()


def test_an_error_reaches_the_waiting_thread_and_the_loop_survives_it() -> None:
    async def fail() -> None:
        raise KeyboardInterrupt  # even a BaseException must not stop the shared loop

    with pytest.raises(KeyboardInterrupt):
        run_sync(fail)
    assert run_sync(_loop_id) == id(shared_loop().loop)


def test_run_sync_on_the_brute_loop_itself_runs_on_a_private_loop() -> None:
    # Waiting on the shared loop from its own thread would wait forever.
    async def outer() -> tuple[int, int]:
        return id(asyncio.get_running_loop()), run_sync(_loop_id)

    here, inner = run_sync(outer)
    assert here == id(shared_loop().loop) and inner != here


@pytest.mark.anyio
async def test_loop_local_keeps_one_object_per_loop() -> None:
    cache: dict[object, object] = {}
    made = loop_local(cache, object)
    assert loop_local(cache, object) is made
    other = run_sync(lambda: _in_loop(cache))
    assert other is not made
    assert run_sync(lambda: _in_loop(cache)) is other


async def _in_loop(cache: dict[object, object]) -> object:
    return loop_local(cache, object)
