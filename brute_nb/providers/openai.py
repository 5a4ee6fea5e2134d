"""OpenAIChat (Chat Completions, also OpenAI-compatible servers) and OpenAIResponses (the Responses API).

Both stream by default through ``AsyncOpenAI``: text deltas go out as ``assistant_delta`` events and reasoning as
``reasoning_delta`` while the reply is accumulated; the reply is appended only once the stream says it finished.
Compatible-server quirks handled here: usage arrives only with ``stream_options.include_usage`` (asked for),
tool-call ids may be missing (the transport makes stable ones), ``reasoning_content`` streams and goes back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from brute_nb.events import emit
from brute_nb.message import JSON, Message, role_of
from brute_nb.prompt_cache import session_key
from brute_nb.providers import schema_formats
from brute_nb.providers.base import Provider, server_tool_entries, tool_specs, wrapped
from brute_nb.providers.failures import incomplete, stream_error
from brute_nb.providers.profiles.openai import CHAT, RESPONSES
from brute_nb.transports.blocks import Paragraphs, chat_text_part
from brute_nb.transports.openai import OpenAI
from brute_nb.transports.openai_responses import ResponsesItems


def untyped(kwargs: dict[str, Any], key: str) -> dict[str, Any]:
    """``kwargs`` for the SDK's ``create`` with ``kwargs[key]`` (the conversation) handed over as ``extra_body``.

    The OpenAI SDK's ``create`` walks every parameter against its TypedDicts before sending (``_transform``): each
    message is checked against a union of six message types, ~0.3 ms a message here, so every call of a tool loop
    paid for the whole history again (a 41-message request: 13 ms of that walk, more than the call's own work). For
    the messages a transport made it changes nothing: they are the API's JSON already, and these parameter types
    rename no key and format no value. ``extra_body`` is merged into the body untouched, over the same key, which
    keeps its place, so the bytes sent are the same as ``create(**kwargs)`` sends. A caller's own ``extra_body``
    still wins, as it did."""
    extra = kwargs.get("extra_body")
    return {**kwargs, key: [], "extra_body": {key: kwargs[key], **(extra or {})}}


def cache_key(env: dict[str, Any]) -> str:
    """The session's key (``env["cache_key"]``, set by the notebook), else one from the conversation's first
    message: stable across the steps of a conversation and across a replay of it."""
    if env.get("cache_key"):
        return str(env["cache_key"])
    first = next((m for m in env["messages"] if role_of(m) != "system"), None)
    return session_key(getattr(first, "content", ""))


def tools_off(env: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """``env["tool_choice"] == "none"`` (FinalAnswer's last call) as both OpenAI APIs take it: ``tool_choice="none"``,
    sent only with tools (Chat Completions refuses a tool_choice without them)."""
    if env.get("tool_choice") == "none" and kwargs.get("tools"):
        kwargs["tool_choice"] = "none"


class _OpenAIProvider(Provider):
    native_schema = CHAT.structured_output is not None
    # Every fact about the vendor comes from its profiles (providers/profiles/openai.py).
    base_url_variable: ClassVar[str | None] = CHAT.base_url_variable
    home_url: str | None = CHAT.base_url

    @property
    def caching(self) -> bool:
        """Send ``prompt_cache_key`` (compatible servers ignore fields they do not know; ``cache=False`` stops it)."""
        return self.cache is not False


class OpenAIChat(_OpenAIProvider):
    """``agent.run(OpenAIChat("gpt-5.5"))``; ``base_url`` points it at Ollama, vLLM, LM Studio or llama.cpp."""

    provider = CHAT.kind
    url_api = CHAT.attachment_api or "none"
    key_variable = CHAT.key_variables[0]

    def _build(self, **options: Any) -> Any:
        import openai

        return openai.AsyncOpenAI(**options)

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (pure; tests read it)."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": OpenAI.dump_all(env["messages"]), **self.params}
        tools = [{"type": "function", "function": spec} for spec in tool_specs(env.get("tools"))]
        server_tool_entries(self.label.partition(":")[0], env.get("tools"))  # Chat runs none: refused by name
        if tools:  # after the caller's own provider tools (tools=[...] given to the provider), never instead
            kwargs["tools"] = [*(self.params.get("tools") or ()), *tools]
        tools_off(env, kwargs)
        if self.caching:
            kwargs.setdefault(CHAT.cache_key_field or "prompt_cache_key", cache_key(env))
        if env.get("schema") is not None:
            kwargs[CHAT.structured_output or "response_format"] = schema_formats.chat_format(env["schema"])
        if self.stream:
            kwargs["stream"] = True
            kwargs.setdefault("stream_options", {"include_usage": True})
        return kwargs

    async def _complete(self, env: dict[str, Any]) -> Message:
        kwargs = untyped(self.request(env), "messages")
        if not self.stream:
            completion = await self.client.chat.completions.create(**kwargs)
            return wrapped(OpenAI, completion)
        acc = _ChatAccumulator()
        async with await self.client.chat.completions.create(**kwargs) as stream:
            async for chunk in stream:
                text, reasoning = acc.add(chunk)
                if reasoning:
                    emit(env, "reasoning_delta", {"text": reasoning})
                if text:
                    emit(env, "assistant_delta", {"text": text})
        if acc.finish is None:
            raise incomplete(self.provider)
        return wrapped(OpenAI, acc.completion())


class _ChatAccumulator:
    """Folds streamed chunks into one completion dict (tool-call fragments joined by index)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.parts: list[dict[str, Any]] = []  # the content as parts, read when a server sent more than text
        self.more_than_text = False
        self.reasoning: list[str] = []
        self.annotations: list[Any] = []
        self.logprobs: list[Any] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.head: dict[str, JSON] = {}
        self.usage: Any = None

    def add(self, chunk: Any) -> tuple[str, str]:
        self.head.setdefault("id", chunk.id)
        if chunk.model:
            self.head["model"] = chunk.model
        if chunk.usage is not None:
            self.usage = chunk.usage.model_dump(mode="json", warnings=False)
        if not chunk.choices:
            return "", ""
        choice = chunk.choices[0]
        if choice.finish_reason:
            self.finish = choice.finish_reason
        if choice.logprobs is not None and choice.logprobs.content:
            self.logprobs.extend(t.model_dump(mode="json", warnings=False) for t in choice.logprobs.content)
        delta = choice.delta
        text = self._content(delta.content)
        extra = delta.model_extra or {}
        reasoning = str(extra.get("reasoning_content") or extra.get("reasoning") or "")
        self.annotations.extend(extra.get("annotations") or ())  # search models' url citations
        self.reasoning.append(reasoning)
        for frag in delta.tool_calls or ():
            call = self.calls.setdefault(frag.index, {"id": None, "type": "function",
                                                      "function": {"name": "", "arguments": ""}})
            if frag.id:
                call["id"] = frag.id
            if frag.function is not None:
                call["function"]["name"] += frag.function.name or ""
                call["function"]["arguments"] += frag.function.arguments or ""
        return text, reasoning

    def _content(self, content: Any) -> str:
        """A delta's content: a string, or (a compatible server's) a list of parts; returns the text to show. Text
        pieces are joined into one text part between the other parts, which are kept as they came."""
        pieces = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        shown = []
        for part in pieces:
            if not isinstance(part, Mapping):
                continue
            if chat_text_part(part):
                piece = str(part.get("text") or "")
                shown.append(piece)
                if self.parts and self.parts[-1].get("type") == "text":
                    self.parts[-1]["text"] += piece
                elif piece:
                    self.parts.append({"type": "text", "text": piece})
            else:
                self.more_than_text = True
                self.parts.append(dict(part))
        text = "".join(shown)
        self.text.append(text)
        return text

    def completion(self) -> dict[str, JSON]:
        content: JSON = self.parts if self.more_than_text else "".join(self.text)
        message: dict[str, JSON] = {"role": "assistant", "content": content}
        if any(self.reasoning):
            message["reasoning_content"] = "".join(self.reasoning)
        if self.annotations:
            message["annotations"] = self.annotations
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        choice = {"message": message, "finish_reason": self.finish, "logprobs": {"content": self.logprobs}}
        return {**self.head, "choices": [choice], "usage": self.usage}


class OpenAIResponses(_OpenAIProvider):
    """``agent.run(OpenAIResponses("gpt-5.5"))``: the same agent over the Responses API."""

    provider = RESPONSES.stored_as  # one vendor: replies are OpenAI's, priced and keyed as such
    url_api = RESPONSES.attachment_api or "none"
    key_variable = RESPONSES.key_variables[0]

    @property
    def label(self) -> str:
        return f"openai-responses:{self.model}"

    def _build(self, **options: Any) -> Any:
        import openai

        return openai.AsyncOpenAI(**options)

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "input": ResponsesItems.dump_all(env["messages"]),
                                  **self.params}
        tools = [{"type": "function", "strict": False, **spec} for spec in tool_specs(env.get("tools"))]
        tools += server_tool_entries(RESPONSES.server_tools_api or "", env.get("tools"))
        if tools:  # after the caller's own provider tools (tools=[...] given to the provider), never instead
            kwargs["tools"] = [*(self.params.get("tools") or ()), *tools]
        tools_off(env, kwargs)
        if self.caching:
            kwargs.setdefault(RESPONSES.cache_key_field or "prompt_cache_key", cache_key(env))
        if env.get("schema") is not None:
            kwargs[RESPONSES.structured_output or "text"] = schema_formats.responses_format(env["schema"])
        if self.stream:
            kwargs["stream"] = True
        return kwargs

    async def _complete(self, env: dict[str, Any]) -> Message:
        kwargs = untyped(self.request(env), "input")
        if not self.stream:
            return wrapped(ResponsesItems, await self.client.responses.create(**kwargs))
        final, shown = None, Paragraphs()  # a new paragraph after a server tool's item, as the message will have it
        failure: Exception | None = None
        async with await self.client.responses.create(**kwargs) as stream:
            async for event in stream:
                kind = event.type
                if kind == "response.output_text.delta":
                    emit(env, "assistant_delta", {"text": shown.add(event.delta)})
                elif kind == "response.output_item.added" and event.item.type != "message":
                    shown.other()
                elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                    emit(env, "reasoning_delta", {"text": event.delta})
                elif kind in ("response.completed", "response.incomplete"):
                    final = event.response
                elif kind in ("error", "response.failed"):
                    # the reply failed part-way; raised once the stream has ended, since raising here would leave
                    # the SDK's stream generator suspended, for the garbage collector to close on another task
                    failure = failed(self.provider, event)
        if failure is not None:
            raise failure
        if final is None:
            raise incomplete(self.provider)
        return wrapped(ResponsesItems, final)


def failed(provider: str, event: Any) -> Exception:
    """A Responses stream's ``error`` event (code, message and param at its top, as the API documents it) or
    ``response.failed`` event (the response, with its ``error``) as the failure its code stands for. (The same
    error nested in an ``error`` object, as the API has also been seen to send it, the SDK raises itself.)"""
    error = event if event.type == "error" else event.response.error
    if error is None:
        return stream_error(provider, None, None, f"the response failed ({event.response.status})")
    return stream_error(provider, error.code, None, error.message or "", getattr(error, "param", None))
