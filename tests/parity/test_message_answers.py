"""What the seed's Message answers: citations, server tool calls, thinking, the predicates and pause_turn,
each read from replies the real SDKs parsed from the fake server."""

from __future__ import annotations

from dataclasses import replace

import pytest

from brute_nb.message import Log, Message
from brute_nb.notebook.views.turn_model import server_views
from brute_nb.testing import FakeProvider, Reply, call, reply
from brute_nb.transports.base import finish_reason

from .helpers import FACTORIES, KINDS, tool_agent

pytestmark = pytest.mark.anyio

CITED = Reply(text="Paris is the capital of France.",
              citations=({"url": "https://example.org/paris", "title": "Paris", "cited_text": "capital of France"},))
SEARCH = {"name": "web_search", "arguments": {"query": "capital of France"},
          "result": [{"type": "web_search_result", "url": "https://example.org/paris", "title": "Paris",
                      "encrypted_content": "x", "page_age": None}]}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
async def test_citations_are_one_shape_whatever_the_provider(fake_provider: FakeProvider, kind: str,
                                                             stream: bool) -> None:
    fake_provider.add(CITED)
    env = await tool_agent(FACTORIES[kind](fake_provider, stream=stream)).astart("capital?")
    m = env["messages"][-1]
    assert m.content == CITED.text
    assert [(c["url"], c["title"], c["cited_text"]) for c in m.citations] == [
        ("https://example.org/paris", "Paris", "capital of France")]
    assert m.meta["citations"][0]["type"] in ("url_citation", "web_search_result_location")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", ["anthropic", "openai_responses"])
async def test_server_tool_calls_are_recorded_and_shown_as_server_blocks(fake_provider: FakeProvider, kind: str,
                                                                         stream: bool) -> None:
    fake_provider.add(replace(CITED, server_calls=(SEARCH,)), "and again")
    a = tool_agent(FACTORIES[kind](fake_provider, stream=stream))
    env = await a.astart("capital?")
    m = env["messages"][-1]
    (server,) = m.server_tool_calls
    assert server["name"] == "web_search" and server["arguments"]["query"] == "capital of France"
    assert server["id"] and server["result"]
    assert not m.tool_calls  # the provider ran it: nothing for our tool pipeline to answer
    (view,) = server_views(m.meta)
    assert view.status == "server" and view.name == "web_search"
    await a.astart("more")  # the next request (history with a server-tool reply) is accepted by the strict fake
    assert len(fake_provider.requests) == 2


@pytest.mark.parametrize("stream", [True, False])
async def test_pause_turn_is_continued_into_one_message(fake_provider: FakeProvider, stream: bool) -> None:
    fake_provider.add(Reply(text="Searching first.", server_calls=(SEARCH,), finish="pause_turn"),
                      "Then the answer.")
    env = await tool_agent(FACTORIES["anthropic"](fake_provider, stream=stream)).astart("capital?")
    replies = [m for m in env["messages"] if m.role == "assistant"]
    assert len(replies) == 1 and len(fake_provider.requests) == 2
    m = replies[0]
    assert m.content == "Searching first.Then the answer." and m.finish_reason == "stop" and m.stopped
    assert len(m.server_tool_calls) == 1
    sent = fake_provider.requests[1]["json"]["messages"]
    assert sent[-1]["role"] == "assistant"
    assert [b["type"] for b in sent[-1]["content"]] == ["server_tool_use", "web_search_tool_result", "text"]
    first_in = fake_provider.requests[0]
    assert m.meta["input_tokens"] > 0 and first_in  # usage summed over both calls
    assert m.meta["output_tokens"] >= 2


@pytest.mark.parametrize("kind", KINDS)
async def test_thinking_and_finish_reasons(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(Reply(text="cut", thinking="let me think", finish="length" if kind != "anthropic"
                            else "max_tokens"))
    env = await tool_agent(FACTORIES[kind](fake_provider, stream=False)).astart("x")
    m = env["messages"][-1]
    assert m.thinking == "let me think"
    assert m.max_tokens and not m.stopped and not m.tool_call_stop and not m.content_filtered


async def test_tool_call_stop_tool_result_and_tool_results(fake_provider: FakeProvider) -> None:
    fake_provider.add(reply("", call("read", {"file_path": "a"}), call("read", {"file_path": "b"})), "done")
    env = await tool_agent(FACTORIES["openai_chat"](fake_provider)).astart("x")
    log: Log = env["messages"]
    asked = log[1]
    assert asked.tool_call_stop and not asked.stopped and not asked.tool_result
    results = asked.tool_results(log)
    assert [r.tool_call_id for r in results] == [c.id for c in asked.tool_calls]
    assert all(r.tool_result for r in results)
    assert log[-1].stopped and log[-1].tool_results(log) == []


def test_predicates_follow_the_seed() -> None:
    def m(reason: str | None, calls: bool = False) -> Message:
        return Message("assistant", "x", tool_calls=[call("t", id="c1")] if calls else None,
                       meta={"finish_reason": reason} if reason else None)

    assert m("stop").stopped and not m("stop", calls=True).stopped
    assert m("stop", calls=True).tool_call_stop  # a provider that says stop while calling tools
    assert m("content_filter").content_filtered and not m("stop").content_filtered
    assert not m(None).stopped and m(None).finish_reason is None
    assert finish_reason("pause_turn") == "pause_turn" and finish_reason("refusal") == "content_filter"
    assert finish_reason("some_new_reason") == "some_new_reason"  # kept as the provider spelled it
    marked = Message("user", "long context").cache_until_here()
    assert marked.cache_boundary and not Message("user", "x").cache_boundary
    assert Message.from_json(marked.to_json()) == marked
