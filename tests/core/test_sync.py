"""Worker: a coroutine on its own thread and loop, whatever the calling code runs under."""

from __future__ import annotations

import threading

import pytest

from brute_nb.sync import Worker


@pytest.mark.anyio
async def test_a_worker_started_from_async_code_runs_its_own_loop() -> None:
    # The worker copies this context, where anyio marks asyncio as running; it must start its loop regardless.
    async def work() -> str:
        return threading.current_thread().name

    worker = Worker(work, name="brute-test-worker").start()
    assert worker.done.wait(10)
    assert worker.error is None
    assert worker.result == "brute-test-worker"
