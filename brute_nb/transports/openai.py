"""OpenAI Chat Completions transport (also OpenAI-compatible servers: Ollama, vLLM, LM Studio, llama.cpp).

Outbound: tool-call arguments are re-encoded as JSON strings (the raw text when the model sent invalid JSON),
a tool-call-only assistant turn has ``content: null``, tool results are ``tool`` messages, and content is always a
plain string (some compatible servers accept nothing else), a reply that came as parts holding more than text too:
this transport serves many servers and cannot tell which one sent them, and a part one server sent another refuses.
``reasoning_content`` is passed back only when a server sent it (DeepSeek-style servers require it; OpenAI never
sends it).

Inbound: a ChatCompletion, a choice, a ChatCompletionMessage, an accumulated stream, or plain dicts of any of these.
Content sent as a list of parts is read for its text; parts of other kinds (Mistral's thinking chunks, a kind added
since) never fail the reply the server billed: they are kept as received in ``meta["blocks"]`` (the session file
keeps them) and named as provider blocks. Arguments are parsed to a dict (never raising); missing tool-call ids get
a deterministic one so replayed sessions match; model, usage and finish_reason go to ``meta``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.attachments import AttachmentError
from brute_nb.message import INVALID_ARGUMENTS_KEY, JSON, Message, Role, ToolCall, dumps, parse_arguments, role_of
from brute_nb.prefix_memo import keep, resume
from brute_nb.sendable import history
from brute_nb.transports import blocks as reply_blocks
from brute_nb.transports import citations
from brute_nb.transports.attachment_blocks import attachments_of, chat_parts
from brute_nb.transports.base import (
    MessageTransport,
    as_data,
    finish_reason,
    logprobs,
    response_meta,
    unreadable,
)

EXPECTED = "a ChatCompletion, a choice, or a message with 'content' or 'tool_calls' (as the openai SDK returns them)"


def encode_arguments(call: ToolCall) -> str:
    """The JSON string a provider expects; invalid arguments go back exactly as the model sent them."""
    if not call.arguments_valid and set(call.arguments) == {INVALID_ARGUMENTS_KEY}:
        return str(call.arguments[INVALID_ARGUMENTS_KEY])
    return dumps(call.arguments)


def synthetic_id(prefix: str, *parts: object) -> str:
    """A stable id for a server that sent none (stable so a replayed cassette still matches)."""
    digest = hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{prefix}{digest}"


def text_of(content: object) -> str:
    """Message content as text: a string, or the text of a list of parts (``blocks.chat_text``; a part of another
    kind is kept whole by ``message_from``, not read)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return reply_blocks.chat_text(content)
    raise TypeError(f"OpenAI transport cannot read content of type {type(content).__name__}: expected a string "
                    "or a list of parts")


