"""Shared bits for provider tests: provider factories and a tiny tool-running middleware."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brute_nb import agent
from brute_nb.agent import Agent
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.base import Provider
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.testing import AnswerCalls, FakeProvider


class Echo:
    """An inline tool: anything with name and to_dict() is advertised."""

    name = "read"

    def to_dict(self) -> dict[str, Any]:
        return {"name": "read", "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}


SHELL = {"name": "shell", "description": "Run a command.",
         "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}


class RunTools(AnswerCalls):
    """Answers every call with its name and arguments, so a test sees which call a result belongs to."""

    def __init__(self, app: Any, tools: list[Any]) -> None:
        super().__init__(app, tools, answer=lambda c: f"result of {c.name} {sorted(c.arguments.items())}")


Factory = Callable[..., Provider]


def openai_chat(fake: FakeProvider | None, **kw: Any) -> Provider:
    base = {"base_url": fake.openai_base_url, "api_key": fake.api_key} if fake else {}
    return OpenAIChat("gpt-fake", max_retries=kw.pop("max_retries", 0), **base, **kw)


def openai_responses(fake: FakeProvider | None, **kw: Any) -> Provider:
    base = {"base_url": fake.openai_base_url, "api_key": fake.api_key} if fake else {}
    return OpenAIResponses("gpt-fake", max_retries=kw.pop("max_retries", 0), **base, **kw)


def anthropic(fake: FakeProvider | None, **kw: Any) -> Provider:
    base = {"base_url": fake.base_url, "api_key": fake.api_key} if fake else {}
    return AnthropicMessages("claude-fake", max_retries=kw.pop("max_retries", 0), **base, **kw)


FACTORIES = {"openai_chat": openai_chat, "openai_responses": openai_responses, "anthropic": anthropic}


def tool_agent(provider: Provider, deltas: list[str] | None = None, reasoning: list[str] | None = None) -> Agent:
    a = agent().use(ToolResultLoop).use(RunTools, tools=[Echo(), SHELL]).run(provider)
    if deltas is not None:
        a.on("assistant_delta", lambda env, p: deltas.append(p["text"]))
    if reasoning is not None:
        a.on("reasoning_delta", lambda env, p: reasoning.append(p["text"]))
    return a


TIMING = ("duration_ms", "created_at", "replayed", "id")


def shape(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages without the meta that differs run to run (timing, ids)."""
    out = []
    for m in messages:
        d = m.to_dict()
        if "meta" in d:
            d["meta"] = {k: v for k, v in d["meta"].items() if k not in TIMING}
        out.append(d)
    return out
