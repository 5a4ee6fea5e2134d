"""``brute_nb.map(template, df)``: one prompt per row, results aligned to ``df``'s index.

It checks every argument before any row runs (each problem named), settles the run's settings (its context's
model, replay and root unless given: ``map.context``), splits rows into cached and missing, runs the missing ones on
an engine (in-process by default, or a Dask cluster), and assembles the frame. Rows with the same prompt run
once. The invariant: a record is cached the moment its row finishes, before the next one is reported, so an
interrupt or a dead kernel loses no finished row, and a re-run asks only for what is missing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb.amounts import parse_cost, parse_int
from brute_nb.errors import SettingsError
from brute_nb.frames import KIND
from brute_nb.map import context as contexts
from brute_nb.map import schema as schemas
from brute_nb.map import template as templates
from brute_nb.map.cache import Done, MapCache, Record
from brute_nb.map.context import MapContext
from brute_nb.map.progress import Progress
from brute_nb.map.spec import Job, MapSpec, row_key, run_name
from brute_nb.redact import redact_value

if TYPE_CHECKING:
    import pandas as pd

REPLY = "reply"
COLUMNS = ("error", "input_tokens", "output_tokens", "cost", "session", "cached")


def map_rows(
    template: str,
    df: pd.DataFrame,
    *,
    schema: Any = None,
    tools: str = "none",
    model: str | None = None,
    system: str | None = None,
    concurrency: int = 8,
    backend: Any = "local",
    cache: bool = True,
    name: str | None = None,
    root: str | os.PathLike[str] | None = None,
    max_iterations: int = 20,
    progress: bool = True,
    partition_size: int | None = None,
    batch: bool = False,
    confirm_above: float | str | None = None,
    escalate: list[Any] | tuple[Any, ...] = (),
    context: MapContext | None = None,
) -> pd.DataFrame:
    """Run ``template``, filled from each row of ``df``, as one agent turn per row; a frame indexed like ``df``.

    Columns: ``reply`` (or one per field of a pydantic ``schema``), ``error``, ``input_tokens``, ``output_tokens``,
    ``cost`` (USD, None for an unpriced model), ``session`` (the row's conversation, a session file) and
    ``cached``. ``backend``: ``"local"``, ``"dask"``, a ``distributed.Client`` or a scheduler address.
    ``batch=True`` sends the missing rows as one provider batch at half the price (``map.batch``): one round per
    row, no tools; re-running the cell resumes the same batch. ``confirm_above`` (USD; default ``%brute config
    confirm_above``): when the rows still to send may cost more (``brute_nb.estimate``), ask first (``map.confirm``).
    ``escalate`` (with ``schema``): models (``provider:model`` names, or providers in this kernel) a row whose reply
    fails the schema is asked again on, in order, while the run has spent less than ``confirm_above``; the frame
    gains a ``model`` column naming the one that answered. ``context``: where rows are saved and the defaults
    (``map.context``; in a kernel, its settings and notebook folder).
    """
    if batch and (backend != "local" or tools != "none"):
        raise SettingsError("map(batch=True) sends one request per row in one provider batch: it runs in this kernel "
                            "(backend='local') and without tools (tools='none'), since a batch cannot run a tool "
                            "and ask again")
    ctx = contexts.given(context)
    spec, provider = settle(template, df, schema=schema, tools=tools, model=model, system=system, name=name,
                            root=root, max_iterations=max_iterations, cache=cache, backend=backend,
                            concurrency=concurrency, context=ctx)
    names, given = _escalations(escalate, schema=schema, batch=batch, backend=backend)
    limit = ceiling(confirm_above, ctx)
    spec = replace(spec, escalate=names, ceiling=limit)
    positions, jobs = plan(spec, df)
    return execute(spec, df, positions, jobs, provider=provider, context=ctx, backend=backend,
                   concurrency=int(concurrency), cache=cache, progress=progress, batch=batch,
                   partition_size=partition_size, limit=limit, escalations=given)


def execute(spec: MapSpec, df: pd.DataFrame, positions: dict[str, list[int]], jobs: list[Job], *, provider: Any,
            context: MapContext, backend: Any = "local", concurrency: int = 8, cache: bool = True,
            progress: bool = True, batch: bool = False, partition_size: int | None = None, limit: float | None = None,
            escalations: list[Any] | None = None) -> pd.DataFrame:
    """The rows ``plan`` made, run: cached ones read back, the rest confirmed against ``limit`` and run (each
    cached as it finishes), and the frame assembled. ``brute_nb.compare`` runs its prompts through here too."""
    store = MapCache(Path(spec.folder + ".jsonl") if cache else Path(spec.folder) / "results.jsonl", root=spec.home)
    given = provider
    with store, _closing(lambda: provider if given is None else None):
        results: dict[str, Record] = {}
        cached = {key for key in positions if key in store.records}
        todo = [job for job in jobs if job.key not in cached]
        if limit is not None and todo:
            provider = _confirmed(spec, provider, todo, store.records, rows=len(df), cached=len(df) - sum(
                len(positions[j.key]) for j in todo), limit=limit, batch=batch, context=context)
        bar = Progress(len(df), len(df) - sum(len(positions[j.key]) for j in todo), enabled=progress,
                       name=Path(spec.folder).name)

        def done(job: Job, record: Record) -> None:
            record = redact_value(record)  # the frame is a cell's output: it shows what the cache keeps
            store.add([record])
            results[job.key] = record
            bar.update(record, len(positions[job.key]))

        try:
            if batch and todo:
                _run_batch(spec, todo, done, provider, bar)
            else:
                run(spec, todo, done, backend=backend, concurrency=concurrency, provider=provider,
                    partition_size=partition_size, escalations=escalations, select=context.select)
        finally:
            bar.close()
        for key in cached:
            results[key] = {**store.records[key], "cached": True}
    return assemble(spec, df, positions, results)


def settle(template: str, df: Any, *, schema: Any, tools: str, model: str | None, system: str | None,
           name: str | None, root: Any, max_iterations: int, cache: bool, backend: Any,
           concurrency: int, context: MapContext) -> tuple[MapSpec, Any]:
    """Every argument checked (all problems at once), and the run's spec: explicit values over the context's."""
    from brute_nb.sessions.names import check_session_name

    ctx = context
    problems: list[str] = []

    def check(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except (SettingsError, ValueError, TypeError) as exc:
            problems.append(str(exc))
            return None

    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise SettingsError(f"map() runs over a pandas DataFrame, got {type(df).__name__}")
    check(lambda: templates.check(template, df.columns))
    check(lambda: _check_fields(schema))
    if root is not None:
        check(lambda: _check_root(root))
    check(lambda: parse_int("concurrency", concurrency))
    check(lambda: parse_int("max_iterations", max_iterations))
    check(lambda: _check_tools(tools, ctx.select))
    if name is not None:
        check(lambda: check_session_name(name))
    local = backend == "local"
    if not local and not isinstance(model, str | None):
        problems.append("model= must be a 'provider:model' name with a Dask backend (each worker builds its own)")
    if problems:
        raise SettingsError("map(): " + "; ".join(problems))

    provider = model if not isinstance(model, str | None) else None
    if provider is None and model is None and local and ctx.session_model is not None:
        provider = ctx.session_model()  # a cassette is one connection's traffic in order: the session's own
    model_name = getattr(provider, "label", None) or model or ctx.model
    folder = ctx.sessions / "map"
    identity = {"template": template, "model": model_name, "system": system,
                "schema": schemas.schema_json(schema), "tools": tools}
    run = name or run_name(identity)
    if not cache:
        run = f"{run}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S-%f')}"
    root_path = Path(root).expanduser().resolve() if root else ctx.root
    spec = MapSpec(template=template, folder=str(folder / run), model=model_name, system=system, tools=tools,
                   schema=schema, max_iterations=int(max_iterations), root=str(root_path) if root_path else None,
                   approve=tuple(sorted(ctx.approve)),
                   replay=str(ctx.replay) if ctx.replay and provider is None and not model else None,
                   record=str(ctx.record) if ctx.record and provider is None and not model else None)
    return spec, provider


def _check_fields(schema: Any) -> None:
    """The schema is one (``schema.check``), and no field of it is named like a column the frame adds: the two
    would collide once the rows are paid for."""
    schemas.check(schema)
    clash = [f for f in schemas.fields(schema) if f in COLUMNS] if schema is not None else []
    if clash:
        raise SettingsError(f"schema= {schema.__name__} has the field{'s' if len(clash) > 1 else ''} "
                            f"{', '.join(clash)}, which map's frame has as its own column (it adds "
                            f"{', '.join(COLUMNS)}): rename {'them' if len(clash) > 1 else 'it'} in the schema")


def _check_root(root: Any) -> None:
    """``root=`` may name any folder, even one not made yet; a name no system takes is refused here, by name,
    not found as a ``ValueError`` deep inside a row."""
    try:
        os.stat(Path(root).expanduser())
    except FileNotFoundError:
        return
    except (OSError, ValueError, TypeError) as exc:
        text = str(root)
        shown = repr(text if len(text) <= 60 else text[:60] + "...")
        raise SettingsError(f"root= {shown} cannot name a folder ({type(exc).__name__}: "
                            f"{getattr(exc, 'strerror', None) or exc})") from None


def _escalations(escalate: Any, *, schema: Any, batch: bool, backend: Any) -> tuple[tuple[str, ...],
                                                                                     list[Any] | None]:
    """``escalate``'s model names, and its providers when some were given as objects (else None: built by name)."""
    items = [escalate] if isinstance(escalate, str) else list(escalate or ())
    if not items:
        return (), None
    problems = []
    if schema is None:
        problems.append("escalate= asks another model when a reply fails its schema: pass schema= too")
    if batch:
        problems.append("escalate= runs after a row's reply, which a batch returns only at its end: drop batch=True")
    objects = [x for x in items if not isinstance(x, str)]
    if objects and backend != "local":
        problems.append("escalate= takes 'provider:model' names with a Dask backend (each worker builds its own)")
    if any(not isinstance(x, str) and not hasattr(x, "label") for x in items):
        problems.append("escalate= takes 'provider:model' names or providers (brute_nb.providers.auto(...))")
    if problems:
        raise SettingsError("map(): " + "; ".join(problems))
    names = tuple(x if isinstance(x, str) else str(x.label) for x in items)
    return names, ([None if isinstance(x, str) else x for x in items] if objects else None)


def ceiling(confirm_above: float | str | None, context: MapContext) -> float | None:
    """The run's ``confirm_above`` in USD (given, else the context's); None when nothing is to be asked."""
    value = parse_cost("confirm_above", confirm_above) if confirm_above is not None else context.confirm_above
    return None if value is None or value == float("inf") else value


def _confirmed(spec: MapSpec, provider: Any, todo: list[Job], records: dict[str, Record], *, rows: int, cached: int,
               limit: float, batch: bool, context: MapContext) -> Any:
    """The provider to run with, once the estimate is within ``limit`` or a person said yes (else raises)."""
    from brute_nb.event_loop import run_sync
    from brute_nb.map.confirm import confirm
    from brute_nb.map.cost_estimate import estimate_jobs
    from brute_nb.map.row import make_provider

    chosen = provider if provider is not None else make_provider(spec)  # the rows reuse its client (local runs)
    confirmed = False
    with _closing(lambda: chosen if provider is None and not confirmed else None):  # refused: closed here
        estimate = run_sync(lambda: estimate_jobs(spec, chosen, todo, rows=rows, cached=cached, records=records,
                                                  select=context.select))
        confirm(estimate, limit, batch=batch, ask=context.ask)
        confirmed = True
    return chosen


def _check_tools(tools: Any, select: contexts.Select) -> None:
    if not isinstance(tools, str):
        raise SettingsError(f"tools= takes a spec string (none, read-only, all, or names like read,fs_search), "
                            f"got {tools!r}")
    select(tools)


def plan(spec: MapSpec, df: pd.DataFrame) -> tuple[dict[str, list[int]], list[Job]]:
    """Each row's key and prompt; rows with equal keys share one job (asked once, answered for each)."""
    identity = spec.identity()
    columns = templates.columns_read(spec.template, df.columns)
    frame = df.loc[:, [c for c in df.columns if str(c) in columns]]
    names = [str(c) for c in frame.columns]
    positions: dict[str, list[int]] = {}
    jobs: list[Job] = []
    for i, values in enumerate(frame.itertuples(index=False, name=None)):
        row = dict(zip(names, values, strict=True))
        try:
            key = row_key(identity, row)
            prompt = templates.fill(spec.template, row) if key not in positions else ""
        except Exception as exc:  # the value's own __repr__ or __str__ failed: any exception of the user's class
            raise _unreadable(df, i, row, exc) from exc
        if key in positions:
            positions[key].append(i)
            continue
        positions[key] = [i]
        jobs.append(Job(i, key, prompt))
    return positions, jobs


def _unreadable(df: pd.DataFrame, i: int, row: dict[str, Any], exc: Exception) -> SettingsError:
    """The error for a row whose values cannot become a prompt: which row, which column, what its text raised."""
    def fails(value: Any) -> bool:
        try:
            repr(value), str(value)
        except Exception:  # the same failure, found column by column
            return True
        return False

    columns = [name for name, value in row.items() if fails(value)] or list(row)
    named = ", ".join(repr(c) for c in columns)
    return SettingsError(f"map(): row {df.index[i]!r} has a value that cannot become text in column {named} "
                         f"({type(exc).__name__}: {exc}); fix or drop it before the run (nothing was sent)")


def run(spec: MapSpec, jobs: list[Job], done: Done, *, backend: Any, concurrency: int,
        provider: Any, partition_size: int | None, escalations: list[Any] | None = None,
        select: contexts.Select | None = None) -> None:
    """The rows run: here, with the context's tools; or on Dask, where each worker reads ``tools=`` itself."""
    if not jobs:
        return
    if backend == "local":
        from brute_nb.event_loop import run_sync
        from brute_nb.map.local import run_local

        run_sync(lambda: run_local(spec, jobs, done, concurrency=concurrency, provider=provider,
                                   escalations=escalations, select=select))
        return
    from brute_nb.map.cluster import run_dask

    run_dask(spec, jobs, done, backend=backend, concurrency=concurrency, partition_size=partition_size)


def _run_batch(spec: MapSpec, jobs: list[Job], done: Done, provider: Any,
               bar: Progress) -> None:
    from brute_nb.event_loop import run_sync
    from brute_nb.map.batch import run_batch
    from brute_nb.map.row import make_provider

    chosen = provider if provider is not None else make_provider(spec)
    with _closing(lambda: chosen if provider is None else None):
        run_sync(lambda: run_batch(spec, jobs, done, provider=chosen, status=bar.status))


@contextlib.contextmanager
def _closing(made: Callable[[], Any]) -> Iterator[None]:
    """Close, at the end, the provider ``made()`` names (one this run built, None otherwise): its clients live on
    the kernel's loop, which never ends, so its kept-alive connections would stay open for the kernel's life."""
    try:
        yield
    finally:
        provider = made()
        if provider is not None:
            from brute_nb.event_loop import run_sync
            from brute_nb.map.row import aclose_provider

            run_sync(lambda: aclose_provider(provider))


def assemble(spec: MapSpec, df: pd.DataFrame, positions: dict[str, list[int]],
             results: dict[str, Record]) -> pd.DataFrame:
    import pandas as pd

    fields = schemas.fields(spec.schema) if spec.schema is not None else [REPLY]
    rows: list[Record | None] = [None] * len(df)
    for key, at in positions.items():
        record = results.get(key)
        for i in at:
            rows[i] = record
    sessions = Path(spec.folder) / "sessions"
    extra = (("answered_by" if "model" in fields else "model"),) if spec.escalate else ()
    data: dict[str, list[Any]] = {f: [] for f in (*fields, *extra, *COLUMNS)}
    for record in rows:
        r = record or {"error": "not run (the run was interrupted)"}
        values = r.get("fields") or {} if spec.schema is not None else {REPLY: r.get(REPLY)}
        for f in fields:
            data[f].append(values.get(f))
        if extra:
            data[extra[0]].append(r.get("model") or spec.model)
        data["error"].append(r.get("error"))
        data["input_tokens"].append(r.get("input_tokens"))
        data["output_tokens"].append(r.get("output_tokens"))
        data["cost"].append(r.get("cost"))
        data["session"].append(str(sessions / r["session"]) if r.get("session") else None)
        data["cached"].append(bool(r.get("cached")))
    out = pd.DataFrame(data, index=df.index)
    for column in ("input_tokens", "output_tokens"):
        out[column] = out[column].astype("Int64")
    out["cost"] = out["cost"].astype("Float64")
    out.attrs[KIND] = "map"  # a notebook shows replies with their line breaks and session paths by their end
    return out


map = map_rows  # the public name: brute_nb.map(template, df), like the builtin over rows
