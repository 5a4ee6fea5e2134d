"""Anthropic Messages transport.

Outbound rules the API enforces, kept here so no handler has to: the system prompt goes in the top-level
``system`` parameter (``system_text``), never in ``messages``; tool calls are ``tool_use`` blocks and tool results
are ``tool_result`` blocks folded into **user** turns (results first, as the API requires); consecutive same-role
turns are merged so roles alternate; the first turn is a user turn; empty or whitespace-only text blocks are
never sent; empty or repeated tool-call ids are renamed (``unique_call_ids``). Thinking
blocks (with their signatures) go back on the assistant turn they came from, as extended thinking requires. A turn
that is one plain text is sent as a string (``plain_content``), as a user writes it by hand.

Inbound: text blocks joined, ``tool_use`` blocks to ToolCalls, thinking, usage (cache reads and writes included)
and the stop reason to ``meta``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.attachments import AttachmentError
from brute_nb.message import JSON, Message, Role, ToolCall, parse_arguments, role_of
from brute_nb.transports import citations
from brute_nb.transports.attachment_blocks import anthropic_blocks, attachments_of
from brute_nb.transports.base import (
    MessageTransport,
    as_data,
    finish_reason,
    response_meta,
    unique_call_ids,
    unreadable,
)

EXPECTED = "a Message with 'content' (as the anthropic SDK returns it)"

CONTINUE_TEXT = "(continue)"
"""The user turn put first when a (compacted) log starts with the assistant: the API requires a user first."""


class Anthropic(MessageTransport):
    """``client.messages.create(system=Anthropic.system_text(log), messages=Anthropic.dump_all(log), ...)``."""

    @staticmethod
    def system_text(messages: Iterable[Any]) -> str | None:
        texts = [m.content for m in messages if role_of(m) == "system" and m.content]
        return "\n\n".join(texts) if texts else None

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> list[JSON]:
        turns: list[dict[str, Any]] = []
        for m in unique_call_ids(messages):
            turn = _plain_turn(m)
            if turn is None:
                turn = cls.dump(m)
                if turn is None or not turn["content"]:
                    continue
            elif not turn["content"].strip():  # the API refuses a whitespace-only text
                continue
            if turns and turns[-1]["role"] == turn["role"]:
                turns[-1]["content"] = [*_blocks(turns[-1]["content"]), *_blocks(turn["content"])]
            else:
                turns.append(turn)
        for turn in turns:
            if turn["role"] == "user" and isinstance(turn["content"], list):
                # tool_result blocks must open the user turn that follows a tool_use turn.
                turn["content"].sort(key=lambda b: b.get("type") != "tool_result")
        if turns and turns[0]["role"] != "user":
            turns.insert(0, {"role": "user", "content": CONTINUE_TEXT})
        for turn in turns:
            turn["content"] = plain_content(turn["content"])
        return list(turns)

    @classmethod
    def dump(cls, message: Any) -> JSON:
        role = role_of(message)
        meta = getattr(message, "meta", None) or {}
        if role == "system":
            return None
        if role == "tool":
            block: dict[str, JSON] = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
            files = attachments_of(message)
            if files:  # a tool that rendered a chart: text and images inside the result
                text = [{"type": "text", "text": message.content}] if message.content.strip() else []
                block["content"] = [*text, *anthropic_blocks(files)]
            elif message.content.strip():
                block["content"] = message.content
            if meta.get("is_error"):
                block["is_error"] = True
            return {"role": "user", "content": _marked([block], meta)}
        content: list[JSON] = []
        if role == "assistant":
            content.extend(thinking_blocks(meta))
            if attachments_of(message):
                raise AttachmentError("an assistant message cannot carry attachments for anthropic; attach files "
                                      "to a user message or a tool result")
        content.extend(anthropic_blocks(attachments_of(message)))  # images before the text, as Anthropic advises
        if message.content.strip():  # the API refuses a whitespace-only text block (a model may reply "\n\n")
            content.append({"type": "text", "text": message.content})
        if role == "assistant":
            for c in message.tool_calls or ():
                call = ToolCall.coerce(c)
                content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
        return {"role": role, "content": _marked(content, meta)}

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        data = as_data(item)
        if not isinstance(data, Mapping):
            raise unreadable("Anthropic", item, EXPECTED, "it is not a mapping or a pydantic model")
        if "content" not in data:
            raise unreadable("Anthropic", item, EXPECTED, f"it has {', '.join(map(repr, sorted(data))) or 'no fields'}")
        return message_from(data)


def _plain_turn(message: Any) -> dict[str, Any] | None:
    """A user or assistant message that is only text, as ``{"role", "content": text}`` (None for any other).

    The common case on a long session, so it skips ``dump``'s blocks: per message, per request."""
    meta: Any
    if message.__class__ is Message:  # the usual case: read the fields directly (runs per message per request)
        if message.tool_calls or message.attachments:
            return None
        role, meta = message.role._value_, message.meta
    else:
        role = role_of(message)
        if getattr(message, "tool_calls", None) or getattr(message, "attachments", None):
            return None
        meta = getattr(message, "meta", None)
    if role != "user" and role != "assistant":
        return None
    if meta and ("thinking_blocks" in meta or "cache_until_here" in meta):
        return None
    return {"role": role, "content": message.content}


