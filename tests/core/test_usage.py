"""Usage: one token convention (genai-prices') whatever the provider reported, added up the same way everywhere."""

from __future__ import annotations

import pytest

import brute_nb
from brute_nb import Message, Usage

ANTHROPIC = {"provider": "anthropic", "model": "claude-sonnet-4-20250514", "input_tokens": 3, "output_tokens": 100,
             "cached_tokens": 9_000, "cache_write_tokens": 400}
OPENAI = {"provider": "openai", "model": "gpt-4.1", "input_tokens": 9_003, "output_tokens": 100, "cached_tokens": 9_000}


def test_input_counts_cache_reads_and_writes_whoever_reported_it() -> None:
    # Anthropic's input_tokens leave both out; OpenAI's already hold the cached part.
    # Neither said how much of the output was reasoning: unknown (None), not zero.
    assert Usage.of_meta(ANTHROPIC) == Usage(9_403, 100, cache_read_tokens=9_000, cache_write_tokens=400,
                                             reasoning_tokens=None)
    assert Usage.of_meta(OPENAI) == Usage(9_003, 100, cache_read_tokens=9_000, reasoning_tokens=None)
    assert Usage.of_meta(ANTHROPIC).tokens == 9_503  # type: ignore[union-attr]
    assert Usage.of_meta({"provider": "anthropic", "output_tokens": 7}) == Usage(0, 7, reasoning_tokens=None)
    assert Usage.of_meta({**OPENAI, "reasoning_tokens": 60}) == Usage(9_003, 100, 9_000, reasoning_tokens=60)


@pytest.mark.parametrize("meta", [{}, {"model": "m"}, {"input_tokens": "12"}, {"input_tokens": True},
                                  {"input_tokens": -1, "output_tokens": None}])
def test_no_counts_or_damaged_counts_are_not_reported(meta: dict[str, object]) -> None:
    assert Usage.of_meta(meta) is None
    assert Message("assistant", "hi", meta=meta).usage is None


def test_replies_add_up_and_the_shape_is_the_price_tables() -> None:
    log = brute_nb.log()
    log.user("hi")
    log.assistant("a", **ANTHROPIC)
    log.tool("r", tool_call_id="x")
    log.assistant("b", **OPENAI)
    log.assistant("c")  # a reply with no counts adds nothing
    total = Usage.total(log)
    assert total == Usage(18_406, 200, 18_000, 400, reasoning_tokens=None)
    assert total is not None and total.to_dict() == {"input_tokens": 18_406, "output_tokens": 200,
                                                     "cache_read_tokens": 18_000, "cache_write_tokens": 400}
    assert Usage(1, 2).to_dict() == {"input_tokens": 1, "output_tokens": 2}  # cache keys only when there are some
    assert Usage.total([Message("user", "hi")]) is None
    genai_prices = pytest.importorskip("genai_prices")
    assert genai_prices.Usage(**total.to_dict()).input_tokens == 18_406  # what the price table reads, unwarned
