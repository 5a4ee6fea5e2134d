"""``Message.tokens`` holds the reasoning (thinking) tokens where the API reports them (issue 27, RubyLLM's
readers): OpenAI's ``completion_tokens_details.reasoning_tokens`` and ``output_tokens_details.reasoning_tokens``,
Anthropic's ``output_tokens_details.thinking_tokens``, read through the real SDKs, streamed and whole. A reply whose
API left the count out says None (unknown), never 0, and a total over it is unknown too."""

from __future__ import annotations

import pytest

from brute_nb import Usage, agent
from brute_nb.message import Message
from brute_nb.testing import FakeProvider
from brute_nb.testing.script import Reply
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", list(FACTORIES))
async def test_reasoning_tokens_reported_are_kept_as_part_of_the_output(fake_provider: FakeProvider, kind: str,
                                                                        stream: bool) -> None:
    fake_provider.add(Reply(text="42.", thinking="Six times seven.", reasoning_tokens=37))
    env = await agent().run(FACTORIES[kind](fake_provider, stream=stream)).astart("?")
    m = env["messages"][-1]
    assert m.tokens is not None and m.tokens.reasoning_tokens == 37
    assert m.tokens.output_tokens > 37  # a part of the output, never added on top of it
    assert m.tokens.tokens == m.tokens.input_tokens + m.tokens.output_tokens
    assert Message.from_json(m.to_json()).tokens == m.tokens  # kept in the session line


@pytest.mark.parametrize("kind", list(FACTORIES))
async def test_a_count_not_reported_is_unknown_not_zero(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add("plain")
    env = await agent().run(FACTORIES[kind](fake_provider)).astart("?")
    tokens = env["messages"][-1].tokens
    assert tokens is not None
    # OpenAI's APIs always break the output down (0 for a model that did not reason); Anthropic sends the
    # breakdown only when it has one, so its absence is "not said".
    assert tokens.reasoning_tokens == (None if kind == "anthropic" else 0)


def test_a_total_with_an_unknown_part_is_unknown() -> None:
    said, unsaid = Usage(10, 5, reasoning_tokens=3), Usage(10, 5, reasoning_tokens=None)
    assert (said + said).reasoning_tokens == 6 and (Usage() + said).reasoning_tokens == 3
    assert (said + unsaid).reasoning_tokens is None and (unsaid + said).reasoning_tokens is None
    assert (said + unsaid).output_tokens == 10
    assert "reasoning_tokens" not in said.to_dict()  # the price table bills it as the output it is part of


@pytest.mark.parametrize("meta", [{"output_tokens": 5, "reasoning_tokens": 9}, {"output_tokens": 5,
                                                                                "reasoning_tokens": "3"},
                                  {"output_tokens": 5, "reasoning_tokens": -1}, {"output_tokens": 5}])
def test_a_damaged_or_missing_reasoning_count_reads_as_unknown(meta: dict[str, object]) -> None:
    assert Message("assistant", "x", meta=meta).tokens == Usage(0, 5, reasoning_tokens=None)
