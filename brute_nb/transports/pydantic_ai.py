"""pydantic-ai transport: the Brute log as pydantic-ai's message history (``ModelRequest`` / ``ModelResponse``).

So a brute_nb session can be handed to a pydantic-ai agent (``agent.run(..., message_history=PydanticAI.dump_all(
log))``) and its ``result.all_messages()`` folded back (``PydanticAI.wrap_each(messages)``) without loss.

Outbound: consecutive system, user and tool messages share one ``ModelRequest`` (as pydantic-ai builds them:
``SystemPromptPart``, ``UserPromptPart``, ``ToolReturnPart``); each assistant message is one ``ModelResponse``
of a ``TextPart`` and its ``ToolCallPart``s. A tool result is named after the call it answers (``tool_names``).

Inbound: one Brute message per request part and one per response, so ``wrap_each(dump_all(log))`` gives the
log back (role, content, calls, ids, results). What a text log cannot hold (images or files in a prompt,
provider-run tool calls, files the model made) is refused with a TypeError, never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from brute_nb.message import JSON, Message, Role, ToolCall, parse_arguments, role_of
from brute_nb.sendable import history
from brute_nb.transports.base import MessageTransport, finish_reason, response_meta
from brute_nb.transports.tool_names import call_names, cannot_carry, tool_name

NAME = "PydanticAI"


class PydanticAI(MessageTransport):
    """``agent.run(prompt, message_history=PydanticAI.dump_all(log))``, then ``wrap_each(result.new_messages())``."""

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> list[JSON]:
        from pydantic_ai.messages import ModelRequest

        log = history(messages)
        names = call_names(log)
        out: list[Any] = []
        for m in log:
            item = _dump(m, names)
            if isinstance(item, ModelRequest) and out and isinstance(out[-1], ModelRequest):
                out[-1] = ModelRequest(parts=[*out[-1].parts, *item.parts])
            else:
                out.append(item)
        return out

    @classmethod
    def dump(cls, message: Any) -> JSON:
        return _dump(message, {})

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        from pydantic_ai.messages import ModelRequest, ModelResponse

        if isinstance(item, ModelRequest):
            return _request_messages(item)
        if isinstance(item, ModelResponse):
            return _response_message(item)
        raise TypeError(f"{NAME} transport cannot read {type(item).__name__}: expected a ModelRequest or "
                        "ModelResponse (a pydantic-ai message history)")


def _dump(message: Any, names: dict[str, str]) -> Any:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    role = role_of(message)
    files = getattr(message, "attachments", None)
    if files:  # never sent without them: the model would answer about a file it did not see
        raise cannot_carry(NAME, f"attachments ({', '.join(a.label for a in files)})")
    content = message.content or ""
    if role == "system":
        return ModelRequest(parts=[SystemPromptPart(content)])
    if role == "user":
        return ModelRequest(parts=[UserPromptPart(content)])
    if role == "tool":
        meta = getattr(message, "meta", None) or {}
        return ModelRequest(parts=[ToolReturnPart(
            tool_name=tool_name(NAME, message, names), content=content, tool_call_id=message.tool_call_id or "",
            outcome="failed" if meta.get("is_error") else "success")])
    parts: list[Any] = [TextPart(content)] if content else []
    for c in message.tool_calls or ():
        call = ToolCall.coerce(c)
        parts.append(ToolCallPart(tool_name=call.name, args=call.arguments, tool_call_id=call.id))
    return ModelResponse(parts=parts)


def _request_messages(request: Any) -> list[Message]:
    from pydantic_ai.messages import (
        RetryFeedbackPart,
        RetryPromptPart,
        SystemPromptPart,
        ToolReturnPart,
        UserPromptPart,
    )

    out: list[Message] = []
    if request.instructions:
        # Instructions are pydantic-ai's per-request system prompt; in a Brute log that is a system message.
        out.append(Message(Role.SYSTEM, request.instructions, meta={"instructions": True}))
    for part in request.parts:
        if isinstance(part, SystemPromptPart):
            out.append(Message(Role.SYSTEM, part.content))
        elif isinstance(part, UserPromptPart):
            if not isinstance(part.content, str):
                raise cannot_carry(NAME, "a user prompt with images, audio or files")
            out.append(Message(Role.USER, part.content))
        elif isinstance(part, ToolReturnPart):
            text = part.content if isinstance(part.content, str) else part.model_response_str()
            meta: dict[str, JSON] = {"tool_name": part.tool_name}
            if part.outcome != "success":
                meta["is_error"] = True
            out.append(Message(Role.TOOL, text, tool_call_id=part.tool_call_id, meta=meta))
        elif isinstance(part, RetryFeedbackPart):
            out.append(Message(Role.USER, part.model_response(), meta={"retry": True}))
        elif isinstance(part, RetryPromptPart):  # pydantic-ai 1.x histories (deprecated there since)
            # A retry is pydantic-ai's error result for a call (or, with no tool, a note to the model).
            text = part.model_response()
            if part.tool_name is None:
                out.append(Message(Role.USER, text))
            else:
                out.append(Message(Role.TOOL, text, tool_call_id=part.tool_call_id,
                                   meta={"tool_name": part.tool_name, "is_error": True}))
        else:
            raise cannot_carry(NAME, f"a {getattr(part, 'part_kind', type(part).__name__)!r} request part")
    return out


def _response_message(response: Any) -> Message:
    from pydantic_ai.messages import TextPart, ThinkingPart, ToolCallPart

    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ThinkingPart):
            thinking.append(part.content)
        elif type(part) is ToolCallPart:  # a NativeToolCallPart ran on the provider's side: no result to carry
            arguments = part.args if isinstance(part.args, dict) else parse_arguments(part.args)
            calls.append(ToolCall(id=part.tool_call_id, name=part.tool_name, arguments=arguments))
        else:
            raise cannot_carry(NAME, f"a {getattr(part, 'part_kind', type(part).__name__)!r} response part")
    usage = response.usage
    meta = response_meta({"model": response.model_name, "id": response.provider_response_id},
                         input_tokens=usage.input_tokens or None, output_tokens=usage.output_tokens or None,
                         cache_read_tokens=usage.cache_read_tokens or None,
                         cache_write_tokens=usage.cache_write_tokens or None)  # RequestUsage: input includes both
    # pydantic-ai says "tool_call" where the shared vocabulary says "tool_calls".
    reason = finish_reason("tool_calls" if response.finish_reason == "tool_call" else response.finish_reason)
    if reason is not None:
        meta["finish_reason"] = reason
    if thinking:
        meta["thinking"] = "\n\n".join(thinking)
    return Message(Role.ASSISTANT, "".join(texts), tool_calls=calls or None, meta=meta)

