"""``map(..., batch=True)``: the rows as one provider batch (half the price, for work that can wait).

Each provider whose profile names a batch API (``Profile.batch``, ``providers.batches``: Anthropic's Message
Batches, OpenAI's file of requests) takes the rows as one batch. Each row's request is exactly the one its
synchronous turn would send (the provider's own ``request``), so a batch answers what ``map`` would have. The
invariants:

- Never submitted twice: the batch id is written beside the run (``<run>.batch.json``, atomically, through the
  project's confined write) before anything else happens, so a re-run of the cell (after an interrupt or a kernel
  restart) resumes polling the same batch. Once its results are cached the file is marked done, and a later run
  submits only the rows still missing.
- Work paid for is kept: each row's result is cached (and its session written) as the results are read.
- One round per row: a batch cannot run a tool and ask again, so batch runs take no tools, and a row whose reply
  still asks for one says so in its error.

Polling backs off (from ``FIRST_WAIT`` to ``MAX_WAIT`` seconds) and shows the batch's status on the progress bar.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from brute_nb import confine
from brute_nb.errors import BruteError, SettingsError
from brute_nb.log import Log
from brute_nb.map import schema as schemas
from brute_nb.map.cache import Done, Record
from brute_nb.map.spec import Job, MapSpec
from brute_nb.message import Message, Role, dumps
from brute_nb.providers import profiles
from brute_nb.providers.batches import BatchApi, Ended
from brute_nb.usage import Usage

FIRST_WAIT = 2.0
MAX_WAIT = 60.0
BATCH_DISCOUNT = 0.5
"""Both providers bill batch requests at half their price (documented by each; genai-prices has no batch rate)."""

NO_ANSWER = "the batch ended without an answer for this row; run the cell again to submit it again"
"""A row the results do not answer (cancelled, expired, or its line unreadable): a re-run submits it again."""

Status = Callable[[str], None]


class BatchError(BruteError):
    """A batch that could not be submitted or read (the message says which, and what to do)."""


def kind_of(provider: Any) -> str:
    """The provider's kind when its profile names a batch API; a SettingsError for a provider with none."""
    label = str(getattr(provider, "label", "")).partition(":")[0]
    profile = profiles.of(label)
    if profile is not None and profile.batch and hasattr(provider, "request"):
        return label
    kinds = ", ".join(f"{p.kind}:..." for p in profiles.every() if p.batch)
    raise SettingsError(f"batch=True needs a provider with a batch API ({kinds}), not "
                        f"{label or type(provider).__name__}")


def api_of(kind: str) -> BatchApi:
    """The batch API ``kind``'s profile names (``module:attribute``), imported now."""
    import importlib

    profile = profiles.of(kind)
    module, _, name = (profile.batch if profile is not None and profile.batch else "").partition(":")
    api: BatchApi = getattr(importlib.import_module(module), name)
    return api


def request(spec: MapSpec, provider: Any, job: Job, tools: list[Any] | None = None) -> dict[str, Any]:
    """The body of the row's (first) request, as its synchronous turn would send it (not streamed); ``tools``
    are the row's tools (a batch has none; ``map.estimate`` counts what a row with tools sends first)."""
    log = Log()
    if spec.system:
        log.system(spec.system)
    native = spec.schema is not None and getattr(provider, "native_schema", False)
    log.user(job.prompt + (schemas.instruction(spec.schema) if spec.schema is not None and not native else ""))
    env: dict[str, Any] = {"messages": log, "tools": tools or [], "schema": spec.schema if native else None}
    body = dict(provider.request(env))
    for key in ("stream", "stream_options"):
        body.pop(key, None)
    return body


async def run_batch(spec: MapSpec, jobs: list[Job], done: Done, *, provider: Any, status: Status) -> None:
    """Submit (or resume) the rows' batch, wait for it and record every row; an SDK failure (a refused key, an
    unreachable server) is the provider's error in the same words a turn would use, with any key redacted."""
    from brute_nb.providers.failures import translate_error
    from brute_nb.redact import redact_exception

    try:
        await _run_batch(spec, jobs, done, provider=provider, status=status)
    except BruteError:
        raise
    except Exception as exc:
        if type(exc).__module__.partition(".")[0] not in sdk_modules():
            raise
        raise translate_error(redact_exception(exc), str(getattr(provider, "provider", None) or kind_of(provider)),
                              getattr(provider, "base_url", None)) from exc


HTTP_MODULES = frozenset({"httpx2", "httpcore"})


def sdk_modules() -> frozenset[str]:
    """Where the errors a batch's calls may raise come from (the profiles' SDKs and their HTTP stack), translated as
    a turn's."""
    return HTTP_MODULES | {p.sdk for p in profiles.every() if p.sdk}


