"""Anthropic Messages transport.

Outbound rules the API enforces, kept here so no handler has to: the system prompt goes in the top-level
``system`` parameter (``system_text``), never in ``messages``; tool calls are ``tool_use`` blocks and tool results
are ``tool_result`` blocks folded into **user** turns (results first, as the API requires); consecutive same-role
turns are merged so roles alternate; the first turn is a user turn; empty or whitespace-only text blocks are
never sent; what is sent is ``brute_nb.sendable``'s history (ids renamed, calls and results paired). Thinking
blocks (with their signatures) go back on the assistant turn they came from, as extended thinking requires.
A turn that is one plain text goes as a string (``content: "..."``), which the API reads as that one text block:
the SDK copies and serialises half the structure on every turn of a long log. A turn keeps its block list when a
block carries something a string cannot (tool use or results, thinking, attachments, a cache mark). Every model
call sends the whole log, so ``dump_request`` makes the request in one pass, the plain text message inline; it
gives exactly what the general per-message builder (``_turn``) gives (tests/transports/test_fast_paths.py).

Inbound: text blocks joined, ``tool_use`` blocks to ToolCalls, thinking, usage (cache reads and writes included)
and the stop reason to ``meta``. A reply that its text and calls cannot rebuild (server tool blocks, several text
blocks, citations, a block of a kind this module does not know) keeps its blocks (``transports.blocks``), and the
assistant turn goes back as those blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from brute_nb.attachments import AttachmentError
from brute_nb.message import JSON, Message, Role, ToolCall, parse_arguments, role_of
from brute_nb.prefix_memo import keep, resume
from brute_nb.prompt_cache import MARK
from brute_nb.sendable import history
from brute_nb.transports import blocks as reply_blocks
from brute_nb.transports import citations
from brute_nb.transports.attachment_blocks import anthropic_blocks, attachments_of
from brute_nb.transports.base import (
    MessageTransport,
    as_data,
    finish_reason,
    response_meta,
    unreadable,
)

EXPECTED = "a Message with 'content' (as the anthropic SDK returns it)"

CONTINUE_TEXT = "(continue)"
"""The user turn put first when a (compacted) log starts with the assistant: the API requires a user first."""
EMPTY_REPLY_TEXT = "(empty reply)"
"""An empty assistant reply is kept as its own turn (merging the user turns around it would change what the
model was told); the API refuses an empty turn other than the last, so it is sent holding these words."""


class Anthropic(MessageTransport):
    """``client.messages.create(system=Anthropic.system_text(log), messages=Anthropic.dump_all(log), ...)``."""

    @staticmethod
    def system_text(messages: Iterable[Any]) -> str | None:
        texts = [m.content for m in messages if role_of(m) == "system" and m.content]
        return "\n\n".join(texts) if texts else None

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> list[JSON]:
        return cls.dump_request(messages)[1]

    @classmethod
    def dump_request(cls, messages: Iterable[Any]) -> tuple[str | None, list[dict[str, Any]]]:
        """``(system_text(messages), dump_all(messages))`` in one pass over the log."""
        system, turns, _ = cls.dump_marked(messages)
        return system, turns

    @classmethod
    def dump_marked(cls, messages: Iterable[Any]) -> tuple[str | None, list[dict[str, Any]], list[int]]:
        """``dump_request`` and the turns holding a user's cache mark (``place_breakpoints(marked=...)``).

        Every model call sends the whole log, so this is the per-message cost of a long session. On a ``Log`` it
        is O(new messages): the turns made of the body for earlier calls are kept (``prefix_memo.resume``; appending
        never changes a turn but the last, which a same-role message may still extend), and only messages added
        since are turned into turns; the leading system messages (a turn's system prompt, put first each turn)
        are read each call. The turns are shared between requests: read them, never change them
        (``place_breakpoints`` copies the few it marks). Elsewhere, the common message (a plain user or
        assistant text) is turned into its string turn inline, without the block builders or any call.
        """
        sent = history(messages)
        lead, at, kept = resume(sent, "anthropic")
        state: _Dumped = kept if kept is not None else _Dumped()
        systems, done, marked = list(state.systems), state.done, state.marked
        open_turn = state.last
        turns: list[dict[str, Any]] = [] if open_turn is None else [
            {"role": open_turn["role"], "content": _copied(open_turn["content"])}]
        cls._add_turns(sent[at:] if at else sent, systems, turns)
        for turn in turns[:-1]:  # every turn but the last is final: no later message changes it
            if _has_mark(turn):
                marked = [*marked, len(done)]
            done.append(_finished(turn))
        last = turns[-1] if turns else None
        keep(sent, "anthropic", lead, _Dumped(tuple(systems), done, marked, last))
        if lead:
            head: list[str] = []
            cls._add_turns((sent[i] for i in range(lead)), head, [])  # system messages: texts, never a turn
            systems = [*head, *systems]
        out = list(done)
        if last is not None and last["content"]:  # an empty reply last would be a prefill: left out
            if _has_mark(last):
                marked = [*marked, len(out)]
            out.append(_finished({"role": last["role"], "content": _copied(last["content"])}))
        if out and out[0]["role"] != "user":
            out.insert(0, {"role": "user", "content": CONTINUE_TEXT})
            marked = [i + 1 for i in marked]
        return ("\n\n".join(systems) if systems else None), out, marked

    @classmethod
    def _add_turns(cls, messages: Iterable[Any], systems: list[str], turns: list[dict[str, Any]]) -> None:
        """Messages onto the raw turns (content a string or a block list, same roles merged, nothing final yet)."""
        user, assistant, system = Role.USER, Role.ASSISTANT, Role.SYSTEM
        for m in messages:
            if m.__class__ is Message and not (m.tool_calls or m.tool_call_id is not None):
                role = m.role
                if role is system:
                    if m.content:
                        systems.append(m.content)
                    continue
                meta = m.meta
                if ((role is user or role is assistant) and not m.attachments
                        and (not meta or not (meta.get("thinking_blocks") or meta.get("cache_until_here")
                                              or meta.get(reply_blocks.KEY)))):
                    text = m.content
                    if text and not text.isspace():  # the API refuses a whitespace-only text block
                        if turns and turns[-1]["role"] == role._value_:
                            _blocks(turns[-1]).append({"type": "text", "text": text})
                        else:
                            turns.append({"role": role._value_, "content": text})
                    elif role is assistant and (not turns or turns[-1]["role"] != "assistant"):
                        turns.append({"role": "assistant", "content": []})  # an empty reply: its own turn
                    continue
            if role_of(m) == "system":
                if m.content:
                    systems.append(m.content)
                continue
            turn = cls._turn(m)
            if turn is None or (not turn["content"] and turn["role"] != "assistant"):
                continue
            if turns and turns[-1]["role"] == turn["role"]:
                _blocks(turns[-1]).extend(turn["content"])
            else:
                turns.append(turn)

    @classmethod
    def dump(cls, message: Any) -> JSON:
        turn = cls._turn(message)
        return None if turn is None else _plain(turn)

    @classmethod
    def _turn(cls, message: Any) -> dict[str, Any] | None:
        """The message as a turn whose content is always a block list (``dump_all`` merges turns by extending it)."""
        role = role_of(message)
        meta = getattr(message, "meta", None) or {}
        if role == "system":
            return None
        if (role in ("user", "assistant") and not getattr(message, "tool_calls", None)
                and not getattr(message, "attachments", None) and not meta.get("thinking_blocks")
                and not meta.get("cache_until_here") and not meta.get(reply_blocks.KEY)):  # one text: no builders
            text = message.content
            return {"role": role, "content": [{"type": "text", "text": text}] if text and not text.isspace() else []}
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
        kept = reply_blocks.stored(message, "anthropic") if role == "assistant" else None
        if kept is not None:  # the reply's own blocks, in order (server tools, citations, interleaved text)
            return {"role": role, "content": _marked([b for b in kept if not _blank(b)], meta)}
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


@dataclass(frozen=True)
class _Dumped:
    """``dump_marked``'s work on a log's body so far: the system texts, the final turns (as sent), the final turns
    holding a user's cache mark, and the last turn, raw (a next message of its role extends it)."""

    systems: tuple[str, ...] = ()
    done: list[dict[str, Any]] = field(default_factory=list)
    marked: list[int] = field(default_factory=list)
    last: dict[str, Any] | None = None


def _copied(content: Any) -> Any:
    """A raw turn's content that merging and finishing may change: a block list copied (its blocks are not)."""
    return list(content) if content.__class__ is list else content


def _finished(turn: dict[str, Any]) -> dict[str, Any]:
    """A final turn as sent: an empty reply holds words, tool results open a user turn, one text is a string."""
    content = turn["content"]
    if not content:
        turn["content"] = EMPTY_REPLY_TEXT
    elif content.__class__ is list:
        if turn["role"] == "user":
            # tool_result blocks must open the user turn that follows a tool_use turn.
            content.sort(key=lambda b: b.get("type") != "tool_result")
        _plain(turn)
    return turn


def _has_mark(turn: dict[str, Any]) -> bool:
    content = turn["content"]
    return content.__class__ is list and any(isinstance(b, dict) and MARK in b for b in content)


def _blank(block: Mapping[str, Any]) -> bool:
    """A text block the API refuses to be sent (empty or whitespace only), though a model may reply with one."""
    return block.get("type") == "text" and not str(block.get("text") or "").strip()


def _blocks(turn: dict[str, Any]) -> list[JSON]:
    """A turn's content as a block list (a string turn becomes its one text block), to merge a next turn into."""
    content = turn["content"]
    if content.__class__ is str:
        content = turn["content"] = [{"type": "text", "text": content}]
    blocks: list[JSON] = content
    return blocks


def _plain(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn that is a single bare text block sent as its string: the API reads the two alike."""
    content = turn["content"]
    if len(content) == 1 and content[0].get("type") == "text" and len(content[0]) == 2:
        turn["content"] = content[0]["text"]
    return turn


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
    calls: list[ToolCall] = []
    thinking: list[dict[str, JSON]] = []
    unknown: list[str] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            continue  # read whole below, where a server tool's blocks between two texts make two paragraphs
        if kind == "tool_use":
            calls.append(ToolCall(id=block.get("id") or "", name=block.get("name") or "",
                                  arguments=parse_arguments(block.get("input"))))
        elif kind == "thinking":
            thinking.append({"type": "thinking", "thinking": block.get("thinking") or "",
                             "signature": block.get("signature") or ""})
        elif kind == "redacted_thinking":
            thinking.append({"type": "redacted_thinking", "data": block.get("data") or ""})
        elif kind not in KEPT_WHOLE and not str(kind).endswith("_tool_result"):
            unknown.append(str(kind))  # a kind the API added since: nothing to read, kept whole below
    meta = message_meta(data)
    blocks = [b for b in content or [] if isinstance(b, Mapping)]
    reply_blocks.note_unknown(meta, unknown)
    citations.add_to(meta, citations.anthropic_citations(blocks), citations.anthropic_server_calls(blocks))
    if thinking:
        meta["thinking"] = "\n\n".join(str(b["thinking"]) for b in thinking if b["type"] == "thinking")
        meta["thinking_blocks"] = thinking
    text = reply_blocks.joined_text(b for b in content or [] if isinstance(b, Mapping))
    message = Message(data.get("role") or Role.ASSISTANT, text, tool_calls=calls or None, meta=meta)
    rebuilt = Anthropic._turn(message)
    reply_blocks.keep(meta, "anthropic", blocks, rebuilt["content"] if rebuilt else [])
    return message.replace(meta=meta) if reply_blocks.KEY in meta else message


KEPT_WHOLE = frozenset({"server_tool_use", "mcp_tool_use", "container_upload"})
"""Blocks with nothing for a Message's text or calls, kept only in ``meta["blocks"]`` (and read for the views).
Any other kind (``compaction``, one the API adds next) is kept the same way, and named in ``meta`` as a provider
block the views show as one quiet row: the API billed the turn, so a kind brute_nb cannot read never fails it."""


def message_meta(data: Mapping[str, Any]) -> dict[str, JSON]:
    usage = data.get("usage") or {}
    meta = response_meta(
        data,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_tokens=usage.get("cache_read_input_tokens"),
        cache_write_tokens=usage.get("cache_creation_input_tokens"),
        reasoning_tokens=(usage.get("output_tokens_details") or {}).get("thinking_tokens"),
        input_includes_cache=False,  # Messages API: input_tokens counts only what came after the last cache hit
    )
    reason = finish_reason(data.get("stop_reason"))
    if reason is not None:
        meta["finish_reason"] = reason
        meta["stop_reason"] = data["stop_reason"]
    return meta
