"""brute_nb.map on a Dask LocalCluster of two worker processes, against the loopback fake provider.

One cluster for the module (starting one takes seconds). The workers inherit the fake provider's address and key
from the environment the ``fake`` fixture set before the cluster started: that is the only way they get a key.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.map import cluster as cluster_module
from brute_nb.testing import FakeProvider
from brute_nb.testing.fake_server import RateLimit
from tests.map.conftest import MODEL, paid

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(fake: FakeProvider) -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as local, distributed.Client(local) as c:
        yield c


def test_rows_run_on_the_workers_aligned_to_the_index_with_a_failing_row(
        server: FakeProvider, notebook: Path, client: Any) -> None:
    df = pd.DataFrame({"review": [f"d{i}" for i in range(10)] + ["FAIL x"]}, index=[f"k{i}" for i in range(11)])
    out = brute_nb.map("Say {review}", df, model=MODEL, backend=client, progress=False, partition_size=3)
    assert list(out.index) == list(df.index)
    assert list(out["reply"].iloc[:10]) == [f"echo: Say d{i}" for i in range(10)]
    assert "HTTP 400" in out.loc["k10", "error"]
    again = brute_nb.map("Say {review}", df, model=MODEL, backend=client, progress=False)
    assert again["cached"].sum() == 10
    assert sorted(paid(server)) == sorted([f"Say d{i}" for i in range(10)] + ["Say FAIL x"] * 2)


def test_a_429_storm_on_the_cluster_fails_no_row(server: FakeProvider, notebook: Path, client: Any) -> None:
    # A bucket of one token refilled five times a second: with sixteen requests in flight at once, a storm happens
    # however slowly a loaded machine starts the workers (a bucket of ten let a staggered start pass unlimited).
    server.rate_limit = RateLimit(300)
    server.rate_limit.capacity = server.rate_limit.tokens = 1.0
    df = pd.DataFrame({"review": [f"s{i}" for i in range(30)]})
    out = brute_nb.map("Say {review}", df, model=MODEL, backend=client, concurrency=8, progress=False)
    assert out["error"].isna().all()
    assert any(r.get("limited") for r in server.requests)
    assert sorted(paid(server)) == sorted(f"Say s{i}" for i in range(30))


def test_the_api_key_is_not_in_the_task_graph(server: FakeProvider, notebook: Path, client: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    graphs: list[bytes] = []
    real = cluster_module.run_dask.__globals__["connect"]

    def spying_connect(backend: Any) -> tuple[Any, bool]:
        c, made = real(backend)
        submit = c.submit

        def submit_and_look(*args: Any, **kwargs: Any) -> Any:
            future = submit(*args, **kwargs)
            tasks = client.cluster.scheduler.tasks
            deadline = time.monotonic() + 30
            while future.key not in tasks and time.monotonic() < deadline:  # the graph reaches it shortly after
                time.sleep(0.01)
            graphs.append(pickle.dumps(tasks[future.key].run_spec))  # held by our future until we drop it
            return future

        monkeypatch.setattr(c, "submit", submit_and_look)
        return c, made

    monkeypatch.setattr(cluster_module, "connect", spying_connect)
    df = pd.DataFrame({"review": ["a", "b", "c"]})
    out = brute_nb.map("Say {review}", df, model=MODEL, backend=client, progress=False, partition_size=1)
    assert out["error"].isna().all()  # the workers had a key: their own environment's
    assert len(graphs) == 3 and all(b"Say a" in g or b"Say b" in g or b"Say c" in g for g in graphs)
    key = (server.api_key or "").encode()
    assert key and not any(key in g for g in graphs)
