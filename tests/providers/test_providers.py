"""Each provider end to end through its real async SDK client against the loopback fake provider."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from brute_nb import ProviderError
from brute_nb.message import INVALID_ARGUMENTS_KEY, Role, unanswered_calls
from brute_nb.testing import FakeProvider, call, malformed_json, rate_limit, reply, server_error, stall, truncated

from .helpers import FACTORIES, tool_agent

pytestmark = pytest.mark.anyio
KINDS = sorted(FACTORIES)


def session_script() -> list[Any]:
    return [
        reply("Let me look.", call("read", {"file_path": "a.txt"})),
        reply("", call("read", {"file_path": "b.txt"}), call("shell", {"command": "ls"})),
        "Both files are fine.",
    ]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
async def test_multi_turn_tool_session(fake_provider: FakeProvider, kind: str, stream: bool) -> None:
    fake_provider.add(*session_script())
    deltas: list[str] = []
    env = await tool_agent(FACTORIES[kind](fake_provider, stream=stream), deltas).astart("check the files")
    log = env["messages"]
    assert [m.role.value for m in log] == ["user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]
    assert log[1].tool_calls[0].name == "read" and log[1].tool_calls[0].arguments == {"file_path": "a.txt"}
    assert [c.name for c in log[3].tool_calls] == ["read", "shell"]
    assert log[-1].content == "Both files are fine."
    assert unanswered_calls(log) == []
    assert len(fake_provider.requests) == 3
    assert all(r["json"].get("stream", False) is stream for r in fake_provider.requests)
    if stream:
        assert "".join(deltas) == "Let me look.Both files are fine."
        assert len(deltas) > 2  # really streamed, not one lump
    else:
        assert deltas == []
    meta = log[-1].meta
    assert meta["provider"] == ("anthropic" if kind == "anthropic" else "openai")
    assert meta["model"] in ("gpt-fake", "claude-fake")
    assert meta["finish_reason"] == "stop" and log[1].meta["finish_reason"] == "tool_calls"
    assert meta["input_tokens"] > 0 and meta["output_tokens"] > 0 and meta["cache_read_tokens"] == 0
    assert isinstance(meta["duration_ms"], int) and "T" in meta["created_at"]


@pytest.mark.parametrize("kind", KINDS)
async def test_model_call_is_emitted_before_each_request_goes_out(fake_provider: FakeProvider, kind: str) -> None:
    """``model_call`` comes before the request reaches the wire, once a model call: the notebook's warm-up waits
    on it to start its reply-side work while the model thinks, not while the request is being built."""
    fake_provider.add(*session_script())
    sent_before: list[int] = []
    agent = tool_agent(FACTORIES[kind](fake_provider))
    agent.on("model_call", lambda env, payload: sent_before.append(len(fake_provider.requests)))
    await agent.astart("check the files")
    assert sent_before == [0, 1, 2] and len(fake_provider.requests) == 3


async def test_model_call_is_emitted_once_a_call_with_a_client_we_did_not_build(fake_provider: FakeProvider) -> None:
    """A caller's own SDK client carries none of our request hooks: the event comes as each call starts."""
    import anthropic as sdk

    from brute_nb.providers.anthropic import AnthropicMessages

    fake_provider.add(*session_script())
    client = sdk.AsyncAnthropic(base_url=fake_provider.base_url, api_key=fake_provider.api_key, max_retries=0)
    sent_before: list[int] = []
    agent = tool_agent(AnthropicMessages("claude-fake", client=client))
    agent.on("model_call", lambda env, payload: sent_before.append(len(fake_provider.requests)))
    await agent.astart("check the files")
    assert sent_before == [0, 1, 2]


