"""Each provider's reply is sent back block by block (issue 27 §1): after a reply holding a server tool's blocks,
interleaved text or reasoning items, the next request carries them as the API sent them, in order, ids and
encrypted fields included, through the real SDKs, streamed or not, and after a session file round trip."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb import agent
from brute_nb.agent import Agent
from brute_nb.message import Message, Role, ToolCall
from brute_nb.middleware import SessionLog
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.providers.base import Provider
from brute_nb.testing import FakeProvider, Reply
from brute_nb.transports.anthropic import Anthropic
from brute_nb.transports.blocks import anthropic_says, clean
from brute_nb.transports.openai_responses import ResponsesItems
from tests.providers.helpers import FACTORIES, SHELL, Echo, RunTools
from tests.transports.recorded_blocks import ANTHROPIC, RESPONSES

pytestmark = pytest.mark.anyio


def sent_back(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [clean(b) for b in blocks]


def session_agent(provider: Provider, path: Any) -> Agent:
    """Two turns of one conversation, through its session file (what the second request holds was read back)."""
    return (agent().use(SessionLog, path=path).use(ToolResultLoop).use(RunTools, tools=[Echo(), SHELL])
            .run(provider))


@pytest.mark.parametrize("name", ANTHROPIC)
def test_anthropic_fixtures_have_the_sdks_shapes(name: str) -> None:
    import anthropic.types
    import pydantic

    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": ANTHROPIC[name],
             "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    parsed = anthropic.types.Message.model_validate(reply)
    assert [b.type for b in parsed.content] == [b["type"] for b in ANTHROPIC[name]]
    turn = {"role": "assistant", "content": sent_back(ANTHROPIC[name])}
    pydantic.TypeAdapter(anthropic.types.MessageParam).validate_python(turn)  # a request may carry them


@pytest.mark.parametrize("name", RESPONSES)
def test_responses_fixtures_have_the_sdks_shapes(name: str) -> None:
    import openai.types.responses as types
    import pydantic

    for item in RESPONSES[name]:
        parsed = pydantic.TypeAdapter(types.ResponseOutputItem).validate_python(item)
        assert parsed.type == item["type"]
        pydantic.TypeAdapter(types.ResponseInputItemParam).validate_python(item)


async def two_turns(fake: FakeProvider, kind: str, blocks: list[dict[str, Any]], stream: bool,
                    path: Any) -> tuple[Message, dict[str, Any]]:
    """A turn answered with ``blocks``, then a second turn of the same session (read back from its file): the
    reply, and the second turn's last request."""
    fake.add(Reply(blocks=tuple(blocks)), "after the tools", "and more")
    env = await session_agent(FACTORIES[kind](fake, stream=stream), path).astart("go")
    await session_agent(FACTORIES[kind](fake, stream=stream), path).astart("more")
    reply = next(m for m in env["messages"] if m.role is Role.ASSISTANT)
    return reply, fake.requests[-1]["json"]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("name", ANTHROPIC)
async def test_anthropic_blocks_go_back_as_received(fake_provider: FakeProvider, name: str, stream: bool,
                                                    tmp_path: Any) -> None:
    blocks = ANTHROPIC[name]
    reply, later = await two_turns(fake_provider, "anthropic", blocks, stream, tmp_path / "s.jsonl")
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    assert reply.content.replace("\n\n", "") == "".join(texts)  # every text, in order (the rule: below)
    assert reply.content == anthropic_says(blocks)[0]  # what the kept blocks say: so they go back as received
    turn = next(t for t in later["messages"] if t["role"] == "assistant")
    assert turn["content"] == sent_back(blocks)
    assert Anthropic.dump(Message.from_json(reply.to_json()))["content"] == sent_back(blocks)  # the file keeps them


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("name", RESPONSES)
async def test_responses_items_go_back_as_received(fake_provider: FakeProvider, name: str, stream: bool,
                                                  tmp_path: Any) -> None:
    items = RESPONSES[name]
    reply, later = await two_turns(fake_provider, "openai_responses", items, stream, tmp_path / "s.jsonl")
    sent = later["input"]
    start = next(i for i, item in enumerate(sent) if item.get("id") == items[0]["id"])
    assert sent[start:start + len(items)] == sent_back(items)
    assert ResponsesItems.dump(Message.from_json(reply.to_json())) == sent_back(items)


def test_a_plain_reply_keeps_no_blocks() -> None:
    """Text with its calls is rebuilt from the message: nothing is stored twice in the session file."""
    m = Anthropic.wrap_one({"role": "assistant", "content": [
        {"type": "text", "text": "Reading.", "citations": None},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"file_path": "a"}, "caller": None}]})
    assert "blocks" not in m.meta
    r = ResponsesItems.wrap_one({"output": [{"type": "message", "id": "msg_1", "role": "assistant", "content": [
        {"type": "output_text", "text": "Hi.", "annotations": []}]}]})
    assert "blocks" not in r.meta