class OpenAI(MessageTransport):
    """``client.chat.completions.create(messages=OpenAI.dump_all(log), ...)``."""

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> list[JSON]:
        """As the base, except that files tool results returned follow them in a user message: a Chat ``tool``
        message holds text only.

        On a ``Log`` it is O(new messages): what earlier calls made of the body (``prefix_memo.resume``) is kept
        and shared between requests (appending never changes a message already dumped): read it, never change it.
        The leading system messages are dumped each call, so a turn's system prompt put first costs nothing more.
        """
        sent = history(messages)
        lead, at, kept = resume(sent, "openai")
        done, pending = kept if kept is not None else ([], [])
        pending = list(pending)
        for m in sent[at:] if at else sent:
            if pending and role_of(m) != "tool":
                done.append(_tool_files_message(pending))
                pending = []
            done.append(cls.dump(m))
            if role_of(m) == "tool":
                pending += chat_parts(attachments_of(m))
        keep(sent, "openai", lead, (done, pending))
        head = [cls.dump(sent[i]) for i in range(lead)]
        return [*head, *done, _tool_files_message(pending)] if pending else [*head, *done]

    @classmethod
    def dump(cls, message: Any) -> JSON:
        role = role_of(message)
        if role == "tool":
            return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content or ""}
        out: dict[str, JSON] = {"role": role, "content": message.content or ""}
        files = attachments_of(message)
        if files:
            if role != "user":
                raise AttachmentError(f"openai takes attachments only in user messages, not {role} messages")
            text = [{"type": "text", "text": message.content}] if message.content else []
            out["content"] = [*text, *chat_parts(files)]
        if role == "assistant":
            calls = message.tool_calls or ()
            if calls:
                out["content"] = message.content or None
                out["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": encode_arguments(c)}}
                    for c in (ToolCall.coerce(c) for c in calls)
                ]
            reasoning = (getattr(message, "meta", None) or {}).get("reasoning_content")
            if reasoning:
                out["reasoning_content"] = reasoning
        return out

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        data = as_data(item)
        if not isinstance(data, Mapping):
            raise unreadable("OpenAI", item, EXPECTED, "it is not a mapping or a pydantic model")
        if not {"choices", "message", "delta", "content", "tool_calls"} & set(data):
            raise unreadable("OpenAI", item, EXPECTED, f"it has {', '.join(map(repr, sorted(data))) or 'no fields'}")
        meta: dict[str, JSON] = {}
        if "choices" in data:
            meta.update(completion_meta(data))
            choices = data.get("choices") or []
            if not choices:
                return Message(Role.ASSISTANT, "", meta=meta)
            data = choices[0]
        if "message" in data or "delta" in data:
            reason = finish_reason(data.get("finish_reason"))
            if reason is not None:
                meta["finish_reason"] = reason
            tokens = logprobs((data.get("logprobs") or {}).get("content"))
            if tokens:
                meta["logprobs"] = tokens
            data = data.get("message") or data.get("delta") or {}
        return message_from(data, meta)


def _tool_files_message(parts: list[JSON]) -> JSON:
    return {"role": "user", "content": [{"type": "text", "text": "Files returned by the tool calls above:"}, *parts]}


def completion_meta(data: Mapping[str, Any]) -> dict[str, JSON]:
    usage = data.get("usage") or {}
    return response_meta(
        data,
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
        cache_read_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
        reasoning_tokens=(usage.get("completion_tokens_details") or {}).get("reasoning_tokens"),
    )


def message_from(data: Mapping[str, Any], meta: dict[str, JSON]) -> Message:
    role = data.get("role") or "assistant"
    if data.get("function_call"):
        raise TypeError("OpenAI transport cannot read a legacy 'function_call' message; expected 'tool_calls'")
    parts = data.get("content")
    content = text_of(parts) or str(data.get("refusal") or "")
    reasoning = data.get("reasoning_content") or data.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        meta["reasoning_content"] = reasoning
    if role == "tool":
        return Message(Role.TOOL, content, tool_call_id=data.get("tool_call_id"), meta=meta)
    citations.add_to(meta, citations.chat_citations(data), [])
    calls = []
    for index, raw in enumerate(data.get("tool_calls") or []):
        fn = raw.get("function") or {}
        arguments = fn.get("arguments")
        call_id = raw.get("id") or synthetic_id("call_", meta.get("response_id"), index, fn.get("name"), arguments)
        calls.append(ToolCall(id=call_id, name=fn.get("name") or "", arguments=parse_arguments(arguments)))
    if isinstance(parts, list) and not all(reply_blocks.chat_text_part(p) for p in parts):
        keep_parts(meta, [p for p in parts if isinstance(p, Mapping)])
    return Message(role, content, tool_calls=calls or None, meta=meta)


def keep_parts(meta: dict[str, JSON], parts: list[Mapping[str, Any]]) -> None:
    """Content parts a compatible server sent beside its text (Mistral's thinking chunks, a kind added since): kept
    as received in the log (never sent: see the module's docstring), each kind the reader does not know named as a
    provider block; the server billed the reply, so a part brute_nb cannot read never fails it."""
    reply_blocks.note_unknown(meta, [str(p.get("type")) for p in parts
                                     if not reply_blocks.chat_text_part(p) and p.get("type") != "refusal"])
    meta[reply_blocks.KEY] = {"openai_chat": [reply_blocks.clean(p) for p in parts]}
