"""The OpenAI Responses API as the fake provider speaks it: a Response object and its typed SSE events."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from brute_nb.testing.rules_content import declared_kinds
from brute_nb.testing.script import Reply
from brute_nb.testing.wire import (
    CREATED,
    arguments_text,
    chat_annotations,
    event_line,
    pieces,
    token_logprobs,
    usage_numbers,
)

LOGPROBS = "message.output_text.logprobs"
"""What a Responses request puts in ``include`` to get the output text's logprobs."""


def response_json(body: Mapping[str, Any], reply: Reply, n: int, status: str = "completed") -> dict[str, Any]:
    tokens_in, tokens_out = usage_numbers(body, reply)
    output = [dict(i) for i in reply.blocks] or _output(reply, n)
    if LOGPROBS in (body.get("include") or ()):
        top = int(body.get("top_logprobs") or 0)
        output = [{**i, "content": [{**p, "logprobs": token_logprobs(p.get("text") or "", top)}
                                    for p in i["content"]]} if i.get("type") == "message" else i for i in output]
    return {
        "id": f"resp_{n}", "object": "response", "created_at": CREATED, "model": body.get("model"),
        "status": status, "output": output if status == "completed" else [],
        "incomplete_details": None,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": body.get("tools") or [],
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
                  "input_tokens_details": {"cached_tokens": reply.cached_tokens},
                  "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens or 0}},
    }


def _output(reply: Reply, n: int) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.thinking:
        output.append({"type": "reasoning", "id": f"rs_{n}",
                       "summary": [{"type": "summary_text", "text": reply.thinking}]})
    for i, server in enumerate(reply.server_calls):
        output.append({"type": f"{server['name']}_call", "id": f"ws_{n}_{i}", "status": "completed",
                       "action": {"type": "search", **(server.get("arguments") or {})}})
    if reply.text:
        annotations = [{"type": "url_citation", "url": a["url_citation"]["url"], "title": a["url_citation"]["title"],
                        "start_index": a["url_citation"]["start_index"], "end_index": a["url_citation"]["end_index"]}
                       for a in chat_annotations(reply)]
        output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply.text, "annotations": annotations}]})
    for i, c in enumerate(reply.calls):
        output.append({"type": "function_call", "id": f"fc_{n}_{i}", "call_id": c.id, "name": c.name,
                       "arguments": arguments_text(c), "status": "completed"})
    return output


INCOMPLETE = {"length": "max_output_tokens", "max_tokens": "max_output_tokens",
              "max_output_tokens": "max_output_tokens", "content_filter": "content_filter"}
"""Scripted finish reasons the Responses API reports as an incomplete response (with this reason)."""


def final_json(body: Mapping[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    """The finished response: completed, or incomplete (cut by max tokens, filtered) with what was produced."""
    full = response_json(body, reply, n)
    reason = INCOMPLETE.get(reply.finish or "")
    if reason is not None:
        full = {**full, "status": "incomplete", "incomplete_details": {"reason": reason}}
    return full


def responses_sse(body: Mapping[str, Any], reply: Reply, n: int) -> list[str]:
    full = final_json(body, reply, n)
    seq = iter(range(1_000_000))
    events: list[str] = []

    def emit(kind: str, **payload: Any) -> None:
        events.append(event_line(kind, {"type": kind, "sequence_number": next(seq), **payload}))

    emit("response.created", response={**response_json(body, reply, n, "in_progress"), "usage": None})
    for index, item in enumerate(full["output"]):
        emit("response.output_item.added", output_index=index, item=_opening(item))
        if item["type"] == "message":
            for at, done in enumerate(item["content"]):
                _part_events(emit, item["id"], index, at, done)
        elif item["type"] == "function_call":
            for p in pieces(item["arguments"], 8):
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=p)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 name=item["name"], arguments=item["arguments"])
        elif item["type"] == "reasoning":
            for at, summary in enumerate(item.get("summary") or ()):
                for p in pieces(summary["text"]):
                    emit("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index,
                         summary_index=at, delta=p)
        else:
            _tool_events(emit, index, item)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed" if full["status"] == "completed" else "response.incomplete", response=full)
    return events


