"""OpenAI Responses API transport: the log as ``message``, ``function_call`` and ``function_call_output`` items.

One Brute message can become several items (an assistant turn with text and two calls is one message item and
two function_call items), so ``dump`` returns a list and ``dump_all`` flattens. Inbound, one Response (object or
dict, streamed or not) becomes one assistant Message: output_text parts joined, function calls parsed without
raising, reasoning summaries and usage in ``meta``. A reply with more than one message and its calls (reasoning,
a server tool's call, annotations, an item or a message part of a kind this module does not know) keeps its
output items (``transports.blocks``), and goes back as those items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.attachments import AttachmentError
from brute_nb.message import JSON, Message, Role, ToolCall, parse_arguments, role_of
from brute_nb.sendable import history
from brute_nb.transports import blocks as reply_blocks
from brute_nb.transports import citations
from brute_nb.transports.attachment_blocks import attachments_of, responses_parts
from brute_nb.transports.base import (
    MessageTransport,
    as_data,
    finish_reason,
    logprobs,
    response_meta,
    unreadable,
)
from brute_nb.transports.openai import encode_arguments, synthetic_id


class ResponsesItems(MessageTransport):
    """``client.responses.create(input=ResponsesItems.dump_all(log), ...)``."""

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> list[JSON]:
        return [item for m in history(messages) for item in cls.dump(m)]

    @classmethod
    def dump(cls, message: Any) -> JSON:
        role = role_of(message)
        files = attachments_of(message)
        if role == "tool":
            output: JSON = message.content or ""
            if files:  # a function's output may hold images and files too
                output = [*([{"type": "input_text", "text": message.content}] if message.content else []),
                          *responses_parts(files)]
            return [{"type": "function_call_output", "call_id": message.tool_call_id or "", "output": output}]
        kept = reply_blocks.stored(message, "openai_responses") if role == "assistant" else None
        if kept is not None:
            return kept
        items: list[JSON] = []
        if files and role != "user":
            raise AttachmentError(f"openai takes attachments only in user messages, not {role} messages")
        if files:
            text = [{"type": "input_text", "text": message.content}] if message.content else []
            items.append({"type": "message", "role": role, "content": [*text, *responses_parts(files)]})
        elif role != "assistant" or message.content or not message.tool_calls:  # an empty reply too: its own turn
            items.append({"type": "message", "role": role, "content": message.content or ""})
        calls = (message.tool_calls or ()) if role == "assistant" else ()
        for c in calls:
            call = ToolCall.coerce(c)
            items.append({"type": "function_call", "call_id": call.id, "name": call.name,
                          "arguments": encode_arguments(call)})
        return items

    def _flatten(self, result: Any) -> Any:
        data = as_data(result)
        if isinstance(data, list) and data and all(isinstance(i, Mapping) and "type" in i for i in data):
            # A bare list of output items is one response, not one message per item.
            yield {"output": data}
            return
        yield from super()._flatten(result)

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        data = as_data(item)
        expected = "a Response with 'output' (as the openai SDK returns it)"
        if not isinstance(data, Mapping):
            raise unreadable("ResponsesItems", item, expected, "it is not a mapping or a pydantic model")
        if "output" not in data:
            raise unreadable("ResponsesItems", item, expected,
                             f"it has {', '.join(map(repr, sorted(data))) or 'no fields'}")
        return response_message(data)


def response_message(data: Mapping[str, Any]) -> Message:
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    unknown: list[str] = []
    for index, item in enumerate(data.get("output") or []):
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") not in ("output_text", "refusal"):  # the text is read whole, below
                    unknown.append(str(part.get("type")))  # a part of a kind the API added since: kept whole
        elif kind == "function_call":
            call_id = item.get("call_id") or synthetic_id("call_", data.get("id"), index, item.get("name"))
            calls.append(ToolCall(id=call_id, name=item.get("name") or "",
                                  arguments=parse_arguments(item.get("arguments"))))
        elif kind == "reasoning":
            reasoning.extend(str(s.get("text") or "") for s in item.get("summary") or [])
        elif not str(kind).endswith("_call"):  # a server tool's call (web_search_call...) is read below
            unknown.append(str(kind))  # a kind the API added since (mcp_list_tools...): kept whole below
    usage = data.get("usage") or {}
    meta = response_meta(
        data,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_tokens=(usage.get("input_tokens_details") or {}).get("cached_tokens"),
        reasoning_tokens=(usage.get("output_tokens_details") or {}).get("reasoning_tokens"),
    )
    status = data.get("status")
    if status == "incomplete":
        meta["finish_reason"] = finish_reason((data.get("incomplete_details") or {}).get("reason") or "incomplete")
    elif status is not None or calls:
        meta["finish_reason"] = "tool_calls" if calls else "stop"
    if reasoning:
        meta["thinking"] = "\n\n".join(reasoning)
    output = [i for i in data.get("output") or [] if isinstance(i, Mapping)]
    citations.add_to(meta, citations.responses_citations(output), citations.responses_server_calls(output))
    tokens = logprobs(p for m in output if m.get("type") == "message" for part in m.get("content") or ()
                      for p in part.get("logprobs") or ())
    if tokens:
        meta["logprobs"] = tokens
    reply_blocks.note_unknown(meta, unknown)
    if unknown or _more_than_text_and_calls(output):
        meta[reply_blocks.KEY] = {"openai_responses": [reply_blocks.clean(i) for i in output]}
    return Message(Role.ASSISTANT, reply_blocks.responses_text(output), tool_calls=calls or None, meta=meta)


def _more_than_text_and_calls(output: list[Mapping[str, Any]]) -> bool:
    """True when the output items hold what a message item and function calls rebuilt from the text cannot."""
    messages = [i for i in output if i.get("type") == "message"]
    if len(messages) > 1 or any(i.get("type") not in ("message", "function_call") for i in output):
        return True
    return any(p.get("annotations") for m in messages for p in m.get("content") or ())
