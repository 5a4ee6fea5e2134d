"""any-llm transport: mozilla-ai's one OpenAI-shaped completion API over many providers.

``any_llm.completion(model="mistral:...", messages=AnyLLM.dump_all(log), tools=...)`` takes Chat Completions
message dicts whatever the provider, so outbound is the OpenAI transport's, plus what any-llm adds: a tool call's
provider-native ``extra_content`` (Gemini's thought signatures) goes back on the call it came with. Inbound, an
any-llm ``ChatCompletion`` differs from OpenAI's in two places this transport absorbs: reasoning is an object
(``message.reasoning.content``), kept in ``meta["reasoning_content"]``, and each tool call may carry
``extra_content``, kept in ``meta["tool_call_extras"]`` by call id. A streamed reply is a list of chunks; fold it
with ``any_llm``'s own helpers or ask for ``stream=False``: a lone chunk is refused, not read as a whole reply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.message import JSON, Message, role_of
from brute_nb.transports.base import as_data
from brute_nb.transports.openai import OpenAI

NAME = "AnyLLM"


class AnyLLM(OpenAI):
    """``any_llm.completion(model, messages=AnyLLM.dump_all(log))``; ``AnyLLM.wrap_one(completion)``."""

    @classmethod
    def dump(cls, message: Any) -> JSON:
        out = super().dump(message)
        extras = (getattr(message, "meta", None) or {}).get("tool_call_extras") or {}
        if role_of(message) == "assistant" and extras:
            for call in out.get("tool_calls") or ():
                if call["id"] in extras:
                    call["extra_content"] = extras[call["id"]]
        return out

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        data = as_data(item)
        if not isinstance(data, Mapping):
            raise TypeError(f"{NAME} transport cannot read {type(item).__name__}: expected an any-llm ChatCompletion "
                            "or message")
        if data.get("object") == "chat.completion.chunk":
            raise TypeError(f"{NAME} transport reads whole completions, not stream chunks: call completion with "
                            "stream=False or fold the chunks first")
        choices = data.get("choices")
        if choices:
            data = {**data, "choices": [{**choices[0], "message": _openai_shaped(choices[0].get("message") or {})}]}
        elif "role" in data:
            data = _openai_shaped(data)
        wrapped = super()._wrap(data)
        message = wrapped if isinstance(wrapped, Message) else next(iter(wrapped))
        extras = _extras(choices[0].get("message") or {} if choices else data)
        return message.with_meta(tool_call_extras=extras) if extras else message


def _openai_shaped(message: Mapping[str, Any]) -> dict[str, Any]:
    """any-llm's message with reasoning as the plain ``reasoning_content`` text the OpenAI transport keeps."""
    out = dict(message)
    reasoning = out.pop("reasoning", None)
    if isinstance(reasoning, Mapping) and reasoning.get("content"):
        out["reasoning_content"] = str(reasoning["content"])
    elif isinstance(reasoning, str) and reasoning:
        out["reasoning_content"] = reasoning
    return out


def _extras(message: Mapping[str, Any]) -> dict[str, JSON]:
    return {str(c.get("id")): c["extra_content"] for c in message.get("tool_calls") or ()
            if isinstance(c, Mapping) and c.get("extra_content")}
