"""Cost: each reply priced from its token counts with genai-prices, through the real SDKs and the fake server."""

from __future__ import annotations

from typing import Any

import genai_prices
import pytest

from brute_nb.cost import format_usd, price, total
from brute_nb.errors import BudgetError
from brute_nb.message import Message
from brute_nb.middleware.budget import Budget
from brute_nb.notebook.views.render import footer_text
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.usage import Usage

from .helpers import FACTORIES, KINDS, REAL_MODEL, tool_agent

pytestmark = pytest.mark.anyio


def table_price(provider: str, model: str, **usage: int) -> float:
    return float(genai_prices.calc_price(genai_prices.Usage(**usage), model, provider_id=provider).total_price)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_known_model_is_priced_from_its_tokens(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(reply("", call("read", {"file_path": "a"})), "done")
    model = REAL_MODEL[kind]
    env = await tool_agent(FACTORIES[kind](fake_provider, model=model)).astart("go")
    replies = [m for m in env["messages"] if m.role == "assistant"]
    provider = "anthropic" if kind == "anthropic" else "openai"
    for m in replies:
        expected = table_price(provider, model, input_tokens=m.meta["input_tokens"],
                               output_tokens=m.meta["output_tokens"])
        assert m.meta["cost"] == pytest.approx(expected) and m.cost == pytest.approx(expected)
        assert m.cost > 0
    assert total(env["messages"]) == pytest.approx(sum(m.cost for m in replies))


@pytest.mark.parametrize("kind", KINDS)
async def test_an_unknown_model_costs_none_not_a_guess(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add("hi")
    env = await tool_agent(FACTORIES[kind](fake_provider)).astart("go")
    last = env["messages"][-1]
    assert last.meta["input_tokens"] > 0
    assert last.meta["cost"] is None and last.cost is None
    assert total(env["messages"]) is None


async def test_cache_reads_are_priced_at_their_own_rate(fake_provider: FakeProvider) -> None:
    fake_provider.add(reply("cached", cached_tokens=2000))
    env = await tool_agent(FACTORIES["anthropic"](fake_provider, model=REAL_MODEL["anthropic"])).astart("go " * 4000)
    m = env["messages"][-1]
    # Anthropic's input_tokens leave the cache reads out; the transport adds them back as it reads the reply (the
    # meta holds Usage's convention), and the bill counts them at a tenth of the input rate.
    fresh = m.raw["usage"]["input_tokens"]
    assert m.meta["input_tokens"] == fresh + 2000 and m.meta["cache_read_tokens"] == 2000
    assert m.usage == Usage(input_tokens=fresh + 2000, output_tokens=m.meta["output_tokens"],
                            cache_read_tokens=2000, reasoning_tokens=None)  # no breakdown sent: unknown
    assert m.cost == pytest.approx(table_price("anthropic", REAL_MODEL["anthropic"], input_tokens=fresh + 2000,
                                               output_tokens=m.meta["output_tokens"], cache_read_tokens=2000))
    uncached = Message("assistant", "", meta={**m.meta, "input_tokens": fresh, "cache_read_tokens": 0, "cost": None})
    assert m.cost > price(uncached.meta)  # 2000 more billed tokens, but cheaper than 2000 uncached ones
    assert m.cost < price({**m.meta, "cache_read_tokens": 0})


def test_repricing_and_unknown_providers() -> None:
    meta = {"provider": "openai", "model": "gpt-4.1", "input_tokens": 1_000_000, "output_tokens": 0}
    assert price(meta) == pytest.approx(table_price("openai", "gpt-4.1", input_tokens=1_000_000))
    assert price(meta, model="gpt-4.1-mini") < price(meta)
    assert price({**meta, "provider": "ollama"}) is None  # a local server is never priced as OpenAI's model
    assert price({"provider": "openai", "model": "gpt-4.1"}) is None  # no token counts
    assert Message("user", "hi").cost is None


def test_the_footer_shows_a_known_cost_and_hides_an_unknown_one() -> None:
    assert "$0.0123" in footer_text({"model": "m", "input_tokens": 1, "output_tokens": 1, "cost": 0.0123})
    assert "$" not in footer_text({"model": "m", "input_tokens": 1, "output_tokens": 1, "cost": None})
    assert format_usd(12.5) == "$12.50"
    assert format_usd(0.00005) == "$0.00005" and format_usd(0.0000001) == "$0.0000001"  # never "$0.0000"


async def test_a_cost_budget_stops_the_turn_between_steps(fake_provider: FakeProvider) -> None:
    fake_provider.add(*(reply("", call("read", {"file_path": str(i)})) for i in range(5)), "done")
    provider = FACTORIES["openai_chat"](fake_provider, model="gpt-4.1")
    a = tool_agent(provider, (Budget, {"cost": 0.0000001}))
    env = await a.astart("go")
    assert env["should_exit"]["reason"] == "budget_exhausted"
    assert "cost budget is reached" in env["should_exit"]["message"]
    assert "of $0.0000001)" in env["should_exit"]["message"]  # a sub-cent ceiling as itself (issue 28 item 8)
    assert len(fake_provider.requests) == 1
    assert env["messages"][-1].role == "tool"


async def test_for_anthropic_a_token_budget_counts_the_tokens_the_price_counts(fake_provider: FakeProvider) -> None:
    """Anthropic reports cache reads apart from ``input_tokens``; the budget and the price both add them back."""
    fake_provider.add(reply("", call("read", {"file_path": "a"}), cached_tokens=5000), "done")
    provider = FACTORIES["anthropic"](fake_provider, model=REAL_MODEL["anthropic"])
    env = await tool_agent(provider, (Budget, {"tokens": 5000})).astart("go")
    first = env["messages"][1]
    raw = first.raw["usage"]
    assert raw["input_tokens"] + raw["output_tokens"] < 5000  # what the budget counted before
    assert len(fake_provider.requests) == 1  # stopped: the 5,000 cache-read tokens count
    assert f"({first.usage.tokens:,} of 5,000 tokens)" in env["should_exit"]["message"]
    assert first.usage.tokens == raw["input_tokens"] + 5000 + raw["output_tokens"]
    assert first.usage.tokens == first.meta["input_tokens"] + first.meta["output_tokens"]  # the meta holds it so
    assert first.cost == pytest.approx(table_price("anthropic", REAL_MODEL["anthropic"], **first.usage.to_dict()))


@pytest.mark.parametrize("kind", KINDS)
async def test_a_cost_budget_on_an_unpriced_model_is_refused_before_the_first_call(fake_provider: FakeProvider,
                                                                                  kind: str) -> None:
    """``Budget(model=...)`` knows the model it guards: one the price table cannot price is refused before a
    request is sent, not stopped after the first paid reply."""
    fake_provider.add(reply("", call("read", {"file_path": "a"})), "done")
    provider = FACTORIES[kind](fake_provider)
    with pytest.raises(BudgetError, match=f"the cost budget cannot be kept: '{provider.model}'.* has no price"):
        await tool_agent(provider, (Budget, {"cost": 5, "model": provider})).astart("go")
    assert fake_provider.received == 0


async def test_a_cost_budget_on_a_handler_it_cannot_name_stops_after_the_first_unpriced_reply(
        fake_provider: FakeProvider) -> None:
    """A handler that names no priced model in advance (a user's own function, a scripted model) is known only by
    its replies: the first one without a price stops the turn, as the ceiling can no longer be kept."""
    fake_provider.add(reply("", call("read", {"file_path": "a"})), "done")
    provider = FACTORIES["anthropic"](fake_provider)

    async def own(env: Any) -> None:
        await provider(env)

    env = await tool_agent(own, (Budget, {"cost": 5, "model": own})).astart("go")  # type: ignore[arg-type]
    assert "price of 'claude-fake' is not known" in env["should_exit"]["message"]
    assert len(fake_provider.requests) == 1


def test_frame_and_usage_have_cost_and_cache_columns() -> None:
    from brute_nb.frames import frame, log_from_frame
    from brute_nb.message import Log

    log = Log([Message("user", "q"), Message("assistant", "a", meta={
        "provider": "openai", "model": "gpt-4.1", "input_tokens": 10, "output_tokens": 2, "cached_tokens": 4,
        "cost": 0.5})])
    df = frame(log)
    assert df.loc[1, "cost"] == 0.5 and df.loc[1, "cached_tokens"] == 4 and df["cost"].isna().sum() == 1
    df.loc[1, "cost"] = 0.25
    assert log_from_frame(df)[1].meta["cost"] == 0.25


def test_a_model_without_a_price_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from genai_prices.data_snapshot import DataSnapshot

    from brute_nb import cost

    calls: list[str] = []
    real = DataSnapshot.find_provider_model

    def counting(self: Any, model: str, *args: Any) -> Any:
        calls.append(model)
        return real(self, model, *args)

    monkeypatch.setattr(DataSnapshot, "find_provider_model", counting)
    for tokens in range(1, 6):  # five replies of a local model, each with other usage
        assert cost.price({"provider": "openai", "model": "my-local-finetune-xyz", "input_tokens": tokens,
                           "output_tokens": 1}) is None
    assert calls == ["my-local-finetune-xyz"]
    monkeypatch.setattr(Usage, "of_meta", lambda meta: pytest.fail("an unpriced model's usage was read"))
    assert cost.price({"provider": "openai", "model": "my-local-finetune-xyz", "input_tokens": 9}) is None
    monkeypatch.undo()
    assert cost.price({"provider": "openai", "model": "gpt-4o", "input_tokens": 1000, "output_tokens": 10})


TIERED = [("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-haiku-4-5"), ("openai", "gpt-4.1"),
          ("openai", "gpt-4o-mini")]
"""Models with a price tier above 200k input tokens, with cache prices, and without either."""


@pytest.mark.parametrize(("provider", "model"), TIERED)
def test_a_price_is_genai_prices_own_to_the_last_digit(provider: str, model: str) -> None:
    """``cost`` prices a reply from a plan worked out once per model price, counts reported and tier; every price
    must still be the one ``genai_prices.calc_price`` gives, across tier edges and every shape of counts."""
    from datetime import UTC, datetime

    from brute_nb.cost import _price

    for when in (None, datetime(2025, 6, 1, tzinfo=UTC)):
        for given in (0, 1, 999, 199_999, 200_000, 200_001, 200_002, 1_234_567):
            for reads, writes, output in ((0, 0, 0), (0, 0, 7), (given // 2, 0, 3), (0, given // 3, 11),
                                          (given // 2, given // 4, 5000)):
                usage = Usage(given, output, reads, writes)
                expected = float(genai_prices.calc_price(genai_prices.Usage(**usage.to_dict()), model,
                                                         provider_id=provider, genai_request_timestamp=when)
                                 .total_price)
                assert _price(model, provider, usage, when) == expected, (usage, when)


def test_replies_of_one_shape_ask_genai_prices_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """genai-prices decomposes and validates a usage on every call (~0.3 ms, once a reply): after the first reply of
    a model and a shape of counts, the next ones are priced from the plan without it."""
    from genai_prices.types import ModelPrice

    calls: list[int] = []
    real = ModelPrice.calc_price

    def counting(self: Any, usage: Any) -> Any:
        calls.append(usage.input_tokens)
        return real(self, usage)

    monkeypatch.setattr(ModelPrice, "calc_price", counting)
    meta = {"provider": "anthropic", "model": "claude-sonnet-4-5", "cached_tokens": 2800, "cache_write_tokens": 27}
    first = price({**meta, "input_tokens": 5, "output_tokens": 9})
    asked = len(calls)
    later = [price({**meta, "input_tokens": 5 + n, "output_tokens": 9 + n}) for n in range(1, 10)]
    assert first is not None and all(p is not None and p > first for p in later)
    assert len(calls) == asked
