"""What RubyLLM's Message answers beyond the basics (issue 27 §7): ``model``, ``tokens``, ``raw``, ``model_info``,
the cost at another model's price; the library transports refuse an image instead of dropping it; a seed-style
message with only ``to_h`` is saved by the session log."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from brute_nb import agent
from brute_nb.attachments import from_bytes
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog
from brute_nb.testing import FakeProvider, Reply
from brute_nb.usage import Usage
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio

PNG = from_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16, name="plot.png")


@pytest.mark.parametrize("kind", list(FACTORIES))
async def test_model_tokens_and_raw_are_what_the_api_sent(fake_provider: FakeProvider, kind: str,
                                                          tmp_path: Path) -> None:
    fake_provider.add(Reply(text="Hello.", cached_tokens=3))
    provider = FACTORIES[kind](fake_provider)
    env = await agent().use(SessionLog, path=tmp_path / "s.jsonl").run(provider).astart("hi")
    m = env["messages"][-1]
    assert m.model == fake_provider.requests[0]["json"]["model"]
    assert isinstance(m.tokens, Usage) and m.tokens == m.usage
    assert m.tokens.output_tokens == m.meta["output_tokens"] and m.tokens.cache_read_tokens == 3
    assert m.tokens.input_tokens >= m.meta["input_tokens"] > 0
    assert m.raw["id"] == m.meta["response_id"]
    assert m.raw.get("content") or m.raw.get("choices") or m.raw.get("output")
    reread = Message.from_json((tmp_path / "s.jsonl").read_text().splitlines()[-1])
    assert "raw" not in reread.to_json()  # the reply itself is never written


def test_model_info_and_the_cost_at_another_models_price() -> None:
    m = Message(Role.ASSISTANT, "x", meta={"provider": "anthropic", "model": "claude-sonnet-4-5",
                                           "input_tokens": 1_000_000, "output_tokens": 0})
    info = m.model_info
    assert info is not None and info["provider"] == "anthropic" and info["context_window"] == 200_000
    assert m.cost is not None and m.cost_at("claude-opus-4-1") is not None
    assert m.cost_at("claude-opus-4-1") > m.cost  # opus costs more per input token
    assert m.cost_at("no-such-model") is None
    assert Message(Role.ASSISTANT, "x", meta={"provider": "ollama", "model": "llama3"}).model_info is None


@pytest.mark.parametrize("name", ["LLM", "PydanticAI"])
def test_library_transports_refuse_an_image_instead_of_dropping_it(name: str) -> None:
    from brute_nb import transports

    transport: Any = getattr(transports, name)
    with pytest.raises(TypeError, match=re.escape("attachments (plot.png)")):
        transport.dump_all([Message(Role.USER, "what is in it?", attachments=[PNG])])


class Seed:
    """A message as the seed's duck typing has it: role, content, tool_calls, tool_call_id and to_h only."""

    def __init__(self, role: str, content: str) -> None:
        self.role, self.content, self.tool_calls, self.tool_call_id = role, content, None, None

    def to_h(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content}


def test_a_seed_style_message_with_only_to_h_is_saved(tmp_path: Path) -> None:
    async def model(env: dict[str, Any]) -> None:
        env["messages"].append(Seed("assistant", "hi back"))

    a = agent().use(SessionLog, path=tmp_path / "s.jsonl").run(model)
    anyio.run(a.astart, Seed("user", "hi"))
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert [Message.from_json(line).content for line in lines] == ["hi", "hi back"]
