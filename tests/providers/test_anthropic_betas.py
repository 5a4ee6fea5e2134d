"""Anthropic's beta features reach the API with their ``anthropic-beta`` header whatever brings them in: a server
tool only the beta takes (the advisor, the MCP connector), a block of one sent back on a later turn (a kept
``mcp_tool_use``), a header the user gave as ``extra_headers``. The fake refuses each without its header, with the
real API's 400 body, as the real API does; the real SDK clients drive every test."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb import ServerTool, agent
from brute_nb.errors import ToolDefinitionError
from brute_nb.message import Log
from brute_nb.middleware.tool_pipeline import DefaultToolPipeline
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.providers.base import Provider
from brute_nb.testing import FakeProvider, Reply
from brute_nb.testing.rules_tools import anthropic_beta
from brute_nb.transports.server_tools import ServerToolError
from tests.providers.helpers import FACTORIES
from tests.transports.recorded_blocks import NEW_ANTHROPIC

pytestmark = pytest.mark.anyio

MCP = {"server_label": "example-mcp", "server_url": "https://mcp.example.com/sse"}
MCP_BETA = "mcp-client-2025-11-20"
ADVISOR_BETA = "advisor-tool-2026-03-01"
ADVICE = [
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "advisor", "input": {}},
    {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_01",
     "content": {"type": "advisor_result", "text": "Check the edge cases first.", "stop_reason": "end_turn"}},
    {"type": "text", "text": "Following the advice."}]
"""An advisor call as ``anthropic.types.beta`` declares it (``BetaServerToolUseBlock`` named ``advisor``,
``BetaAdvisorToolResultBlock`` holding a ``BetaAdvisorResultBlock``)."""


def tool_agent(provider: Provider, tools: list[Any]) -> Any:
    return agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=tools).run(provider)


def betas(request: dict[str, Any]) -> list[str]:
    return [b.strip() for b in request["headers"].get("anthropic-beta", "").split(",") if b.strip()]


@pytest.mark.parametrize("stream", [True, False])
async def test_kept_mcp_blocks_sent_back_carry_the_connectors_beta(fake_provider: FakeProvider,
                                                                   stream: bool) -> None:
    """A turn with the MCP connector keeps its ``mcp_tool_use``/``mcp_tool_result`` blocks; the next turn sends
    them back (without the connector now), and the API takes them only under the connector's beta."""
    fake_provider.add(Reply(blocks=tuple(NEW_ANTHROPIC["mcp connector"])), "again")
    provider = FACTORIES["anthropic"](fake_provider, stream=stream)
    first = await tool_agent(provider, [ServerTool("mcp", **MCP)]).astart("echo hi")
    log: Log = first["messages"]
    log.user("and now without it")
    second = await tool_agent(provider, []).astart(None, messages=log)
    assert second["messages"][-1].content == "again"
    sent = fake_provider.requests[1]
    assert "mcp_servers" not in sent["json"]
    assert any(b.get("type") == "mcp_tool_use" for m in sent["json"]["messages"] for b in m["content"]
               if isinstance(b, dict))
    assert MCP_BETA in betas(sent)


@pytest.mark.parametrize("stream", [True, False])
async def test_the_advisor_is_a_server_tool_sent_with_its_beta(fake_provider: FakeProvider, stream: bool) -> None:
    fake_provider.add(Reply(blocks=tuple(ADVICE)), "done")
    provider = FACTORIES["anthropic"](fake_provider, stream=stream)
    tools = [ServerTool("advisor", model="claude-opus-4-6", max_uses=2)]
    env = await tool_agent(provider, tools).astart("plan it")
    request = fake_provider.requests[0]
    (entry,) = [{k: v for k, v in t.items() if k != "cache_control"} for t in request["json"]["tools"]]
    assert entry == {"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-6", "max_uses": 2}
    assert ADVISOR_BETA in betas(request)
    (call,) = env["messages"][-1].server_tool_calls
    assert call["name"] == "advisor"
    log: Log = env["messages"]
    log.user("go on")
    await tool_agent(provider, []).astart(None, messages=log)  # its advisor_tool_result goes back under the beta
    assert ADVISOR_BETA in betas(fake_provider.requests[1])


async def test_the_advisor_names_its_model(fake_provider: FakeProvider) -> None:
    """Its type requires ``model``: refused when made with other options, and a bare one before it is sent."""
    with pytest.raises(ToolDefinitionError, match=r"advisor needs model \(ServerTool\('advisor', model=\.\.\.\)\)"):
        ServerTool("advisor", max_uses=1)
    with pytest.raises(ToolDefinitionError, match=r"advisor takes no temperature; it takes .*max_tokens"):
        ServerTool("advisor", model="claude-opus-4-6", temperature=0)
    with pytest.raises(ServerToolError, match="advisor needs model here"):
        await tool_agent(FACTORIES["anthropic"](fake_provider), [ServerTool("advisor")]).astart("x")
    assert fake_provider.received == 0