def _blocks(content: JSON) -> list[JSON]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def plain_content(blocks: list[JSON]) -> JSON:
    """A turn that is one plain text block goes as its string, as a user would write it: the SDK copies and
    serialises about half the structure. Blocks that carry anything else (a cache breakpoint, a tool call or
    result, an image, thinking, or several texts) stay a list."""
    if len(blocks) == 1:
        block = blocks[0]
        if isinstance(block, dict) and block.keys() == {"type", "text"} and block["type"] == "text":
            return block["text"]
    return blocks


def _marked(content: list[JSON], meta: Mapping[str, Any]) -> list[JSON]:
    """A message marked ``cache_until_here`` ends in a cache breakpoint (the provider keeps the API's limit)."""
    if meta.get("cache_until_here") and content:
        content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}
    return content


def thinking_blocks(meta: Mapping[str, Any]) -> list[JSON]:
    blocks: list[JSON] = []
    for b in meta.get("thinking_blocks") or ():
        if b.get("type") == "redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": b.get("data", "")})
        elif b.get("signature"):
            blocks.append({"type": "thinking", "thinking": b.get("thinking", ""), "signature": b["signature"]})
    return blocks


def message_from(data: Mapping[str, Any]) -> Message:
    content = data.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, JSON]] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(ToolCall(id=block.get("id") or "", name=block.get("name") or "",
                                  arguments=parse_arguments(block.get("input"))))
        elif kind == "thinking":
            thinking.append({"type": "thinking", "thinking": block.get("thinking") or "",
                             "signature": block.get("signature") or ""})
        elif kind == "redacted_thinking":
            thinking.append({"type": "redacted_thinking", "data": block.get("data") or ""})
        elif kind == "server_tool_use" or str(kind).endswith("_tool_result"):
            continue  # a tool the provider ran itself: read below, into meta["server_tool_calls"]
        else:
            raise TypeError(f"Anthropic transport cannot read a {kind!r} content block; it reads text, tool_use, "
                            "thinking, redacted_thinking and server tool blocks")
    meta = message_meta(data)
    blocks = [b for b in content or [] if isinstance(b, Mapping)]
    citations.add_to(meta, citations.anthropic_citations(blocks), citations.anthropic_server_calls(blocks))
    if thinking:
        meta["thinking"] = "\n\n".join(str(b["thinking"]) for b in thinking if b["type"] == "thinking")
        meta["thinking_blocks"] = thinking
    return Message(data.get("role") or Role.ASSISTANT, "".join(texts), tool_calls=calls or None, meta=meta)


def message_meta(data: Mapping[str, Any]) -> dict[str, JSON]:
    usage = data.get("usage") or {}
    meta = response_meta(
        data,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cached_tokens=usage.get("cache_read_input_tokens"),
        cache_write_tokens=usage.get("cache_creation_input_tokens"),
    )
    reason = finish_reason(data.get("stop_reason"))
    if reason is not None:
        meta["finish_reason"] = reason
        meta["stop_reason"] = data["stop_reason"]
    return meta
