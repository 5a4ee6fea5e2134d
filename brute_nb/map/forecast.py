"""``brute_nb.estimate(template, df, ...)``: the public entry, settled exactly as ``brute_nb.map`` settles the same
arguments (its rows, its cache, its provider), so the estimate is of the run that map would make.

It sits above ``api`` (which asks ``cost_estimate`` for ``confirm_above``), so neither imports the other's caller.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from brute_nb.map import context as contexts
from brute_nb.map.api import plan, settle
from brute_nb.map.context import MapContext
from brute_nb.map.cost_estimate import Estimate, cached_records, estimate_jobs

if TYPE_CHECKING:
    import pandas as pd


def estimate(template: str, df: pd.DataFrame, *, model: str | None = None, system: str | None = None,
             schema: Any = None, tools: str = "none", name: str | None = None, max_tokens: int | None = None,
             root: str | os.PathLike[str] | None = None, context: MapContext | None = None) -> Estimate:
    """What ``brute_nb.map(template, df, ...)`` with the same arguments would send and cost, without sending it.

    ``max_tokens`` bounds each reply's output when no row of this run has been answered yet (default: the
    provider's own ``max_tokens``).
    """
    from brute_nb.event_loop import run_sync
    from brute_nb.map.row import aclose_provider, make_provider

    ctx = contexts.given(context)
    spec, provider = settle(template, df, schema=schema, tools=tools, model=model, system=system, name=name,
                            root=root, max_iterations=20, cache=True, backend="local", concurrency=8, context=ctx)
    positions, jobs = plan(spec, df)
    records = cached_records(spec)
    todo = [job for job in jobs if job.key not in records]
    cached = sum(len(at) for key, at in positions.items() if key in records)
    chosen = provider if provider is not None else make_provider(spec)
    try:
        return run_sync(lambda: estimate_jobs(spec, chosen, todo, rows=len(df), cached=cached, records=records,
                                              max_tokens=max_tokens, select=ctx.select))
    finally:
        if provider is None:  # its client lives on the kernel's loop, which never ends: closed with the estimate
            run_sync(lambda: aclose_provider(chosen))
