"""What a map would cost, worked out before anything is sent: the ``Estimate`` and how it is made from the jobs.

``brute_nb.estimate(template, df, ...)`` (``map.forecast``) and ``map(confirm_above=...)`` both come here.

No model is called. The rows a re-run would answer from the cache are free and counted apart; each row still to
send has its first request built exactly as its turn would build it (``batch.request``: the same system prompt,
schema and tools) and its input tokens counted (``providers.token_count``: the provider's token-count endpoint,
else tiktoken, else four characters a token, and the estimate says which). Output tokens cannot be counted before
the model writes them, so they are a range whose top, the ceiling ``confirm_above`` compares, is what bounds a reply:
``max_tokens`` a row, else the model's context window (genai-prices') less each prompt, since a reply can never be
longer. Rows of this run already answered only tighten the estimate (its low end, and ``likely``: the cost if every
row writes as they did); they never lower the ceiling, since three short replies say nothing certain of the next
thousand. The price comes from the same table as every other cost in brute_nb (``cost.price_usage``), per request
(prices can step up with a request's length), at the standard rate, at the batch discount and with the prompt
cache reading the prefix every row shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from brute_nb.cost import format_usd, price_usage
from brute_nb.map.batch import BATCH_DISCOUNT, request
from brute_nb.map.cache import Record, read_records
from brute_nb.map.context import Select, read_tools
from brute_nb.map.spec import Job, MapSpec
from brute_nb.providers.token_count import ESTIMATE, TokenCount, count_request, count_text
from brute_nb.usage import Usage

CACHE_MINIMUM = 1024
"""The shortest prefix either API caches (Anthropic's Sonnet and Opus, OpenAI): a shorter shared one saves nothing."""
COUNT_CONCURRENCY = 8
"""Token-count requests in flight at once (the endpoint is free but rate limited like any other)."""

Range = tuple[float, float | None]
"""Low and high; high is None when nothing bounds it (no ``max_tokens`` and no context window known)."""


@dataclass(frozen=True)
class Estimate:
    """What a map run would send and cost; ``print`` it, or read the fields."""

    model: str
    rows: int
    cached: int
    """Rows the run's cache already answers (free)."""
    requests: int
    """Prompts still to send (rows with the same prompt share one)."""
    input_tokens: int
    method: str
    """How ``input_tokens`` were counted: the provider's count_tokens endpoint, tiktoken, or an estimate."""
    output_tokens: tuple[int, int | None]
    output_basis: str
    cost: Range | None
    """USD at the standard price; None when the price table does not know the model."""
    batch_cost: Range | None
    """With ``batch=True`` (half the price)."""
    cached_cost: Range | None
    """With the prompt cache reading the shared prefix on every request but the first."""
    shared_prefix: int
    """Tokens every request starts with (system prompt, tools, the template's opening text)."""
    note: str = ""
    likely: Range | None = None
    """USD at the standard price if every row writes as the rows of this run already answered did (None: no row
    answered yet, or the model is not priced); a guess to plan by, never the ceiling."""

    @property
    def exact(self) -> bool:
        """Whether the input tokens were counted (endpoint or tokenizer), not estimated."""
        return self.method != ESTIMATE

    @property
    def high(self) -> float | None:
        """The most the run could cost at the standard price (what ``confirm_above`` compares); None: unknown."""
        return None if self.cost is None else self.cost[1]

    def __repr__(self) -> str:
        lines = [f"map estimate for {self.model} (nothing was sent to the model)",
                 f"rows: {self.rows:,} ({self.cached:,} cached, {self.requests:,} requests to send)",
                 f"input tokens: {self.input_tokens:,} ({'exact' if self.exact else 'estimated'}: {self.method})",
                 f"output tokens: {_span(self.output_tokens, '{:,}')} ({self.output_basis})",
                 f"cost: {_money(self.cost)}"]
        if self.likely is not None:
            lines.append(f"  likely, if every row writes as the rows answered did: {_money(self.likely)}")
        lines.append(f"  as a batch (batch=True): {_money(self.batch_cost)}")
        if self.cached_cost is not None and self.shared_prefix >= CACHE_MINIMUM and self.requests > 1:
            lines.append(f"  with prompt caching ({self.shared_prefix:,} shared tokens): {_money(self.cached_cost)}")
        else:
            lines.append(f"  prompt caching saves nothing here (the shared prefix, {self.shared_prefix:,} tokens, is "
                         f"under the {CACHE_MINIMUM:,} the APIs cache)" if self.requests > 1 else
                         "  prompt caching saves nothing for a single request")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _span(values: tuple[Any, Any], fmt: str) -> str:
    low, high = values
    if high is None:
        return f"at least {fmt.format(low)} (no upper bound)"
    return fmt.format(low) if low == high else f"{fmt.format(low)} to {fmt.format(high)}"


def _money(value: Range | None) -> str:
    if value is None:
        return "unknown (the price table does not know this model)"
    low, high = value
    if high is None:
        return f"at least {format_usd(low)} (no upper bound: pass max_tokens=)"
    return format_usd(low) if low == high else f"{format_usd(low)} to {format_usd(high)}"


def cached_records(spec: MapSpec) -> dict[str, Record]:
    """The run's cached rows, read without taking its lock (an estimate writes nothing)."""
    path = Path(spec.folder + ".jsonl")
    return read_records(path, root=spec.home) if path.exists() else {}


async def estimate_jobs(spec: MapSpec, provider: Any, jobs: list[Job], *, rows: int, cached: int,
                        records: dict[str, Record], max_tokens: int | None = None,
                        select: Select = read_tools) -> Estimate:
    """The estimate for ``jobs`` (the rows still to send) on ``provider``."""
    tools = _tools(spec, select)
    counts = await _count_all(spec, provider, jobs, tools)
    input_tokens = sum(c.tokens for c in counts)
    method = next((c.method for c in counts if c.method == ESTIMATE), counts[0].method if counts else ESTIMATE)
    note = next((c.note for c in counts if c.note), "")
    if tools:  # a row with tools makes a model call per step; only its first request can be counted beforehand
        note = "; ".join(filter(None, [note, "with tools each row makes one model call per step, and each later "
                                             "call reads more; this counts the first call of each row"]))
    n = len(jobs)
    kind, model = _priced_as(spec, provider)
    bound = max_tokens if max_tokens is not None else reply_bound(provider)
    outputs, basis = _ceiling(n, input_tokens, bound, None if bound else context_window(kind, model))
    answered = _answered(records)
    likely = None
    if answered and n:
        low, high = min(answered), max(answered)
        outputs = (min(low * n, outputs[1]) if outputs[1] is not None else low * n, outputs[1])
        each = f"{low:,}" if low == high else f"{low:,} to {high:,}"
        basis += f"; the {len(answered)} rows of this run already answered wrote {each} tokens a row"
        likely = _cost(kind, model, n, input_tokens, (low * n, high * n))
    prefix = _shared_prefix(spec, jobs, tools)
    cost = _cost(kind, model, n, input_tokens, outputs)
    cached_cost = _cost(kind, model, n, input_tokens, outputs, prefix=prefix)
    batch = None if cost is None else (cost[0] * BATCH_DISCOUNT,
                                       None if cost[1] is None else cost[1] * BATCH_DISCOUNT)
    return Estimate(model=f"{kind}:{model}" if kind else model, rows=rows, cached=cached, requests=n,
                    input_tokens=input_tokens, method=method, output_tokens=outputs, output_basis=basis, cost=cost,
                    batch_cost=batch, cached_cost=cached_cost, shared_prefix=prefix, note=note, likely=likely)


BOUNDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
"""The options that bound a reply's length: Anthropic's (and Chat's old one), Chat's, Responses'."""


def reply_bound(provider: Any) -> int | None:
    """The most tokens a reply may have: the provider's ``max_tokens``, or the bound given as a provider option
    (``-o max_completion_tokens=500``); None when nothing bounds it (OpenAI's default)."""
    params = getattr(provider, "params", None) or {}
    found = [getattr(provider, "max_tokens", None), *(params.get(k) for k in BOUNDS)]
    return next((v for v in found if isinstance(v, int) and not isinstance(v, bool) and v > 0), None)


def _tools(spec: MapSpec, select: Select) -> list[Any]:
    """The row's tools as the tool pipeline advertises them (adapters: their schemas are what a request carries)."""
    from brute_nb.tools import wrap_all

    return list(wrap_all(select(spec.tools)).values()) if spec.tools != "none" else []


async def _count_all(spec: MapSpec, provider: Any, jobs: list[Job], tools: list[Any]) -> list[TokenCount]:
    # A cassette is one connection's traffic in order: counts recorded or replayed go one at a time.
    taped = bool(getattr(provider, "replay", None) or getattr(provider, "record", None))
    limiter = anyio.CapacityLimiter(1 if taped else COUNT_CONCURRENCY)
    counts: list[TokenCount | None] = [None] * len(jobs)

    async def one(i: int, job: Job) -> None:
        async with limiter:
            if hasattr(provider, "request"):
                counts[i] = await count_request(provider, request(spec, provider, job, tools))
            else:  # a plain callable or a library provider: no request to build, so the prompt's text is counted
                tokens, method = count_text("\n".join(filter(None, [spec.system, job.prompt])))
                counts[i] = TokenCount(tokens, method)

    async with anyio.create_task_group() as group:
        for i, job in enumerate(jobs):
            group.start_soon(one, i, job)
    return [c for c in counts if c is not None]


def context_window(kind: str, model: str) -> int | None:
    """The model's context window as genai-prices knows it (None when it does not): input and output share it, so
    no reply is longer than the window less its prompt. The SDKs keep no table of output limits (Anthropic's
    ``max_tokens`` is always set; OpenAI's model objects carry none), so this is the bound that is really known."""
    from brute_nb.cost import model_info

    window = (model_info({"provider": kind, "model": model}) or {}).get("context_window")
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None


def _answered(records: dict[str, Record]) -> list[int]:
    """The output tokens of each row of this run already answered (an error or an empty reply says nothing)."""
    return [r["output_tokens"] for r in records.values()
            if r.get("error") is None and isinstance(r.get("output_tokens"), int) and r["output_tokens"] > 0]


def _ceiling(n: int, input_tokens: int, max_tokens: int | None, window: int | None
             ) -> tuple[tuple[int, int | None], str]:
    """The output range of ``n`` requests before any answer: 0 up to what bounds a reply (None: nothing does)."""
    if isinstance(max_tokens, int) and max_tokens > 0:
        return (0, max_tokens * n), f"up to max_tokens={max_tokens:,} a row"
    if window is not None:
        return (0, max(window * n - input_tokens, 0)), (
            f"no max_tokens, so up to the model's context window ({window:,} tokens) less the prompt, a row; pass "
            "max_tokens= for a lower ceiling")
    return (0, None), "no max_tokens to bound a reply and no context window known for the model; pass max_tokens="


def _shared_prefix(spec: MapSpec, jobs: list[Job], tools: list[Any]) -> int:
    """Tokens every request starts with: the system prompt, the tools' schemas and the prompts' common opening."""
    from brute_nb.message import dumps
    from brute_nb.providers.base import tool_specs

    prompts = [job.prompt for job in jobs]
    opening = _common_start(prompts) if len(prompts) > 1 else ""
    text = "\n".join(filter(None, [dumps(tool_specs(tools)) if tools else "", spec.system or "", opening]))
    return count_text(text)[0] if text else 0


def _common_start(texts: list[str]) -> str:
    first, last = min(texts), max(texts)  # the common start of all is the common start of these two
    n = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))
    return first[:n]


def _priced_as(spec: MapSpec, provider: Any) -> tuple[str, str]:
    """(provider, model) as the price table names them."""
    label = str(getattr(provider, "label", None) or spec.model or "")
    kind, _, model = label.partition(":")
    kind = str(getattr(provider, "provider", None) or kind)
    return kind, str(getattr(provider, "model", None) or model or label)


def _cost(kind: str, model: str, n: int, input_tokens: int, outputs: tuple[int, int | None],
          prefix: int = 0) -> Range | None:
    """USD for ``n`` requests priced one at a time at their mean size (the low and high ends of the output)."""
    if n == 0:
        return (0.0, 0.0)
    each_in = input_tokens // n
    reads = prefix if prefix >= CACHE_MINIMUM and n > 1 else 0

    def total(output: int | None) -> float | None:
        if output is None:
            return None
        first = price_usage(Usage(each_in, output // n, 0, reads), model, kind)
        rest = price_usage(Usage(each_in, output // n, reads, 0), model, kind)
        if first is None or rest is None:
            return None
        return first + rest * (n - 1)

    low = total(outputs[0])
    if low is None:
        return None
    return (low, total(outputs[1]))