@pytest.mark.parametrize("kind", KINDS)
async def test_tools_are_advertised_in_each_library_format(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add("hi")
    await tool_agent(FACTORIES[kind](fake_provider)).astart("x")
    tools = fake_provider.requests[0]["json"]["tools"]
    names = [t.get("name") or t.get("function", {}).get("name") for t in tools]
    assert names == ["read", "shell"]
    if kind == "anthropic":
        assert tools[0]["input_schema"]["properties"] == {"file_path": {"type": "string"}}
    elif kind == "openai_chat":
        assert tools[0]["type"] == "function" and "parameters" in tools[0]["function"]
    else:
        assert tools[0]["type"] == "function" and tools[0]["strict"] is False


@pytest.mark.parametrize("kind", KINDS)
async def test_thinking_streams_as_reasoning_deltas(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(reply("Answer.", thinking="First I consider the question."))
    reasoning: list[str] = []
    env = await tool_agent(FACTORIES[kind](fake_provider), reasoning=reasoning).astart("q")
    assert "".join(reasoning) == "First I consider the question."
    meta = env["messages"][-1].meta
    key = "reasoning_content" if kind == "openai_chat" else "thinking"
    assert meta[key] == "First I consider the question."


async def test_anthropic_thinking_goes_back_with_its_signature(fake_provider: FakeProvider) -> None:
    fake_provider.add(reply("", call("read", {"file_path": "x"}), thinking="plan"), "done")
    await tool_agent(FACTORIES["anthropic"](fake_provider)).astart("q")
    sent = fake_provider.requests[1]["json"]["messages"][1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": "plan", "signature": "sig-1"}


async def test_system_prompt_goes_where_each_api_wants_it(fake_provider: FakeProvider) -> None:
    from brute_nb.middleware.system_prompt import SystemPrompt

    from .helpers import anthropic

    fake_provider.add("ok")
    await tool_agent(anthropic(fake_provider)).use(SystemPrompt, text="Be brief.").astart("q")
    body = fake_provider.requests[0]["json"]
    # A block list, so the tools + system prefix can carry a cache breakpoint (brute_nb.prompt_cache).
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert all(m["role"] != "system" for m in body["messages"])


FAULTS = {
    "rate_limit": (lambda: rate_limit(retry_after=3, message="Slow down, friend."), 429, "Slow down, friend."),
    "server_error": (lambda: server_error("The engine overheated."), 500, "The engine overheated."),
    "malformed_json": (malformed_json, None, "malformed"),
    "truncated": (lambda: truncated(after=3), None, "ended before the reply was complete"),
    "stall": (lambda: stall(after=2), None, "timed out"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", KINDS)
async def test_faults_surface_as_provider_errors_with_a_clean_log(
    fake_provider: FakeProvider, kind: str, fault: str
) -> None:
    make, status, needle = FAULTS[fault]
    fake_provider.add(reply("Let me look.", call("read", {"file_path": "a.txt"})), make())
    options = {"timeout": 0.5} if fault == "stall" else {}
    a = tool_agent(FACTORIES[kind](fake_provider, **options))
    with pytest.raises(ProviderError) as info:
        await a.astart("go")
    assert needle in str(info.value)
    assert info.value.status == status
    assert info.value.provider in ("openai", "anthropic")
    log = a.last_env["messages"] if a.last_env else []
    assert unanswered_calls(log) == []
    assert [m.role for m in log] == [Role.USER, Role.ASSISTANT, Role.TOOL]  # the failed reply left nothing


async def test_rate_limit_message_mentions_retry_after(fake_provider: FakeProvider) -> None:
    from .helpers import openai_chat

    fake_provider.add(rate_limit(retry_after=3))
    with pytest.raises(ProviderError, match="retry after 3 s"):
        await tool_agent(openai_chat(fake_provider)).astart("go")


@pytest.mark.parametrize("kind", KINDS)
async def test_sdk_retries_honour_retry_after(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(rate_limit(retry_after=0.001), "made it")
    env = await tool_agent(FACTORIES[kind](fake_provider, max_retries=1)).astart("go")
    assert env["messages"][-1].content == "made it"
    assert len(fake_provider.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
async def test_a_rule_violation_reports_the_providers_message(fake_provider: FakeProvider, kind: str) -> None:
    # A broken history never leaves brute_nb (every transport sends brute_nb.sendable's), so the rule broken here
    # is one only the API knows: a tool name outside its pattern.
    provider = FACTORIES[kind](fake_provider)
    env = tool_agent(provider).new_env("hi")
    env["tools"] = [{"name": "read file!", "description": "", "parameters": {"type": "object"}}]
    with pytest.raises(ProviderError) as info:
        await provider(env)
    assert info.value.status == 400
    assert "tools.0" in str(info.value) and "should match pattern" in str(info.value)


@pytest.mark.parametrize("kind", ["openai_chat", "openai_responses"])
async def test_malformed_tool_arguments_never_crash_a_turn(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(reply("", call("read", '{"file_path": "a.txt"')), "ok")
    env = await tool_agent(FACTORIES[kind](fake_provider)).astart("go")
    bad = env["messages"][1].tool_calls[0]
    assert bad.arguments == {INVALID_ARGUMENTS_KEY: '{"file_path": "a.txt"'}
    # The raw text goes back as the model sent it; the fake (like the API) accepts the next request.
    assert env["messages"][-1].content == "ok"


async def test_client_argument_with_mock_transport() -> None:
    import openai

    from brute_nb.providers.openai import OpenAIChat

    fake = FakeProvider(["through the mock"])
    client = openai.AsyncOpenAI(api_key=fake.api_key, base_url="http://fake.invalid/v1", max_retries=0,
                                http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handler)))
    deltas: list[str] = []
    env = await tool_agent(OpenAIChat("m", client=client), deltas).astart("x")
    assert env["messages"][-1].content == "through the mock"
    assert "".join(deltas) == "through the mock"


def test_labels_and_describe() -> None:
    from .helpers import anthropic, openai_chat, openai_responses

    assert anthropic(None).label == "anthropic:claude-fake"
    assert openai_chat(None).describe() == "openai:gpt-fake"
    assert openai_responses(None).label == "openai-responses:gpt-fake"
    p = anthropic(None, replay="s.jsonl")
    assert p.replaying and "replayed from s.jsonl" in p.describe()
    assert not openai_chat(None).replaying


def test_record_and_replay_together_is_refused() -> None:
    from brute_nb import ProviderNotConfiguredError

    from .helpers import openai_chat

    with pytest.raises(ProviderNotConfiguredError, match="not both"):
        openai_chat(None, record="a", replay="b")


def test_missing_key_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb import ProviderNotConfiguredError

    from .helpers import openai_chat

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderNotConfiguredError, match="OPENAI_API_KEY"):
        _ = openai_chat(None).client
