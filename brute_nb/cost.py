"""The price of a reply in US dollars, from its token counts and genai-prices' table.

The invariant: a price comes only from a model the table knows, served by a provider the table knows; an unknown
model, a provider we cannot name (a local OpenAI-compatible server) or a reply with no token counts is ``None``,
never a guess. Cache reads and writes are priced at their own rates.

Tokens are read as a ``Usage`` (``brute_nb.usage``: input includes cache reads and writes, whatever the
provider), the shape genai-prices reads, so a price and a token budget count the same tokens. genai-prices is
imported on first use, so ``import brute_nb`` stays light; this module imports only values below ``message``,
so ``Message.cost`` can use it without a cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from brute_nb.usage import Usage


def price_id(provider: object) -> str | None:
    """``meta["provider"]`` → genai-prices provider id, from its profile (``Profile.price_id``); a provider with
    none is never priced."""
    from brute_nb.providers import profiles

    profile = profiles.of(provider)
    return None if profile is None else profile.price_id


def price(meta: Mapping[str, Any], *, model: str | None = None, provider: str | None = None) -> float | None:
    """USD for one reply's ``meta``; ``model=``/``provider=`` reprice it as another model would have cost."""
    provider_id = price_id(provider or meta.get("provider"))
    name = model or meta.get("model")
    if provider_id is None or not isinstance(name, str) or not name or (name, provider_id) in _UNPRICED:
        return None  # the unpriced asked first: a local or test model, every reply
    usage = Usage.of_meta(meta)
    if usage is None:
        return None
    return _price(name, provider_id, usage, _when(meta.get("created_at")))


def price_usage(usage: Usage, model: str, provider: str) -> float | None:
    """USD for ``usage`` on ``provider``'s ``model`` at today's price (an estimate, before any reply exists);
    None where the table does not know the model or the provider."""
    provider_id = price_id(provider)
    return None if provider_id is None or not model else _price(model, provider_id, usage, None)


def unpriced(model: object) -> str | None:
    """How a message names ``model`` (a provider handler) when the price table has no price for it, so that no
    reply of it will have one (``'gpt-fake' (openai)``); None when it has one, or when the handler names no model
    and provider (a user's own function: only its replies will tell)."""
    name, provider = getattr(model, "model", None), getattr(model, "provider", None)
    if not isinstance(name, str) or not name or not isinstance(provider, str) or not provider:
        return None
    if price_usage(Usage(input_tokens=1, output_tokens=1), name, provider) is not None:
        return None
    return f"{name!r} ({provider})"


_UNPRICED: set[tuple[str, str]] = set()
"""Models genai-prices has no price for (a local model, a fine-tune): it searches its whole table before saying so,
and caches only hits, so each such model is looked up once a process, not once a reply."""

CACHE_COUNTS = ("cache_read_tokens", "cache_write_tokens")
"""The counts that are a part of ``input_tokens`` (``usage``'s convention, which genai-prices shares)."""

Plan = tuple[Any, tuple[str, ...], tuple[Decimal, ...]]
"""A model price, the counts a usage reports, and the price of one more of each (``_plan``)."""

_PLANS: dict[tuple[int, tuple[str, ...], int], Plan] = {}
"""Plans by (the model price's id, the counts reported, the price tier): a few a process. The plan holds its model
price, so the id cannot be reused for another while it is kept."""


