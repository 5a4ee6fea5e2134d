"""Server tools as first-class tools (issue 27 §2): ``ServerTool``s in the tool list reach each API in its own form
(the strict fake accepts exactly what the real API takes), a provider that does not offer one refuses it by name
before anything is sent, their blocks come back as server tool calls with citations, and the notebook turns them
on with ``--server-tools`` and shows them as blocks run by the provider."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb import ServerTool, agent
from brute_nb.errors import ToolDefinitionError
from brute_nb.middleware.tool_pipeline import DefaultToolPipeline
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.notebook.views import render
from brute_nb.notebook.views.turn_model import server_views
from brute_nb.providers.base import Provider
from brute_nb.testing import FakeProvider, Reply
from brute_nb.testing.rules import request_problems
from brute_nb.tools import tool
from brute_nb.tools.server import server_tools
from brute_nb.transports.server_tools import ServerToolError
from tests.providers.helpers import FACTORIES
from tests.transports.recorded_blocks import ANTHROPIC, RESPONSES

pytestmark = pytest.mark.anyio

SEARCH = ServerTool("web_search", allowed_domains=["example.org"])


@tool
def shell(command: str) -> str:
    """Run a command.

    Args:
        command: the command line.
    """
    return command


SHELL = shell


def tool_agent(provider: Provider, tools: list[Any]) -> Any:
    return agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=tools).run(provider)


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_gets_its_versioned_server_tools_beside_the_function_tools(fake_provider: FakeProvider,
                                                                                   stream: bool) -> None:
    fake_provider.add(Reply(blocks=tuple(ANTHROPIC["web_search with citations"])))
    tools = [SHELL, ServerTool("web_search", max_uses=3, allowed_domains=["example.org"]),
             ServerTool("web_fetch", citations=True), ServerTool("code_execution")]
    env = await tool_agent(FACTORIES["anthropic"](fake_provider, stream=stream), tools).astart("capital?")
    sent = [{k: v for k, v in t.items() if k != "cache_control"} for t in fake_provider.requests[0]["json"]["tools"]]
    assert sent[0]["name"] == "shell" and "input_schema" in sent[0]
    assert sent[1:] == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["example.org"]},
        {"type": "web_fetch_20250910", "name": "web_fetch", "citations": {"enabled": True}},
        {"type": "code_execution_20250825", "name": "code_execution"}]
    m = env["messages"][-1]
    (call,) = m.server_tool_calls
    assert call["name"] == "web_search" and call["result"][0]["url"] == "https://example.org/paris"
    assert m.citations[0]["url"] == "https://example.org/paris"


@pytest.mark.parametrize("stream", [True, False])
async def test_responses_gets_web_search_and_code_interpreter(fake_provider: FakeProvider, stream: bool) -> None:
    fake_provider.add(Reply(blocks=tuple(RESPONSES["web_search_call"])))
    tools = [SHELL, SEARCH, ServerTool("code_execution")]
    env = await tool_agent(FACTORIES["openai_responses"](fake_provider, stream=stream), tools).astart("capital?")
    sent = fake_provider.requests[0]["json"]["tools"]
    assert sent[1:] == [{"type": "web_search", "filters": {"allowed_domains": ["example.org"]}},
                        {"type": "code_interpreter", "container": {"type": "auto"}}]
    (call,) = env["messages"][-1].server_tool_calls
    assert call["name"] == "web_search" and call["arguments"]["query"] == "capital of France"


@pytest.mark.parametrize(("kind", "tool", "says"), [
    ("openai_chat", ServerTool("web_search"), "openai runs no server tools"),
    ("openai_responses", ServerTool("web_fetch"), "web_fetch is not offered"),
    ("openai_responses", ServerTool("web_search", max_uses=2), "web_search takes no max_uses here"),
    ("anthropic", ServerTool("web_search", search_context_size="low"), "takes no search_context_size"),
])
async def test_a_server_tool_the_provider_does_not_offer_is_refused_before_sending(
        fake_provider: FakeProvider, kind: str, tool: ServerTool, says: str) -> None:
    with pytest.raises(ServerToolError) as err:
        await tool_agent(FACTORIES[kind](fake_provider), [tool]).astart("x")
    assert says in str(err.value)
    assert "anthropic offers web_search, web_fetch, code_execution" in str(err.value)  # what to pick instead
    assert fake_provider.received == 0


def test_server_tools_are_checked_when_made() -> None:
    with pytest.raises(ToolDefinitionError, match="unknown server tool 'web_serch'; brute_nb knows web_search"):
        ServerTool("web_serch")
    with pytest.raises(ToolDefinitionError, match="takes no max_use; it takes"):
        ServerTool("web_search", max_use=3)
    assert server_tools("web_search, web_fetch") == (ServerTool("web_search"), ServerTool("web_fetch"))
    assert server_tools("none") == ()
    with pytest.raises(ToolDefinitionError, match="web_serch"):
        server_tools(["web_serch", SEARCH])


async def test_provider_tools_given_directly_are_kept_beside_the_agents(fake_provider: FakeProvider) -> None:
    """``tools=`` given to the provider (an API's own tool entry) is sent with the agent's, not replaced."""
    fake_provider.add("ok")
    own = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
    provider = FACTORIES["anthropic"](fake_provider, tools=[own])
    await tool_agent(provider, [SHELL]).astart("x")
    assert [t.get("name") for t in fake_provider.requests[0]["json"]["tools"]] == ["web_search", "shell"]


@pytest.mark.parametrize(("api", "tool", "problem"), [
    ("anthropic", {"type": "web_search_20250305", "name": "search"}, "Input should be 'web_search'"),
    ("anthropic", {"type": "web_search_2025", "name": "web_search"}, "does not match any of the expected tags"),
    ("openai_responses", {"type": "websearch"}, "Invalid value: 'websearch'"),
    ("openai_responses", {"type": "code_interpreter"}, "Missing required parameter: 'tools[0].container'"),
])
def test_the_fake_refuses_server_tools_the_real_api_refuses(api: str, tool: dict[str, Any], problem: str) -> None:
    body: dict[str, Any] = {"model": "m", "max_tokens": 10, "tools": [tool]}
    body["messages" if api == "anthropic" else "input"] = [{"role": "user", "content": "hi"}]
    assert any(problem in p for p in request_problems(api, body))
    ok = {"anthropic": {"type": "web_search_20250305", "name": "web_search"},
          "openai_responses": {"type": "web_search"}}[api]
    assert not request_problems(api, {**body, "tools": [ok]})


def test_server_calls_render_as_blocks_run_by_the_provider_with_their_sources() -> None:
    from brute_nb.transports.anthropic import Anthropic

    m = Anthropic.wrap_one({"role": "assistant", "content": ANTHROPIC["web_search with citations"]})
    (view,) = server_views(m.meta)
    html = render.tool_html(view)
    assert "run by the provider" in html and "web_search" in html
    sources = render.sources_text(m.meta["citations"])
    assert sources.startswith("Sources:") and "(<https://example.org/paris>)" in sources
    shown = render.markdown_html(sources)
    assert '<a href="https://example.org/paris" rel="noopener noreferrer nofollow">Paris</a>' in shown


def test_hostile_citations_are_shown_as_text_never_as_html() -> None:
    hostile = [{"url": "javascript:alert(1)", "title": "x"},
               {"url": "https://evil.example/a", "title": "<img src=x onerror=alert(1)>](javascript:alert(1))",
                "cited_text": "<script>alert(1)</script>"}]
    shown = render.markdown_html(render.sources_text(hostile))
    assert "href=\"javascript" not in shown and "<img" not in shown and "<script" not in shown
    assert shown.count("<a ") == 1
