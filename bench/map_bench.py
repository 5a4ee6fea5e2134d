"""Benchmarks of brute_nb.map (issue 20) against the local fake provider enforcing a rate limit.

    .venv/bin/python bench/map_bench.py --quick   # small sizes, while developing
    .venv/bin/python bench/map_bench.py           # 2,000 rows, 10,000 cached rows, LocalCluster(n_workers=2)

Rows: throughput against the fake server's requests-per-minute limit (429 with retry-after past it), as a ratio
of what the limit allows over the run (its one-second burst included, so 1.0 is the ceiling); failed rows must
be zero. An unchanged re-run of cached rows (every row answered from the cache, no request). Peak traced memory
of a run per row at two sizes (flat means the per-row figure does not grow). The table is the latest
map_bench run on bench/RESULTS.md and is appended to bench/HISTORY.md. Nothing asserts on time: a missed target
is reported.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

import brute_nb  # noqa: E402
from bench.results import record  # noqa: E402
from brute_nb.map.api import plan, settle  # noqa: E402
from brute_nb.map.cache import MapCache  # noqa: E402
from brute_nb.notebook import registry  # noqa: E402
from brute_nb.notebook.front.map_api import kernel_context  # noqa: E402
from brute_nb.testing import FakeProvider  # noqa: E402
from brute_nb.testing.fake_server import RateLimit  # noqa: E402

MODEL = "anthropic:claude-bench"


def echo(body: dict[str, Any]) -> str:
    return "ok " + str(body["messages"][0]["content"])[-12:]


def fresh_notebook(folder: Path) -> None:
    os.environ["BRUTE_NB_NOTEBOOK"] = str(folder / f"bench-{time.monotonic_ns()}.ipynb")
    registry._registry = None


def rows(n: int, tag: str) -> pd.DataFrame:
    return pd.DataFrame({"text": [f"{tag} row {i}" for i in range(n)]})


def throughput(fake: FakeProvider, folder: Path, n: int, rpm: float, backend: Any, tag: str) -> tuple[str, str,
                                                                                                     float, bool]:
    fresh_notebook(folder)
    fake.requests.clear()
    fake.rate_limit = RateLimit(rpm)
    limit = fake.rate_limit
    start = time.monotonic()
    out = brute_nb.map("Label {text}", rows(n, tag), model=MODEL, backend=backend, concurrency=8, progress=False)
    elapsed = time.monotonic() - start
    fake.rate_limit = None
    failed = int(out["error"].notna().sum())
    allowed = limit.capacity + limit.per_second * elapsed
    ratio = n / allowed
    limited = sum(1 for r in fake.requests if r.get("limited"))
    return (f"{n} rows in {elapsed:.1f} s at {rpm:g}/min; {failed} failed, {limited} 429s", ">= 0.90, 0 failed",
            ratio, ratio >= 0.9 and failed == 0)


def cached_rerun(folder: Path, n: int) -> tuple[str, str, float, bool]:
    """Fill the cache as a run would (the same keys and records), then time the unchanged re-run."""
    fresh_notebook(folder)
    df = rows(n, "cached")
    spec, _ = settle("Label {text}", df, schema=None, tools="none", model=MODEL, system=None, name="cached",
                     root=None, max_iterations=20, cache=True, backend="local", concurrency=8,
                     context=kernel_context())  # the context brute_nb.map runs with below
    _, jobs = plan(spec, df)
    with MapCache(Path(spec.folder + ".jsonl")) as cache:
        cache.add({"key": j.key, "reply": "ok", "fields": None, "error": None, "input_tokens": 10,
                   "output_tokens": 2, "cost": 0.0, "session": f"{j.key}.jsonl"} for j in jobs)
    start = time.monotonic()
    out = brute_nb.map("Label {text}", df, model=MODEL, name="cached", progress=False)
    elapsed = time.monotonic() - start
    assert out["cached"].all()
    return f"{n} cached rows in {elapsed * 1000:.0f} ms", "< 2 s", elapsed / 2.0, elapsed < 2.0


def memory(fake: FakeProvider, folder: Path, sizes: tuple[int, int]) -> tuple[str, str, float, bool]:
    per_row = []
    for n in sizes:
        fresh_notebook(folder)
        tracemalloc.start()
        brute_nb.map("Label {text}", rows(n, f"mem{n}"), model=MODEL, concurrency=8, progress=False)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        per_row.append(peak / n)
    ratio = per_row[1] / per_row[0]
    return (f"peak {per_row[0] / 1024:.1f} KiB/row at {sizes[0]} rows, {per_row[1] / 1024:.1f} KiB/row at "
            f"{sizes[1]}", "per-row peak does not grow (<= 1.2x)", ratio, ratio <= 1.2)


def main() -> None:
    quick = "--quick" in sys.argv
    n, rpm, cached, mem = (200, 1200, 2000, (50, 200)) if quick else (2000, 1800, 10_000, (250, 1000))
    table: list[tuple[str, str, str, float, bool]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeProvider(responder=echo) as fake:
        folder = Path(tmp)
        os.environ["ANTHROPIC_API_KEY"] = fake.api_key or ""
        os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
        table.append(("map throughput vs rate limit, local", *throughput(fake, folder, n, rpm, "local", "local")))
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            table.append(("map throughput vs rate limit, LocalCluster(n_workers=2)",
                          *throughput(fake, folder, n, rpm, client, "dask")))
        table.append(("map unchanged re-run, cached rows", *cached_rerun(folder, cached)))
        table.append(("map peak memory per row", *memory(fake, folder, mem)))
    lines = ["| benchmark | result | target | ratio | met? |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {result} | {target} | {ratio:.2f} | {'yes' if met else '**NO**'} |"
              for name, result, target, ratio, met in table]
    print("\n".join(lines))
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    record("map_bench", f"## {stamp} map_bench{' (quick)' if quick else ''}\n\nMachine: {platform.platform()}, "
                        f"{os.cpu_count()} CPUs, Python {platform.python_version()}\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