def _price(model: str, provider_id: str, usage: Usage, when: datetime | None) -> float | None:
    """What ``genai_prices.calc_price`` says, to the last digit, at a fraction of its cost after the first reply.

    genai-prices decomposes a usage and validates its units on every call (~0.3 ms, once a reply). Within one
    model price, one set of reported counts and one price tier (tiers switch on the input tokens), that price
    is linear in the counts: the price of one more token of each is worked out once (``_plan``, from the same
    calls), and a reply is then priced as a dot product in ``Decimal``, exactly as genai-prices adds it up."""
    import genai_prices
    from genai_prices.data_snapshot import get_snapshot

    if (model, provider_id) in _UNPRICED:
        return None
    try:
        _, found = get_snapshot().find_provider_model(model, None, provider_id, None)
    except LookupError:
        _UNPRICED.add((model, provider_id))
        return None
    counts = usage.to_dict()
    prices = found.get_prices(when or datetime.now(tz=UTC))
    key = (id(prices), tuple(counts), _tier(prices, counts["input_tokens"]))
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not prices:
        total = prices.calc_price(genai_prices.Usage(**counts))["total_price"]
        plan = _plan(prices, counts, total)
        if plan is None:
            return float(total)
        if len(_PLANS) >= 64:  # a model price with variants is a new object each reply: keep the cache small
            _PLANS.clear()
        _PLANS[key] = plan
    return float(sum((Decimal(counts[name]) * rate for name, rate in zip(plan[1], plan[2], strict=True)),
                     Decimal(0)))


def _tier(prices: Any, input_tokens: int) -> int:
    """Which of the model price's tiers ``input_tokens`` falls in (genai-prices: a tier applies above its start)."""
    from genai_prices.types import TieredPrices

    starts = {tier.start for value in vars(prices).values() if isinstance(value, TieredPrices)
              for tier in value.tiers}
    return sum(input_tokens > start for start in starts)


def _plan(prices: Any, counts: dict[str, int], total: Decimal) -> Plan | None:
    """The price of one more of each count (a cache count with one more input token, which includes it), asked
    of genai-prices; None when that would cross a tier or the plan does not give back ``total`` exactly."""
    import genai_prices

    if _tier(prices, counts["input_tokens"] + 1) != _tier(prices, counts["input_tokens"]):
        return None
    rates: dict[str, Decimal] = {}
    for name in ("input_tokens", *(n for n in counts if n != "input_tokens")):
        more = {**counts, name: counts[name] + 1}
        if name in CACHE_COUNTS:
            more["input_tokens"] += 1
        rate = prices.calc_price(genai_prices.Usage(**more))["total_price"] - total
        rates[name] = rate - rates["input_tokens"] if name in CACHE_COUNTS else rate
    names = tuple(counts)
    plan = (prices, names, tuple(rates[n] for n in names))
    if sum((Decimal(counts[n]) * r for n, r in zip(names, plan[2], strict=True)), Decimal(0)) != total:
        return None
    return plan


def _when(stamp: object) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def total(messages: Iterable[Any]) -> float | None:
    """The summed cost of the assistant messages; None when none of them could be priced.

    A mix of priced and unpriced replies sums the priced ones (the frame and the footer say which are missing).
    """
    costs = [message_cost(m) for m in messages if m.role == "assistant"]
    known = [c for c in costs if c is not None]
    return sum(known) if known else None


def message_cost(message: Any) -> float | None:
    """A message's recorded ``meta["cost"]``, else its price from the table now."""
    meta: Mapping[str, Any] = message.meta
    if "cost" in meta:
        value = meta["cost"]
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return price(meta)


def model_info(meta: Mapping[str, Any], model: str | None = None) -> dict[str, Any] | None:
    """What genai-prices knows of the reply's model (RubyLLM's ``Message#model_info``): its id, name, provider,
    context window, description and whether it is deprecated; None for a model or provider it does not know."""
    provider_id = price_id(meta.get("provider"))
    name = model or meta.get("model")
    if provider_id is None or not isinstance(name, str) or not name:
        return None
    from genai_prices.data_snapshot import get_snapshot

    try:
        provider, found = get_snapshot().find_provider_model(name, None, provider_id, None)
    except LookupError:
        return None
    return {"id": found.id, "name": found.name, "provider": provider.id, "context_window": found.context_window,
            "description": found.description, "deprecated": bool(found.deprecated)}


def format_usd(value: float | None) -> str:
    """``$0.0123``: four decimals below a dollar (agent steps cost fractions of a cent), two above, and as many as
    a smaller amount needs (``$0.00005``, never ``$0.0000`` for a ceiling or a price that is not nothing)."""
    if value is None:
        return "cost unknown"
    if 0 < abs(value) < 0.0001:
        return f"${value:.8f}".rstrip("0")
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"
