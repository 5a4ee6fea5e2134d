"""Counting a request's input tokens before sending it: Anthropic's count_tokens endpoint through the real SDK
against the fake (which counts as it bills), tiktoken when installed, else an estimate that says so."""

from __future__ import annotations

from typing import Any

import anthropic
import anyio
import pytest

from brute_nb.message import Log
from brute_nb.providers import token_count
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.providers.token_count import ENDPOINT, ESTIMATE, TIKTOKEN, count_request
from brute_nb.testing import FakeProvider
from brute_nb.testing.rules_tools import BETA_ONLY


def body_for(provider: Any, text: str, system: str | None = None) -> dict[str, Any]:
    log = Log()
    if system:
        log.system(system)
    log.user(text)
    return provider.request({"messages": log, "tools": []})


def test_the_endpoint_counts_what_the_request_is_then_billed() -> None:
    with FakeProvider(["fine"]) as fake:
        provider = AnthropicMessages("claude-x", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
        body = body_for(provider, "How long is this prompt, in tokens? " * 20, system="Be brief.")
        counted = anyio.run(count_request, provider, body)
        assert counted.method == ENDPOINT and counted.exact and not counted.note
        assert "max_tokens" not in fake.counted[0] and fake.counted[0]["model"] == "claude-x"
        assert fake.requests == []  # counting is not a model call
        from brute_nb import agent
        from brute_nb.middleware import SystemPrompt

        turn = agent().use(SystemPrompt, text="Be brief.").run(provider)
        env = anyio.run(lambda: turn.astart("How long is this prompt, in tokens? " * 20))
        reply = env["messages"][-1]
    assert reply.usage is not None and reply.usage.input_tokens == counted.tokens


def test_the_fake_endpoint_refuses_what_the_real_one_refuses() -> None:
    with (FakeProvider() as fake,
          anthropic.Anthropic(base_url=fake.base_url, api_key=fake.api_key, max_retries=0) as client,
          anthropic.Anthropic(base_url=fake.base_url, api_key="sk-wrong-000000000000", max_retries=0) as wrong):
        messages: Any = [{"role": "user", "content": "hi"}]
        assert client.messages.count_tokens(model="m", messages=messages).input_tokens > 0
        with pytest.raises(anthropic.BadRequestError, match="max_tokens: Extra inputs are not permitted"):
            client.messages.count_tokens(model="m", messages=messages, extra_body={"max_tokens": 10})
        with pytest.raises(anthropic.BadRequestError, match="must be non-empty"):
            client.messages.count_tokens(model="m", messages=[{"role": "user", "content": ""}])
        with pytest.raises(anthropic.AuthenticationError):
            wrong.messages.count_tokens(model="m", messages=messages)


def test_a_failing_endpoint_falls_back_and_says_why_without_the_key() -> None:
    with FakeProvider() as fake:
        provider = AnthropicMessages("claude-x", base_url=fake.base_url, api_key="sk-wrong-0123456789abcdef",
                                     max_retries=0)
        counted = anyio.run(count_request, provider, body_for(provider, "hello there"))
    assert counted.method in (ESTIMATE, TIKTOKEN) and "count_tokens endpoint failed" in counted.note
    assert "sk-wrong-0123456789abcdef" not in counted.note


def test_openai_is_counted_with_tiktoken_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import brute_nb.compaction.tokens as tokens

    monkeypatch.setattr(tokens, "default_tokenizer", lambda: lambda text: len(text.split()))
    with FakeProvider() as fake:
        provider = OpenAIChat("gpt-x", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
        counted = anyio.run(count_request, provider, body_for(provider, "one two three four"))
        assert fake.counted == [] and fake.received == 0  # nothing was sent anywhere
    assert counted.method == TIKTOKEN and counted.exact
    assert counted.tokens == 4 + token_count.FRAMING * 2


def test_without_a_tokenizer_it_is_an_estimate_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import brute_nb.compaction.tokens as tokens

    monkeypatch.setattr(tokens, "default_tokenizer", lambda: tokens.chars_per_four)
    provider = OpenAIChat("gpt-x", base_url="http://127.0.0.1:9/v1", api_key="sk-x")
    counted = anyio.run(count_request, provider, body_for(provider, "x" * 400))
    assert counted.method == ESTIMATE and not counted.exact
    assert counted.tokens == 100 + token_count.FRAMING * 2


def test_a_count_is_recorded_and_replayed_like_a_turn_and_names_the_api(tmp_path: Any) -> None:
    from brute_nb.providers import auto

    cassette = str(tmp_path / "count.jsonl")
    with FakeProvider() as fake:
        recording = AnthropicMessages("claude-x", base_url=fake.base_url, api_key=fake.api_key, record=cassette)
        live = anyio.run(count_request, recording, body_for(recording, "count me"))
    replaying = auto(replay=cassette)  # the cassette starts with a count: still Anthropic's API and model
    assert isinstance(replaying, AnthropicMessages) and replaying.model == "claude-x"
    again = anyio.run(count_request, replaying, body_for(replaying, "count me"))
    assert again == live and again.method == ENDPOINT


def test_a_replay_that_differs_from_its_recording_is_raised_not_estimated(tmp_path: Any) -> None:
    from brute_nb.errors import BruteError
    from brute_nb.providers import auto

    cassette = str(tmp_path / "count.jsonl")
    with FakeProvider() as fake:
        recording = AnthropicMessages("claude-x", base_url=fake.base_url, api_key=fake.api_key, record=cassette)
        anyio.run(count_request, recording, body_for(recording, "count me"))
    replaying = auto(replay=cassette)
    with pytest.raises((BruteError, anthropic.APIConnectionError)):
        anyio.run(count_request, replaying, body_for(replaying, "something else"))


@pytest.mark.parametrize("field", ["mcp_servers", "context_management", "compaction"])
def test_the_plain_count_endpoint_refuses_a_field_only_the_beta_one_takes(field: str) -> None:
    """The plain endpoint's body is the plain SDK's ``count_tokens`` parameters; the beta fields go to the beta
    one (the same URL with an ``anthropic-beta`` header, which the SDK's beta call always sends). The fake refuses
    them even with its own rules off, as the endpoint's schema is not one of those rules."""
    value: Any = {"mcp_servers": [{"type": "url", "name": "s", "url": "https://mcp.example.com/sse"}],
                  "context_management": {"edits": []}, "compaction": {"type": "auto"}}[field]
    with (FakeProvider(enforce_rules=False) as fake,
          anthropic.Anthropic(base_url=fake.base_url, api_key=fake.api_key, max_retries=0) as client):
        messages: Any = [{"role": "user", "content": "hi"}]
        # the SDK words its error's text differently across releases (anthropic 2.0 leaves out the path): the
        # API's own message is in it on each
        with pytest.raises(anthropic.BadRequestError, match=f"{field}: Extra inputs are not permitted"):
            client.messages.count_tokens(model="m", messages=messages, extra_body={field: value})
        assert client.beta.messages.count_tokens(model="m", messages=messages, extra_body={field: value},
                         betas=[BETA_ONLY.get(field, "context-management-2025-06-27")]).input_tokens > 0


def test_brute_nbs_count_of_a_body_with_a_beta_field_reaches_the_beta_endpoint() -> None:
    with FakeProvider() as fake:
        provider = AnthropicMessages("claude-x", base_url=fake.base_url, api_key=fake.api_key, max_retries=0,
                                     context_management={"edits": [{"type": "clear_tool_uses_20250919"}]})
        counted = anyio.run(count_request, provider, body_for(provider, "hello there"))
    assert counted.method == ENDPOINT and not counted.note, counted.note
