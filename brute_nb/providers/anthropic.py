"""AnthropicMessages: the Messages API through ``AsyncAnthropic``, streamed with the SDK's ``messages.stream``.

Text deltas go out as ``assistant_delta`` events and thinking as ``reasoning_delta``; the final message is taken
from the SDK's own accumulator and appended only when it carries a stop reason (a cut stream is an error).
"""

from __future__ import annotations

from typing import Any

from brute_nb import structured
from brute_nb.events import emit
from brute_nb.message import Message
from brute_nb.providers.base import Provider, incomplete, tool_specs
from brute_nb.transports.anthropic import Anthropic

DEFAULT_MAX_TOKENS = 16_000
"""The seed's example call uses 16,000."""


class AnthropicMessages(Provider):
    """``agent.run(AnthropicMessages("claude-sonnet-4-20250514"))``."""

    provider = "anthropic"
    key_variable = "ANTHROPIC_API_KEY"

    def __init__(self, model: str, max_tokens: int = DEFAULT_MAX_TOKENS, **options: Any) -> None:
        super().__init__(model, **options)
        self.max_tokens = max_tokens

    def _build(self, **options: Any) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**options)

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` / ``messages.stream`` (pure; tests read it)."""
        messages = env["messages"]
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                  "messages": Anthropic.dump_all(messages), **self.params}
        system = Anthropic.system_text(messages)
        if system:
            kwargs["system"] = system
        tools = [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
                 for s in tool_specs(env.get("tools"))]
        if tools:
            kwargs["tools"] = tools
        if env.get("schema") is not None:
            kwargs["output_config"] = structured.anthropic_format(env["schema"])
        return kwargs

    async def _complete(self, env: dict[str, Any]) -> Message:
        kwargs = self.request(env)
        if not self.stream:
            return Anthropic.wrap_one(await self.client.messages.create(**kwargs))
        async with self.client.messages.stream(**kwargs) as stream:
            async for event in stream:
                if event.type == "text":
                    emit(env, "assistant_delta", {"text": event.text})
                elif event.type == "thinking":
                    emit(env, "reasoning_delta", {"text": event.thinking})
            final = await stream.get_final_message()
        if final.stop_reason is None:
            raise incomplete(self.provider)
        return Anthropic.wrap_one(final)
