"""The Dask engine: partitions of rows run on a ``distributed`` cluster, their records streamed back as they finish.

What travels to the workers is ``run_partition`` with a ``MapSpec`` and a list of ``Job``s: plain values, no
client, no provider, no key. Each worker builds its provider from its own environment, so API keys never enter
the task graph. Each partition runs the local engine on its worker (bounded and adaptive per worker), and the
client takes partitions back in completion order into the same cache and progress bar. Interrupting cancels
what has not finished; what has is already cached.
"""

from __future__ import annotations

from typing import Any

from brute_nb.errors import BruteError
from brute_nb.map.cache import Done
from brute_nb.map.spec import Job, MapSpec

PARTITIONS_PER_WORKER = 4
MAX_PARTITION = 64


def connect(backend: Any) -> tuple[Any, bool]:
    """(client, made_here): a ``distributed.Client`` as given, one for a scheduler address, or for ``"dask"`` the
    current client (``distributed.get_client()``) or else a new local cluster (closed after the run)."""
    try:
        import distributed
    except ImportError:
        raise BruteError("backend='dask' needs Dask's distributed scheduler: pip install 'brute_nb[dask]'") from None
    if isinstance(backend, distributed.Client):
        return backend, False
    if backend == "dask":
        try:
            return distributed.get_client(), False
        except ValueError:
            return distributed.Client(), True
    return distributed.Client(backend), True


def partitions(jobs: list[Job], workers: int, size: int | None = None) -> list[list[Job]]:
    """Small enough that records stream back often and every worker stays busy, never more than MAX_PARTITION."""
    if size is None:
        size = max(1, min(MAX_PARTITION, -(-len(jobs) // max(1, workers * PARTITIONS_PER_WORKER))))
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


def run_dask(spec: MapSpec, jobs: list[Job], done: Done, *, backend: Any,
             concurrency: int, partition_size: int | None = None) -> None:
    from distributed import as_completed

    from brute_nb.map.local import run_partition

    client, made_here = connect(backend)
    futures: list[Any] = []
    try:
        workers = max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})))
        parts = partitions(jobs, workers, partition_size)
        futures = [client.submit(run_partition, spec, part, concurrency, pure=False) for part in parts]
        owner = {f.key: part for f, part in zip(futures, parts, strict=True)}
        for future in as_completed(futures):
            for job, record in zip(owner[future.key], future.result(), strict=True):
                done(job, record)
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if made_here:
            client.close()