TOOL_PHASES: dict[str, tuple[str, ...]] = {
    "mcp_list_tools": ("in_progress", "completed"),
    "mcp_call": ("in_progress", "completed"),
    "web_search_call": ("in_progress", "searching", "completed"),
    "file_search_call": ("in_progress", "searching", "completed"),
    "code_interpreter_call": ("in_progress", "interpreting", "completed"),
    "image_generation_call": ("in_progress", "generating", "completed"),
}
"""The status events a provider tool's item streams (``response.<kind>.<phase>``, the SDK's stream event types)."""


NEW_KIND_PHASES = ("in_progress", "completed")
"""The status events of an item of a kind added after the SDK (``response.hologram_2031.in_progress``), as the
provider tools' items have them; a kind the SDK declares with no status events (``TOOL_PHASES``) goes whole."""


@cache
def output_item_kinds() -> frozenset[str]:
    """The output item kinds the installed SDK declares (``ResponseOutputItem``)."""
    from openai.types.responses import ResponseOutputItem

    return declared_kinds(ResponseOutputItem)


def _tool_events(emit: Any, index: int, item: Mapping[str, Any]) -> None:
    """A provider tool's item between added and done: its status events, and its arguments, code or a partial
    image where the API streams them; a kind the fake does not know gets the status events every provider tool's
    item has (``response.<kind>.in_progress``, ``.completed``), which no SDK types yet."""
    kind, at = item["type"], {"item_id": item.get("id"), "output_index": index}
    phases = TOOL_PHASES.get(kind, () if kind in output_item_kinds() else NEW_KIND_PHASES)
    for phase in phases[:-1]:
        emit(f"response.{kind}.{phase}", **at)
    if kind == "mcp_call":
        for p in pieces(item.get("arguments") or "", 8):
            emit("response.mcp_call_arguments.delta", delta=p, **at)
        emit("response.mcp_call_arguments.done", arguments=item.get("arguments") or "", **at)
    elif kind == "code_interpreter_call" and item.get("code"):
        for p in pieces(item["code"], 8):
            emit("response.code_interpreter_call_code.delta", delta=p, **at)
        emit("response.code_interpreter_call_code.done", code=item["code"], **at)
    elif kind == "image_generation_call" and item.get("result"):
        emit("response.image_generation_call.partial_image", partial_image_b64=item["result"],
             partial_image_index=0, **at)
    if phases:
        emit(f"response.{kind}.{phases[-1]}", **at)


def _part_events(emit: Any, item_id: str, index: int, at: int, done: Mapping[str, Any]) -> None:
    """One content part of a message item: added empty, its text in deltas, done whole."""
    if done.get("type") != "output_text":  # a refusal part: sent whole
        emit("response.content_part.added", item_id=item_id, output_index=index, content_index=at, part=done)
    else:
        part = {"type": "output_text", "text": "", "annotations": []}
        emit("response.content_part.added", item_id=item_id, output_index=index, content_index=at, part=part)
        reported = iter(done.get("logprobs") or ())
        for p in pieces(done["text"]):
            emit("response.output_text.delta", item_id=item_id, output_index=index, content_index=at,
                 delta=p, logprobs=[e for e in [next(reported, None)] if e is not None])
        emit("response.output_text.done", item_id=item_id, output_index=index, content_index=at,
             text=done["text"], logprobs=done.get("logprobs") or [])
    emit("response.content_part.done", item_id=item_id, output_index=index, content_index=at, part=done)


def _opening(item: Mapping[str, Any]) -> dict[str, Any]:
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    if item["type"] == "function_call":
        return {**item, "status": "in_progress", "arguments": ""}
    if item["type"] == "mcp_call":
        return {**item, "status": "in_progress", "arguments": "", "output": None}
    if item["type"] == "image_generation_call":
        return {**item, "status": "in_progress", "result": None}
    if item["type"].endswith("_call"):
        return {**item, "status": "in_progress"}
    if item["type"] == "reasoning":
        return {**item, "summary": []}
    return dict(item)  # mcp_list_tools, a kind the fake does not know: whole when added
