"""``Message.logprobs`` (issue 27 §5): the tokens and their log probabilities, where the API returns them (asked
for with the API's own options), read through the real SDKs from streamed and whole replies, kept in the file."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb import agent
from brute_nb.message import Message
from brute_nb.testing import FakeProvider
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio

TEXT = "The answer is forty-two."
ASK = {"openai_chat": {"logprobs": True, "top_logprobs": 2},
       "openai_responses": {"include": ["message.output_text.logprobs"], "top_logprobs": 2}}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", list(ASK))
async def test_logprobs_asked_for_are_kept_token_by_token(fake_provider: FakeProvider, kind: str,
                                                          stream: bool) -> None:
    fake_provider.add(TEXT)
    env = await agent().run(FACTORIES[kind](fake_provider, stream=stream, **ASK[kind])).astart("?")
    m = env["messages"][-1]
    assert "".join(t["token"] for t in m.logprobs) == TEXT
    assert all(t["logprob"] < 0 and len(t["top_logprobs"]) == 2 for t in m.logprobs)
    assert m.logprobs[0]["top_logprobs"][0]["token"] == m.logprobs[0]["token"]
    assert Message.from_json(m.to_json()).logprobs == m.logprobs


@pytest.mark.parametrize("kind", list(FACTORIES))
async def test_no_logprobs_unless_asked_and_none_from_anthropic(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(TEXT)
    env = await agent().run(FACTORIES[kind](fake_provider)).astart("?")
    m: Any = env["messages"][-1]
    assert m.content == TEXT and m.logprobs == () and "logprobs" not in m.meta
