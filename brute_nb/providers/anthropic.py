"""AnthropicMessages: the Messages API through ``AsyncAnthropic``, streamed with ``messages.create(stream=True)``.

Text deltas go out as ``assistant_delta`` events and thinking as ``reasoning_delta``; the final message is added
up from the raw events (``anthropic_stream.StreamedReply``: what the SDK's ``messages.stream`` helper builds,
without a pydantic snapshot per event) and appended only when it carries a stop reason (a cut stream is an error).
A reply that stops with ``pause_turn`` (a long server-tool turn) is continued at once and joined into one message.
"""

from __future__ import annotations

from typing import Any, ClassVar

from brute_nb.events import emit
from brute_nb.message import Message
from brute_nb.prompt_cache import place_breakpoints
from brute_nb.providers import schema_formats
from brute_nb.providers.anthropic_stream import StreamedReply, schemas_built
from brute_nb.providers.base import Provider, server_tool_entries, server_tool_extras, tool_specs, wrapped
from brute_nb.providers.betas import with_betas
from brute_nb.providers.failures import incomplete
from brute_nb.providers.profiles.anthropic import ANTHROPIC
from brute_nb.transports.anthropic import Anthropic
from brute_nb.transports.base import as_data
from brute_nb.transports.blocks import clean

DEFAULT_MAX_TOKENS = 16_000
"""The seed's example call uses 16,000."""


class AnthropicMessages(Provider):
    """``agent.run(AnthropicMessages("claude-sonnet-5-5"))``."""

    # Every fact about the vendor comes from its profile (providers/profiles/anthropic.py).
    provider = ANTHROPIC.kind
    url_api = ANTHROPIC.attachment_api or "none"
    key_variable = ANTHROPIC.key_variables[0]
    sdk = ANTHROPIC.sdk or ""
    base_url_variable: ClassVar[str | None] = ANTHROPIC.base_url_variable
    home_url = ANTHROPIC.base_url
    native_schema = ANTHROPIC.structured_output is not None

    def __init__(self, model: str, max_tokens: int = DEFAULT_MAX_TOKENS, **options: Any) -> None:
        super().__init__(model, **options)
        self.max_tokens = max_tokens

    def key_variables(self) -> tuple[str, ...]:
        return ANTHROPIC.key_variables  # the SDK reads either

    def _build(self, **options: Any) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**options)

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` / ``messages.stream`` (pure; tests read it)."""
        system, turns, marked = Anthropic.dump_marked(env["messages"])
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": turns,
                                  **self.params}
        if system:
            kwargs["system"] = system
        api = ANTHROPIC.server_tools_api or ""
        tools = [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
                 for s in tool_specs(env.get("tools"))] + server_tool_entries(api, env.get("tools"))
        if tools:  # after the caller's own provider tools (tools=[...] given to the provider), never instead
            kwargs["tools"] = [*(self.params.get("tools") or ()), *tools]
        for key, value in server_tool_extras(api, env.get("tools")).items():  # the MCP connector's servers
            kwargs[key] = [*(self.params.get(key) or ()), *(v for v in value if v not in (self.params.get(key) or ()))]
        if env.get("tool_choice") == "none" and kwargs.get("tools"):
            kwargs["tool_choice"] = {"type": "none"}  # ToolChoiceNoneParam: tools stay listed, none may be called
        if env.get("schema") is not None:
            kwargs[ANTHROPIC.structured_output or "output_config"] = schema_formats.messages_format(env["schema"])
        if self.cache is not False:
            place_breakpoints(kwargs, ANTHROPIC.cache_breakpoints, marked=marked)
        return with_betas(kwargs, dict(ANTHROPIC.betas))  # a beta feature it carries, sent back ones too

    async def _complete(self, env: dict[str, Any]) -> Message:
        kwargs = self.request(env)
        reply = await self._once(env, kwargs)
        for _ in range(MAX_CONTINUATIONS):
            if reply.get("stop_reason") != "pause_turn":
                break
            # A long server-tool turn paused: send what came so far back as the assistant turn, and it goes on.
            sent = [*kwargs["messages"], {"role": "assistant", "content": [clean(b) for b in reply["content"]]}]
            reply = _joined(reply, await self._once(env, {**kwargs, "messages": sent}))
        return wrapped(Anthropic, reply)

    def _create(self, kwargs: dict[str, Any]) -> Any:
        """``messages.create``, or the beta API's when the request carries a beta-only parameter (``betas``,
        ``mcp_servers``...): the SDK sends those only there."""
        if set(kwargs) & beta_only():
            return self.client.beta.messages.create
        return self.client.messages.create

    async def _once(self, env: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        create = self._create(kwargs)
        if not self.stream:
            sent = await create(**kwargs)
            await schemas_built()  # the reply's dump builds the models the warm-up may be building: wait, never race
            data = as_data(sent)  # a local: an HTML page is named from it
            return dict(data)
        reply = StreamedReply()
        stream = await create(**kwargs, stream=True)
        await schemas_built()  # its events build the models the warm-up may be building: wait for it, never race it
        async with stream:
            async for event in stream:
                piece = reply.add(event)
                if piece is not None:
                    emit(env, "assistant_delta" if piece[0] == "text" else "reasoning_delta", {"text": piece[1]})
        final = reply.data()
        if final is None or final.get("stop_reason") is None:
            raise incomplete(self.provider)
        return final


def beta_only() -> frozenset[str]:
    """The parameters only the beta ``messages.create`` of the installed SDK takes (``options.beta_only``)."""
    from brute_nb.providers.options import beta_only as only

    return only(AnthropicMessages.provider)


MAX_CONTINUATIONS = 8
"""How many times a ``pause_turn`` reply is continued before it is kept as it is."""


def _joined(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """One reply from a paused one and its continuation: blocks in order, usage summed, the last stop reason."""
    return {**then, "content": [*first["content"], *then["content"]],
            "usage": _summed(first.get("usage") or {}, then.get("usage") or {})}


def _summed(before: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """Counts added key by key, one level down too (``output_tokens_details.thinking_tokens``); a count only one
    reply reported is the later one's (a dropped part would undercount what was billed)."""
    return {k: v + before[k] if isinstance(v, int) and isinstance(before.get(k), int)
            else _summed(before[k], v) if isinstance(v, dict) and isinstance(before.get(k), dict) else v
            for k, v in then.items()}
