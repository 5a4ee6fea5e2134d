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
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_row import server_views
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
    html = tool_html(view)
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


MCP = {"server_label": "example-mcp", "server_url": "https://mcp.example.com/sse"}


@pytest.mark.parametrize("stream", [True, False])
async def test_a_server_tool_names_its_version(fake_provider: FakeProvider, stream: bool) -> None:
    """Recordings use ``code_execution_20260120``: the name the API spells, or ``version=``, sends that version."""
    assert ServerTool("code_execution_20260120") == ServerTool("code_execution", version="20260120")
    fake_provider.add(Reply(blocks=tuple(ANTHROPIC["code_execution"])))
    tools = [ServerTool("code_execution_20260120"), ServerTool("web_search", version="20260209", max_uses=2)]
    await tool_agent(FACTORIES["anthropic"](fake_provider, stream=stream), tools).astart("sum")
    sent = [{k: v for k, v in t.items() if k != "cache_control"} for t in fake_provider.requests[0]["json"]["tools"]]
    assert sent == [{"type": "code_execution_20260120", "name": "code_execution"},
                    {"type": "web_search_20260209", "name": "web_search", "max_uses": 2}]


def test_versions_and_options_are_checked_against_the_installed_sdks_when_made() -> None:
    with pytest.raises(ToolDefinitionError, match=r"code_execution has no version 20990101; the installed SDKs "
                                                  r"have .*20260120"):
        ServerTool("code_execution_20990101")
    with pytest.raises(ToolDefinitionError, match=r"image_generation takes no qualty\b.*it takes .*quality"):
        ServerTool("image_generation", qualty="high")
    with pytest.raises(ToolDefinitionError, match="mcp takes no server_lable, serverurl"):  # every problem at once
        ServerTool("mcp", server_lable="x", serverurl="https://x")
    with pytest.raises(ToolDefinitionError, match="web_fetch takes no use_cache"):  # not in the default version
        ServerTool("web_fetch", use_cache=True)
    assert ServerTool("web_fetch_20260309", use_cache=True, url_sources=["https://example.org"]).options


@pytest.mark.parametrize("stream", [True, False])
async def test_responses_gets_image_generation_file_search_and_remote_mcp(fake_provider: FakeProvider,
                                                                          stream: bool, tmp_path: Any) -> None:
    from tests.transports.recorded_blocks import NEW_RESPONSES

    fake_provider.add(Reply(blocks=tuple(NEW_RESPONSES["remote mcp"])), "later")
    tools = [ServerTool("image_generation", quality="high", size="1024x1024"),
             ServerTool("file_search", vector_store_ids=["vs_1"], max_num_results=3),
             ServerTool("mcp", **MCP, allowed_tools=["ask_question"])]
    a = tool_agent(FACTORIES["openai_responses"](fake_provider, stream=stream), tools)
    env = await a.astart("ask the wiki")
    assert fake_provider.requests[0]["json"]["tools"] == [
        {"type": "image_generation", "quality": "high", "size": "1024x1024"},
        {"type": "file_search", "vector_store_ids": ["vs_1"], "max_num_results": 3},
        {"type": "mcp", "require_approval": "never", **MCP, "allowed_tools": ["ask_question"]}]
    (call,) = env["messages"][-1].server_tool_calls
    assert call["name"] == "mcp" and call["arguments"] == {"arguments": "{\"q\":\"what is it?\"}"}


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_gets_the_mcp_connector_with_its_beta(fake_provider: FakeProvider, stream: bool) -> None:
    from tests.transports.recorded_blocks import NEW_ANTHROPIC

    fake_provider.add(Reply(blocks=tuple(NEW_ANTHROPIC["mcp connector"])), "again")
    tools = [SHELL, ServerTool("mcp", **MCP, authorization="tok-mcp-0123456789")]
    a = tool_agent(FACTORIES["anthropic"](fake_provider, stream=stream), tools)
    env = await a.astart("echo hi")
    request = fake_provider.requests[0]
    assert request["json"]["mcp_servers"] == [{"type": "url", "name": "example-mcp", "url": MCP["server_url"],
                                               "authorization_token": "tok-mcp-0123456789"}]
    toolset = {k: v for k, v in request["json"]["tools"][-1].items() if k != "cache_control"}
    assert toolset == {"type": "mcp_toolset", "mcp_server_name": "example-mcp"}
    assert "mcp-client-2025-11-20" in request["headers"]["anthropic-beta"]
    (call,) = env["messages"][-1].server_tool_calls
    assert (call["name"], call["arguments"]) == ("echo", {"text": "hi"})


def test_the_fake_refuses_the_mcp_connector_without_its_beta() -> None:
    from brute_nb.testing.rules_tools import anthropic_beta

    body = {"mcp_servers": [{"type": "url", "name": "a", "url": "https://a"}],
            "tools": [{"type": "mcp_toolset", "mcp_server_name": "a"}]}
    assert "Extra inputs are not permitted" in anthropic_beta(body, "")[0]
    assert anthropic_beta(body, "mcp-client-2025-11-20") == []
    assert "names no server" in anthropic_beta({**body, "mcp_servers": []}, "mcp-client-2025-11-20")[0]


async def test_image_generation_is_refused_where_it_is_not_offered(fake_provider: FakeProvider) -> None:
    with pytest.raises(ServerToolError, match="image_generation is not offered"):
        await tool_agent(FACTORIES["anthropic"](fake_provider), [ServerTool("image_generation")]).astart("x")
    assert fake_provider.received == 0


@pytest.mark.parametrize("stream", [True, False])
async def test_beta_flags_and_extra_headers_reach_the_api(fake_provider: FakeProvider, stream: bool) -> None:
    """``-o betas=[...]`` (a beta parameter: the beta messages.create is called) and ``-o extra_headers={...}``,
    checked against the SDK's signatures as every option is."""
    from brute_nb.providers.auto import build

    fake_provider.add("ok")
    provider = build("anthropic", "claude-fake", base_url=fake_provider.base_url, api_key=fake_provider.api_key,
                     max_retries=0, stream=stream, betas=["compact-2026-01-12"],
                     extra_headers={"X-Trace": "run-1"})
    await tool_agent(provider, [SHELL]).astart("x")
    request = fake_provider.requests[0]
    assert "compact-2026-01-12" in request["headers"]["anthropic-beta"]
    assert request["headers"]["x-trace"] == "run-1"
    assert "betas" not in request["json"]


@pytest.mark.parametrize("headers", [{"x-api-key": "sk-other"}, {"Authorization": "Bearer sk-other"}])
def test_extra_headers_never_carry_a_key(headers: dict[str, str]) -> None:
    """Credentials follow the host: a key goes as api_key=..., never in a header sent wherever the client goes."""
    from brute_nb.errors import ProviderNotConfiguredError
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.providers.auto import build

    with pytest.raises(ProviderNotConfiguredError, match=r"extra_headers cannot set .*api_key="):
        build("anthropic", "claude-x", extra_headers=headers)
    with pytest.raises(ProviderNotConfiguredError, match="extra_headers cannot set"):
        AnthropicMessages("claude-x", extra_headers=headers)
    with pytest.raises(ProviderNotConfiguredError, match="takes no 'betaz'"):
        build("anthropic", "claude-x", betaz=["x"])
