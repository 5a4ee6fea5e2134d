"""One row of a map: its own agent turn on its own session file, retried through rate limits, never paid twice.

Each row's conversation is a session (``sessions/<key>.jsonl``, written by ``SessionLog`` as it happens), which
makes resuming exact: a row whose session already ends in a finished reply is answered from that file with no
request (the kernel died after paying but before the cache line); a row whose session ends in the prompt or a
tool result is continued, not asked again. A 429/529 goes to the shared limiter and the same turn is continued
once the provider's ``retry-after`` has passed; other transient failures (5xx, a cut connection) get a couple
of retries; anything else is the row's ``error``. With tools that write, the row works in its own scratch copy
of the root, so rows cannot trample each other's files or the user's.

``escalate``: a row whose reply fails its schema is asked again, from the prompt, on the next model in the list, in
a session of its own (``sessions/<digest of key and model>.jsonl``, resumed the same way), while the run has spent
less than its ``confirm_above`` (on a Dask cluster, what its partition has spent); its record says which model
answered and counts every attempt's tokens and cost.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from brute_nb import confine
from brute_nb.agent import Agent
from brute_nb.cost import format_usd
from brute_nb.errors import CassetteMismatchError, ProviderError, remember_last
from brute_nb.map import schema as schemas
from brute_nb.map.cache import Record
from brute_nb.map.context import Select, read_tools
from brute_nb.map.limiter import THROTTLE_STATUSES, AdaptiveLimiter, retry_after, status_of
from brute_nb.map.spec import Job, MapSpec, digest
from brute_nb.message import Message, role_of
from brute_nb.structured import StructuredOutputError
from brute_nb.usage import Usage

MAX_THROTTLED = 100
"""Rate-limit answers one row takes before it gives up (each one already waited out its retry-after)."""
MAX_TRANSIENT = 2
TRANSIENT_STATUSES = (408, 409, 500, 502, 503, 504)
SCRATCH_IGNORE = ("*.brute", ".git", "__pycache__", ".ipynb_checkpoints")


@dataclass
class RowContext:
    """What every row of one run shares: the provider (one SDK client, one connection pool), tools, limiter."""

    spec: MapSpec
    provider: Any
    tools: list[Any]
    writes: bool
    limiter: AdaptiveLimiter
    escalations: list[tuple[str, Any]] = field(default_factory=list)
    """(name, provider) of each ``escalate`` model, in order; they share the limiter (one run's rate)."""
    spent: float = 0.0
    """USD the run's rows have cost so far (priced ones), for the escalation ceiling."""
    made: list[Any] = field(default_factory=list)
    """The providers this context built (not given): closed with the run (``aclose``)."""

    @classmethod
    def build(cls, spec: MapSpec, concurrency: int, provider: Any = None,
              escalations: list[Any] | None = None, select: Select | None = None) -> RowContext:
        """``escalations``: providers for ``spec.escalate`` given in this kernel (a cassette's); else built from
        the names, here or on a Dask worker, like the run's own provider. ``select`` reads ``tools=`` (the run's
        context's; on a worker, the default one's)."""
        from brute_nb.tools import READ_ONLY

        tools = (select or read_tools)(spec.tools)
        read_only = {t.name for t in READ_ONLY}
        given = escalations or [None] * len(spec.escalate)
        made: list[Any] = []

        def built(p: Any, row_spec: MapSpec) -> Any:
            if p is None:
                p = make_provider(row_spec)
                made.append(p)
            return p

        chosen = [(name, built(p, replace(spec, model=name, replay=None, record=None)))
                  for name, p in zip(spec.escalate, given, strict=True)]
        return cls(spec, built(provider, spec), tools, any(t.name not in read_only for t in tools),
                   AdaptiveLimiter(concurrency), chosen, made=made)

    async def aclose(self) -> None:
        """Close the clients of the providers this run built: they live on the kernel's loop, which never ends,
        so each run's kept-alive connections stayed open for the kernel's life."""
        for provider in self.made:
            await aclose_provider(provider)


async def aclose_provider(provider: Any) -> None:
    """Close a provider's SDK clients (``Provider.aclose``; a model call of another shape has none)."""
    close = getattr(provider, "aclose", None)
    if close is not None:
        await close()


def make_provider(spec: MapSpec) -> Any:
    """The provider, from this process's environment (on a Dask worker: the worker's keys). The SDK's own retries
    are off: a 429 must reach the limiter, which slows every row down, not just the one that got it."""
    from brute_nb.providers import auto

    return auto(spec.model, replay=spec.replay, record=spec.record, max_retries=0, timeout=spec.timeout)


def build_agent(ctx: RowContext, session: Path) -> Agent:
    spec = ctx.spec
    # "ask" is "deny" here: no one is there to answer
    return row_stack(ctx.provider, session, home=spec.home, system=spec.system, tools=ctx.tools,
                     max_iterations=spec.max_iterations, approve=dict(spec.approve) if ctx.tools else None)


def row_stack(model: Any, session: Path, *, home: Path, system: str | None, tools: list[Any], max_iterations: int,
              approve: dict[str, str] | None = None) -> Agent:
    """The core's ``default_stack`` for one prompt answered in its own session file (a map row, a compared turn).

    What a row leaves out: the final answer and doom-loop stop (a row's reply is whatever the loop ends with, as
    before), compaction (one prompt is far from any window), ``PartialReply`` (a failed call's text must not look
    like a finished reply when the row resumes from its file), ``RetryReply`` (the row retries through the run's
    limiter, which slows every row down) and ``TurnContext`` (there are no cells to send). The session is confined
    to ``home``, the notebook's folder, as every file of a run is."""
    from brute_nb.middleware.stack import default_stack

    return default_stack(model, session=session, session_root=home, system=system or None, approve=approve,
                         final_answer=False, max_iterations=max_iterations, doom_loop=False, compaction=False,
                         tools=tools, partial_reply=False, retry=False, turn_context=False)


def native_schema(provider: Any) -> bool:
    """Whether the provider sends a schema as its API's structured-output option (OpenAI, Anthropic, and the
    OpenAI-compatible servers); a plain callable or a library transport does not."""
    return bool(getattr(provider, "native_schema", False))


def finished(messages: list[Any]) -> bool:
    """A session that ends in a reply with no tool call still to run: the row was done (and paid for)."""
    if not messages or role_of(messages[-1]) != "assistant":
        return False
    return not getattr(messages[-1], "tool_calls", None)


async def run_row(ctx: RowContext, job: Job) -> Record:
    """The row's record: its turn on the run's model, then, while its reply fails the schema, on each ``escalate``
    model in turn (each in its own session), until one validates or the run's ceiling is reached. The record
    counts every attempt's tokens and cost, and names the model that answered."""
    record, schema_failed = await _attempt(ctx, job)
    _add_spent(ctx, record)
    first = str(getattr(ctx.provider, "label", None) or ctx.spec.model or "")
    if ctx.spec.escalate:
        record["model"] = first
    tried = [first]
    for name, provider in ctx.escalations:
        if not schema_failed:
            break
        if ctx.spec.ceiling is not None and ctx.spent >= ctx.spec.ceiling:
            record["error"] += (f" (not escalated to {name}: the run has spent {format_usd(ctx.spent)}, its "
                                f"confirm_above ceiling)")
            break
        attempt = Job(job.position, digest([job.key, name]), job.prompt)
        again, schema_failed = await _attempt(replace(ctx, provider=provider, escalations=[]), attempt)
        _add_spent(ctx, again)
        tried.append(name)
        again.update(key=job.key, model=name, escalated=tried[:-1],
                     input_tokens=record["input_tokens"] + again["input_tokens"],
                     output_tokens=record["output_tokens"] + again["output_tokens"],
                     cost=None if record["cost"] is None or again["cost"] is None else record["cost"] + again["cost"])
        if again["error"] is not None:
            again["error"] = f"{again['error']} (asked {', '.join(tried)} in turn)"
        record = again
    return record


def _add_spent(ctx: RowContext, record: Record) -> None:
    if isinstance(record.get("cost"), int | float):
        ctx.spent += float(record["cost"])


async def _attempt(ctx: RowContext, job: Job) -> tuple[Record, bool]:
    """One model's turn for the row: its record, and whether it failed only because the reply broke the schema."""
    from brute_nb.sessions.file import read_session

    schema_failed = False
    spec = ctx.spec
    session = spec.sessions / f"{job.key}.jsonl"
    record: Record = {"key": job.key, "reply": None, "fields": None, "error": None, "input_tokens": 0,
                      "output_tokens": 0, "cost": None, "session": session.name}
    try:
        history = await anyio.to_thread.run_sync(lambda: read_session(session, root=spec.home))
        if not finished(history):
            root = await _workspace(ctx, job)
            history = await _turn(ctx, job, session, root, history)
    except (ProviderError, StructuredOutputError) as exc:  # the session holds what was sent and received
        record["error"] = str(exc)
        schema_failed = isinstance(exc, StructuredOutputError)
        history = read_session(session, root=spec.home)
    except Exception as exc:  # the row's failure is its error column; the run goes on
        record["error"] = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, CassetteMismatchError):
            remember_last(exc)  # its message says %tb shows the diff, though no cell failed with it
        history = []
    _summarize(record, history)
    if record["error"] is None and spec.schema is not None:
        try:
            record["fields"] = schemas.parse(spec.schema, record["reply"] or "")
        except ValueError as exc:
            record["error"] = str(exc)
            schema_failed = True
    return record, schema_failed