@pytest.mark.parametrize("edit", ["content", "calls", "renamed id"])
def test_blocks_that_no_longer_match_the_message_are_not_sent(edit: str) -> None:
    """An edited message (a frame fork) says something its blocks do not: it is rebuilt from its fields."""
    m = Anthropic.wrap_one({"role": "assistant", "content": ANTHROPIC["interleaved text and a tool call"]})
    assert "blocks" in m.meta
    if edit == "content":
        m = m.replace(content="Something else.")
    elif edit == "calls":
        m = m.replace(tool_calls=[ToolCall("toolu_01", "read", {"file_path": "other.py"})])
    else:
        m = m.replace(tool_calls=[ToolCall("toolu_99", "read", {"file_path": "a.py"})])
    types = [b["type"] for b in Anthropic.dump(m)["content"]]
    assert types == ["text", "tool_use"]


def test_a_whitespace_text_block_is_not_sent_back() -> None:
    """A model may reply with a ``"\\n\\n"`` block the API refuses to be sent; the others still go back."""
    blank = {"type": "text", "text": "\n\n"}
    m = Anthropic.wrap_one({"role": "assistant", "content": [blank, *ANTHROPIC["web_fetch"]]})
    assert [b["type"] for b in Anthropic.dump(m)["content"]] == ["server_tool_use", "web_fetch_tool_result", "text"]


def test_blocks_are_for_their_own_api_only() -> None:
    """Anthropic blocks mean nothing to the Responses API: there the message is its text and calls."""
    from brute_nb.transports.openai import OpenAI

    m = Anthropic.wrap_one({"role": "assistant", "content": ANTHROPIC["web_search with citations"]})
    (item,) = ResponsesItems.dump(m)
    assert item == {"type": "message", "role": "assistant", "content": m.content}
    assert OpenAI.dump(m) == {"role": "assistant", "content": m.content}


def test_text_after_a_server_tool_starts_a_new_paragraph() -> None:
    """Issue 41 item 4: "I'll search for that." and the answer after the search ran together ("that.The capital");
    text blocks next to each other (a cited sentence split at its citation) stay one text, and the blocks kept for
    the next request still say what the message says, so they are sent back as they came."""
    from brute_nb.transports.anthropic import message_from
    from tests.transports.recorded_blocks import SEARCH_RESULT, SEARCH_USE

    blocks = [{"type": "text", "text": "I'll search for that."}, SEARCH_USE, SEARCH_RESULT,
              {"type": "text", "text": "The capital is "}, {"type": "text", "text": "Paris"},
              {"type": "text", "text": "."}]
    message = message_from({"role": "assistant", "content": blocks})
    assert message.content == "I'll search for that.\n\nThe capital is Paris."
    assert anthropic_says(blocks)[0] == message.content
    assert Anthropic.dump(message)["content"] == sent_back(blocks)  # the blocks go back as the API sent them


MESSAGE = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "I'll search for that.", "annotations": []}]}
ANSWER = {"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
          "content": [{"type": "output_text", "text": "The capital is ", "annotations": []},
                      {"type": "output_text", "text": "Paris.", "annotations": []}]}


def test_a_responses_message_after_a_server_tool_call_starts_a_new_paragraph() -> None:
    """The same for the Responses API: two message items with a web search between them are two paragraphs; the
    parts of one message are one text."""
    from brute_nb.transports.blocks import responses_says
    from brute_nb.transports.openai_responses import response_message

    items = [MESSAGE, RESPONSES["web_search_call"][0], ANSWER]
    message = response_message({"output": items, "status": "completed"})
    assert message.content == "I'll search for that.\n\nThe capital is Paris."
    assert responses_says(items)[0] == message.content
    assert ResponsesItems.dump(message) == sent_back(items)


async def test_the_streamed_responses_text_breaks_where_the_message_does(fake_provider: FakeProvider,
                                                                         tmp_path: Any) -> None:
    items = [MESSAGE, RESPONSES["web_search_call"][0], ANSWER]
    fake_provider.add(Reply(blocks=tuple(items)))
    streamed: list[str] = []
    run = session_agent(FACTORIES["openai_responses"](fake_provider, stream=True), tmp_path / "s.jsonl")
    run.on("assistant_delta", lambda env, delta: streamed.append(delta["text"]))
    env = await run.astart("go")
    reply = next(m for m in env["messages"] if m.role is Role.ASSISTANT)
    assert "".join(streamed) == reply.content == "I'll search for that.\n\nThe capital is Paris."
