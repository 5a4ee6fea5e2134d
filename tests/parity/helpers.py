"""Shared bits for the parity tests: providers on the fake server and a tiny tool-running layer."""

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

READ = {"name": "read", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}


class RunTools(AnswerCalls):
    """Answers every call with ``"<result> of <tool name>"``."""

    def __init__(self, app: Any, tools: list[Any], result: str = "result") -> None:
        super().__init__(app, tools, answer=lambda c: f"{result} of {c.name}")


def openai_chat(fake: FakeProvider, model: str = "gpt-fake", **kw: Any) -> Provider:
    return OpenAIChat(model, base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0, **kw)


def openai_responses(fake: FakeProvider, model: str = "gpt-fake", **kw: Any) -> Provider:
    return OpenAIResponses(model, base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0, **kw)


def anthropic(fake: FakeProvider, model: str = "claude-fake", **kw: Any) -> Provider:
    return AnthropicMessages(model, base_url=fake.base_url, api_key=fake.api_key, max_retries=0, **kw)


FACTORIES: dict[str, Callable[..., Provider]] = {
    "openai_chat": openai_chat, "openai_responses": openai_responses, "anthropic": anthropic}
KINDS = sorted(FACTORIES)
REAL_MODEL = {"openai_chat": "gpt-4.1", "openai_responses": "gpt-4.1", "anthropic": "claude-haiku-4-5"}
"""Models genai-prices knows, so a reply through the fake server gets a real price. Not a retired model: anthropic
2.0.0 (the declared minimum) warns on every call naming claude-sonnet-4-20250514, an error under the suite."""


def tool_agent(provider: Provider, *layers: tuple[Any, dict[str, Any]], tools: list[Any] | None = None) -> Agent:
    a = agent().use(ToolResultLoop)
    for cls, options in layers:
        a.use(cls, **options)
    return a.use(RunTools, tools=[READ] if tools is None else tools).run(provider)
