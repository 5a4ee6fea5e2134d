"""Issue 14 item 10: what is sent is valid for the real APIs even when the log holds text they refuse.

Whitespace-only assistant text and empty or repeated tool-call ids (a server that repeats ids, a hand-edited
session) are repaired before the request, and the fake provider refuses them as the real APIs do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.message import Message, ToolCall
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.testing.rules import request_problems
from brute_nb.tools import tool
from brute_nb.transports import Anthropic, OpenAI, ResponsesItems


def body(api: str, log: list[Message]) -> dict[str, Any]:
    if api == "anthropic":
        return {"model": "m", "max_tokens": 10, "messages": Anthropic.dump_all(log)}
    if api == "openai_chat":
        return {"model": "m", "messages": OpenAI.dump_all(log)}
    return {"model": "m", "input": ResponsesItems.dump_all(log)}


def calls(*ids: str) -> Message:
    return Message("assistant", "", tool_calls=[ToolCall(i, "shell", {"command": f"echo {n}"})
                                                for n, i in enumerate(ids)])


def result(call_id: str, text: str) -> Message:
    return Message("tool", text, tool_call_id=call_id)


BAD_LOG = [
    Message("user", "hi"),
    Message("assistant", " \n\n "),  # a model's whitespace-only reply, stored as it came
    Message("user", "run two things"),
    calls("", ""),  # a server that sent no ids
    result("", "0"), result("", "1"),
    Message("user", "again"),
    calls("call_1", "call_1"),  # a server that repeats one id
    result("call_1", "a"), result("call_1", "b"),
    Message("user", "and again"),
    calls("call_1"),  # and reuses it in a later turn
    result("call_1", "c"),
    Message("user", "thanks"),
]


@pytest.mark.parametrize("api", ["anthropic", "openai_chat", "openai_responses"])
def test_the_fake_refuses_empty_and_repeated_ids_as_the_real_apis_do(api: str) -> None:
    raw = {"anthropic": lambda log: {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "x", "input": {}} for i in log]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i} for i in log]}]},
        "openai_chat": lambda log: {"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "x", "arguments": "{}"}} for i in log]},
            *({"role": "tool", "tool_call_id": i, "content": "r"} for i in log)]},
        "openai_responses": lambda log: {"model": "m", "input": [
            {"type": "message", "role": "user", "content": "hi"},
            *({"type": "function_call", "call_id": i, "name": "x", "arguments": "{}"} for i in log),
            *({"type": "function_call_output", "call_id": i, "output": "r"} for i in log)]}}[api]
    assert request_problems(api, raw(["a", "b"])) == []
    assert any("empty tool call id" in p for p in request_problems(api, raw(["", "b"])))
    assert any("Duplicate tool call id 'a'" in p for p in request_problems(api, raw(["a", "a"])))


def test_the_fake_refuses_whitespace_only_text_as_anthropic_does() -> None:
    problems = request_problems("anthropic", {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": " \n"}]},
        {"role": "user", "content": "more"}]})
    assert problems == ["messages.1.content.0.text: text content blocks must contain non-whitespace text"]


@pytest.mark.parametrize("api", ["anthropic", "openai_chat", "openai_responses"])
def test_a_log_the_apis_would_refuse_is_repaired_before_the_request(api: str) -> None:
    sent = body(api, BAD_LOG)
    assert request_problems(api, sent) == []
    assert body(api, BAD_LOG) == sent  # the new ids are stable, so a replayed cassette still matches
    assert "0" in str(sent) and "c" in str(sent)  # nothing was dropped but the whitespace


def test_results_follow_their_own_call_when_ids_repeat() -> None:
    messages = Anthropic.dump_all(BAD_LOG)
    pairs: dict[str, str] = {}
    for turn in messages:
        for b in turn["content"] if isinstance(turn["content"], list) else ():  # a string turn holds no calls
            if b["type"] == "tool_use":
                pairs[b["id"]] = b["input"]["command"]
            if b["type"] == "tool_result":
                pairs[b["tool_use_id"]] += " -> " + b["content"]
    assert sorted(pairs.values()) == ["echo 0 -> 0", "echo 0 -> a", "echo 0 -> c", "echo 1 -> 1", "echo 1 -> b"]


@tool
def shell(command: str) -> str:
    """Pretends to run ``command``."""
    return f"ran {command}"


@pytest.mark.parametrize("kind", ["anthropic", "openai_chat", "openai_responses"])
def test_a_server_that_repeats_ids_and_sends_blank_text_does_not_break_the_session(tmp_path: Path,
                                                                                   kind: str) -> None:
    path = tmp_path / "s.jsonl"
    script = [reply("\n\n", call("shell", {"command": "a"}, id="call_1")), "  ",
              reply("", call("shell", {"command": "b"}, id="call_1")), "done"]
    with FakeProvider(script) as fake:
        make = {"anthropic": lambda: AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key,
                                                       max_retries=0),
                "openai_chat": lambda: OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key,
                                                  max_retries=0),
                "openai_responses": lambda: OpenAIResponses("gpt-fake", base_url=fake.openai_base_url,
                                                            api_key=fake.api_key, max_retries=0)}[kind]
        a = agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[shell]).run(
            make())
        a.start("first")
        a.start("second")  # its requests carry the blank text and the repeated id: refused before the repair
        assert len(fake.requests) == 4
    assert [m.content for m in read_session(path)][-1] == "done"