async def _turn(ctx: RowContext, job: Job, session: Path, root: Path | None, history: list[Any]) -> list[Any]:
    from brute_nb.sessions.file import read_session

    agent = build_agent(ctx, session)
    schema = ctx.spec.schema
    native = schema is not None and native_schema(ctx.provider)
    # A provider with structured output gets the schema as its API's own option (the reply is constrained, then
    # validated); any other is asked in the prompt, and the reply validated the same way afterwards.
    prompt: str | None = job.prompt + (schemas.instruction(schema) if schema is not None and not native else "")
    extra: dict[str, Any] = {"schema": schema} if native else {}
    extra["map_row"] = job.position  # traced spans name the row (brute_nb.tracing)
    throttled = transient = 0
    while True:
        if history:
            prompt = None  # the session holds the prompt (and maybe more): continue the turn, do not ask again
        async with ctx.limiter.slot() as ticket:
            try:
                env = await agent.astart(prompt, root=str(root) if root else None, **extra)
            except ProviderError as exc:
                status = status_of(exc)
                if status in THROTTLE_STATUSES and throttled < MAX_THROTTLED:
                    throttled += 1
                    ctx.limiter.throttled(ticket, retry_after(exc))
                elif (status in TRANSIENT_STATUSES or status is None) and transient < MAX_TRANSIENT:
                    transient += 1
                else:
                    raise
            else:
                ctx.limiter.succeeded()
                return list(env["messages"])
        if transient and not throttled:
            await anyio.sleep(0.5 * transient)
        history = await anyio.to_thread.run_sync(lambda: read_session(session, root=ctx.spec.home))


