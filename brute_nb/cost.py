"""The price of a reply in US dollars, from its token counts and genai-prices' table.

The invariant: a price comes only from a model the table knows, served by a provider the table knows; an unknown
model, a provider we cannot name (a local OpenAI-compatible server) or a reply with no token counts is ``None``,
never a guess. Cache reads and writes are priced at their own rates.

Token conventions differ: OpenAI's ``input_tokens`` already include the cached ones, Anthropic's exclude both
cache reads and writes. ``billed_usage`` turns a message's ``meta`` into genai-prices' convention (total input).
genai-prices is imported on first use, so ``import brute_nb`` stays light; this module imports nothing of ours,
so ``Message.cost`` can use it without a cycle.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

PROVIDER_IDS: dict[str, str] = {"openai": "openai", "anthropic": "anthropic"}
"""``meta["provider"]`` → genai-prices provider id; a provider missing here is never priced."""

INPUT_EXCLUDES_CACHE = frozenset({"anthropic"})
"""Providers whose reported ``input_tokens`` leave out cache reads and writes."""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def billed_usage(meta: Mapping[str, Any]) -> dict[str, int] | None:
    """Token counts as genai-prices reads them (input includes the cached part), or None without counts."""
    if not isinstance(meta.get("input_tokens"), int) and not isinstance(meta.get("output_tokens"), int):
        return None
    reads, writes = _int(meta.get("cached_tokens")), _int(meta.get("cache_write_tokens"))
    total = _int(meta.get("input_tokens"))
    if meta.get("provider") in INPUT_EXCLUDES_CACHE:
        total += reads + writes
    usage = {"input_tokens": total, "output_tokens": _int(meta.get("output_tokens"))}
    if reads:
        usage["cache_read_tokens"] = reads
    if writes:
        usage["cache_write_tokens"] = writes
    return usage


def price(meta: Mapping[str, Any], *, model: str | None = None, provider: str | None = None) -> float | None:
    """USD for one reply's ``meta``; ``model=``/``provider=`` reprice it as another model would have cost."""
    usage = billed_usage(meta)
    provider_id = PROVIDER_IDS.get(str(provider or meta.get("provider") or ""))
    name = model or meta.get("model")
    if usage is None or provider_id is None or not isinstance(name, str) or not name:
        return None
    return _price(name, provider_id, tuple(sorted(usage.items())), _when(meta.get("created_at")))


_UNPRICED: set[tuple[str, str]] = set()
"""Models genai-prices has no price for (a local model, a fine-tune): it searches its whole table before saying so,
and caches only hits, so each such model is looked up once a process, not once a reply."""


@functools.lru_cache(maxsize=4096)
def _price(model: str, provider_id: str, usage: tuple[tuple[str, int], ...], when: datetime | None) -> float | None:
    from genai_prices import Usage, calc_price

    if (model, provider_id) in _UNPRICED:
        return None
    try:
        result = calc_price(Usage(**dict(usage)), model, provider_id=provider_id, genai_request_timestamp=when)
    except LookupError:
        _UNPRICED.add((model, provider_id))
        return None
    return float(result.total_price)


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
    costs = [message_cost(m) for m in messages if str(getattr(m, "role", "")).lower() == "assistant"]
    known = [c for c in costs if c is not None]
    return sum(known) if known else None


def message_cost(message: Any) -> float | None:
    """A message's recorded ``meta["cost"]``, else its price from the table now."""
    meta = getattr(message, "meta", None) or {}
    if "cost" in meta:
        value = meta["cost"]
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return price(meta)


def format_usd(value: float | None) -> str:
    """``$0.0123``: four decimals below a dollar (agent steps cost fractions of a cent), two above, and as many as
    a smaller amount needs (``$0.00005``, never ``$0.0000`` for a ceiling or a price that is not nothing)."""
    if value is None:
        return "cost unknown"
    if 0 < abs(value) < 0.0001:
        return f"${value:.8f}".rstrip("0")
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"
