"""The in-process engine: ``concurrency`` anyio tasks pull rows from one iterator and hand each finished record
to ``done`` at once (the caller caches it and moves the progress bar before the next row starts).

Memory stays flat in the number of rows: jobs are pulled lazily and no per-row agent or log outlives its row.
Cancelling the run (an interrupted cell) stops the tasks; every record already handed to ``done`` is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio

from brute_nb.map.cache import Done, Record
from brute_nb.map.context import Select
from brute_nb.map.row import RowContext, run_row
from brute_nb.map.spec import Job, MapSpec


async def run_local(spec: MapSpec, jobs: Iterable[Job], done: Done, *, concurrency: int,
                    provider: Any = None, escalations: list[Any] | None = None, select: Select | None = None) -> None:
    ctx = RowContext.build(spec, concurrency, provider, escalations, select)
    queue = iter(jobs)

    async def worker() -> None:
        for job in queue:  # shared: each task takes the next row when its last one is done
            done(job, await run_row(ctx, job))

    try:
        async with anyio.create_task_group() as group:
            for _ in range(max(1, concurrency)):
                group.start_soon(worker)
    finally:
        await ctx.aclose()


def run_partition(spec: MapSpec, jobs: list[Job], concurrency: int) -> list[Record]:
    """A Dask task: one partition of rows run on the worker, records in the order of ``jobs``; the worker reads
    ``tools=`` with the default context's reading (nothing of the driving kernel reaches it)."""
    from brute_nb.event_loop import run_sync

    records: dict[str, Record] = {}
    run_sync(lambda: run_local(spec, jobs, lambda job, record: records.__setitem__(job.key, record),
                               concurrency=concurrency))
    return [records[job.key] for job in jobs]