async def _workspace(ctx: RowContext, job: Job) -> Path | None:
    """The folder the row's tools work in: the root itself when they only read, else the row's scratch copy."""
    root = Path(ctx.spec.root) if ctx.spec.root else None
    if not ctx.tools or not ctx.writes:
        return root
    scratch = ctx.spec.scratch / job.key
    # a scratch folder that links out of the notebook's folder would take the copy of the user's files, and the
    # row's writes, with it
    confine.confined(scratch, ctx.spec.home, what=f"the row's scratch folder {scratch}")
    if not scratch.exists() and root is not None:
        await anyio.to_thread.run_sync(lambda: shutil.copytree(
            root, scratch, ignore=shutil.ignore_patterns(*SCRATCH_IGNORE), symlinks=True))
    scratch.mkdir(parents=True, exist_ok=True)
    return scratch


def _summarize(record: Record, messages: list[Message]) -> None:
    """The reply (the last assistant message's text) and what the row's model calls used and cost, from its session.

    Tokens are ``Usage``'s (input includes cache reads and writes), the ones the cost is computed from.
    """
    replies = [m for m in messages if m.role == "assistant"]
    if replies and record["error"] is None:
        record["reply"] = replies[-1].content
    usage = Usage.total(replies) or Usage()
    record["input_tokens"], record["output_tokens"] = usage.input_tokens, usage.output_tokens
    costs = [price(m) for m in replies]
    known = [c for c in costs if c is not None]
    record["cost"] = sum(known) if known and len(known) == len(costs) else None


def price(message: Message) -> float | None:
    """The call's price in USD (``brute_nb.cost``); a replayed call cost nothing; None for a model the price table
    does not know (a local or fake model)."""
    return 0.0 if message.meta.get("replayed") else message.cost