async def test_the_advisor_is_refused_where_it_is_not_offered(fake_provider: FakeProvider) -> None:
    tool = ServerTool("advisor", model="claude-opus-4-6")
    with pytest.raises(ServerToolError, match="advisor is not offered"):
        await tool_agent(FACTORIES["openai_responses"](fake_provider), [tool]).astart("x")
    assert fake_provider.received == 0


@pytest.mark.parametrize("stream", [True, False])
async def test_a_beta_given_as_a_header_joins_the_ones_brute_nb_adds(fake_provider: FakeProvider,
                                                                     stream: bool) -> None:
    """The SDK lets ``extra_headers`` replace the ``anthropic-beta`` its ``betas`` build: a user's header would
    silently drop the connector's beta. Both are sent."""
    fake_provider.add(Reply(blocks=tuple(NEW_ANTHROPIC["mcp connector"])))
    provider = FACTORIES["anthropic"](fake_provider, stream=stream, betas=["context-1m-2025-08-07"],
                                      extra_headers={"Anthropic-Beta": "compact-2026-01-12", "X-Trace": "t1"})
    await tool_agent(provider, [ServerTool("mcp", **MCP)]).astart("echo hi")
    request = fake_provider.requests[0]
    assert sorted(betas(request)) == sorted([MCP_BETA, "context-1m-2025-08-07", "compact-2026-01-12"])
    assert request["headers"]["x-trace"] == "t1"


@pytest.mark.parametrize(("body", "beta", "says"), [
    ({"messages": [{"role": "user", "content": "hi"},
                   {"role": "assistant", "content": NEW_ANTHROPIC["mcp connector"]}]},
     MCP_BETA, "messages.1.content.1: Input tag 'mcp_tool_use'"),
    ({"tools": [{"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-6"}]},
     ADVISOR_BETA, "tools.0.type: Input tag 'advisor_20260301'"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ADVICE}]},
     ADVISOR_BETA, "messages.1.content.1: Input tag 'advisor_tool_result'"),
])
def test_the_fake_refuses_a_beta_feature_without_its_header(body: dict[str, Any], beta: str, says: str) -> None:
    problem = anthropic_beta(body, "")[0]
    assert problem.startswith(says) and beta in problem
    assert anthropic_beta(body, f"other-2026-01-01, {beta}") == []


async def test_the_real_sdk_gets_the_real_400_for_a_beta_block_sent_without_its_beta(
        fake_provider: FakeProvider) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(base_url=fake_provider.base_url, api_key=fake_provider.api_key, max_retries=0)
    messages: Any = [{"role": "user", "content": "hi"},
                     {"role": "assistant", "content": NEW_ANTHROPIC["mcp connector"]},
                     {"role": "user", "content": "again"}]
    with pytest.raises(anthropic.BadRequestError) as err:
        await client.messages.create(model="claude-fake", max_tokens=10, messages=messages)
    assert err.value.body == {"type": "error", "error": {"type": "invalid_request_error",
                                                         "message": err.value.body["error"]["message"]}}
    assert "mcp_tool_use" in err.value.body["error"]["message"]
    await client.close()


async def test_a_requests_tokens_are_counted_under_its_betas(fake_provider: FakeProvider) -> None:
    """The token-count endpoint refuses a beta feature without its header as ``/v1/messages`` does: a map's cost
    estimate for rows with the MCP connector is counted by the beta endpoint, exactly, not guessed."""
    from brute_nb.providers.token_count import ENDPOINT, count_request

    provider = FACTORIES["anthropic"](fake_provider)
    log = Log()
    log.user("echo hi")
    body = provider.request({"messages": log, "tools": [ServerTool("mcp", **MCP).as_adapter()]})
    counted = await count_request(provider, body)
    assert (counted.method, counted.note) == (ENDPOINT, "")
    assert fake_provider.counted[0]["mcp_servers"][0]["name"] == "example-mcp"
    await provider.aclose()


@pytest.mark.parametrize(("edit", "beta"), [("clear_tool_uses_20250919", "context-management-2025-06-27"),
                                            ("clear_thinking_20251015", "context-management-2025-06-27"),
                                            ("compact_20260112", "compact-2026-01-12")])
async def test_context_management_is_sent_with_the_beta_of_each_edit(fake_provider: FakeProvider, edit: str,
                                                                     beta: str) -> None:
    """``-o context_management=...`` alone: each edit's own beta comes with it (the user need not know its name)."""
    from brute_nb.providers.auto import build

    fake_provider.add("ok")
    provider = build("anthropic", "claude-fake", base_url=fake_provider.base_url, api_key=fake_provider.api_key,
                     max_retries=0, context_management={"edits": [{"type": edit}]})
    await tool_agent(provider, []).astart("x")
    assert betas(fake_provider.requests[0]) == [beta]


def test_the_fake_refuses_a_context_edit_without_its_beta() -> None:
    body = {"context_management": {"edits": [{"type": "clear_thinking_20251015"}, {"type": "compact_20260112"}]}}
    problems = anthropic_beta(body, "context-management-2025-06-27")
    assert [p.split(":")[0] for p in problems] == ["context_management.edits.1.type"]
    assert anthropic_beta(body, "context-management-2025-06-27,compact-2026-01-12") == []