async def _run_batch(spec: MapSpec, jobs: list[Job], done: Done, *, provider: Any, status: Status) -> None:
    kind = kind_of(provider)
    by_id = {job.key: job for job in jobs}
    state_path = Path(spec.folder + ".batch.json")
    root = spec.home
    state = _load(state_path, root)
    if state is None or state.get("done") or state.get("kind") != kind:
        state = {"kind": kind, "id": await _submit(kind, provider, spec, jobs), "rows": sorted(by_id),
                 "done": False}
        confine.write_atomic(state_path, dumps(state).encode(), root=root)
    ended = await _resumed(kind, provider, state_path, str(state["id"]), status)
    answered: set[str] = set()
    if not isinstance(ended, str):
        async for custom_id, message, error in ended:
            job = by_id.get(custom_id)
            if job is not None and custom_id not in answered:  # a line for no row of ours, or a second answer
                answered.add(custom_id)
                done(job, _record(spec, provider, job, message, error))
    left = ended if isinstance(ended, str) else NO_ANSWER
    for key in sorted(set(by_id) - answered):
        done(by_id[key], _record(spec, provider, by_id[key], None, left))
    confine.write_atomic(state_path, dumps({**state, "done": True}).encode(), root=root)


async def _resumed(kind: str, provider: Any, record: Path, batch_id: str, status: Status
                   ) -> Ended:
    """``_wait`` on the batch the record names; a provider that does not know it (made with another key or account,
    or deleted) is the record's problem, said with its path and what to do. Nothing is submitted in its place: the
    batch may well exist where the user can still reach it, and submitting again pays for the rows again."""
    try:
        return await _wait(kind, provider, batch_id, status)
    except Exception as exc:
        if getattr(exc, "status_code", None) != 404 or type(exc).__module__.partition(".")[0] not in sdk_modules():
            raise
        raise BatchError(
            f"{record}: this batch record names batch {batch_id!r}, which the provider does not know (it was made "
            "with another key or account, or it was deleted), so nothing was submitted. If it was made with another "
            "key, set that key and run the cell again; otherwise move the record aside (or delete it) and run the "
            "cell again to submit the rows still missing (they are paid for again)") from None


def _load(path: Path, root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(confine.read_file(path, root=root, limit=1 << 20, why="a batch record is small"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BatchError(f"{path}: not a batch record ({exc}); move it aside to submit the rows again") from None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise BatchError(f"{path}: not a batch record (no batch id); move it aside to submit the rows again")
    return data


async def _submit(kind: str, provider: Any, spec: MapSpec, jobs: list[Job]) -> str:
    bodies = [(job.key, request(spec, provider, job)) for job in jobs]
    return await api_of(kind).submit(provider, bodies, Path(spec.folder).name)


async def _wait(kind: str, provider: Any, batch_id: str, status: Status) -> Ended:
    """Poll until the batch has ended (backing off), then the results as ``(custom_id, Message | None, error)``, or
    the error of every row when the batch failed as a whole."""
    api = api_of(kind)
    wait = FIRST_WAIT
    while True:
        line, ended = await api.poll(provider, batch_id)
        status(line)
        if ended is not None:
            return ended
        await anyio.sleep(wait)
        wait = min(wait * 1.5, MAX_WAIT)


def _record(spec: MapSpec, provider: Any, job: Job, message: Message | None, error: str | None) -> Record:
    from brute_nb.cost import price
    from brute_nb.sessions.file import append_lines

    session = spec.sessions / f"{job.key}.jsonl"
    record: Record = {"key": job.key, "reply": None, "fields": None, "error": error, "input_tokens": 0,
                      "output_tokens": 0, "cost": None, "session": session.name}
    if message is None:
        return record
    meta = {"provider": getattr(provider, "provider", None), **message.meta, "batch": True}
    if getattr(provider, "replaying", False):
        meta["replayed"] = True  # a replayed row cost nothing, as in a map that does not batch (``row.price``)
    full = price(meta)
    meta["cost"] = 0.0 if meta.get("replayed") else full * BATCH_DISCOUNT if full is not None else None
    reply = message.replace(meta=meta)
    if not session.exists():
        spec.sessions.mkdir(parents=True, exist_ok=True)
        append_lines(session, [Message(Role.USER, job.prompt), reply], root=spec.home)
    usage = reply.usage or Usage()  # the one token convention, as every other map row counts
    record.update(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cost=meta["cost"],
                  reply=reply.content)
    if reply.tool_calls:
        names = ", ".join(sorted({c.name for c in reply.tool_calls}))
        record["error"] = (f"the reply asks for tools ({names}); a batch runs one round per row, so run this map "
                           "without batch=True to let the rows use tools")
    elif spec.schema is not None:
        try:
            record["fields"] = schemas.parse(spec.schema, reply.content)
        except ValueError as exc:
            record["error"] = str(exc)
    return record
