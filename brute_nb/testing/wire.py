"""Wire formats the fake provider answers in: JSON bodies and the SSE event sequences each SDK parses.

The SSE shapes follow what the real APIs send (and what kernel-notes Q5 measured): OpenAI chat is ``data:`` lines
ending with ``data: [DONE]``, with tool-call arguments split across deltas joined by index; Anthropic needs
``event:`` lines and the message_start → content_block_* → message_delta → message_stop sequence; the Responses
API sends typed events with a ``sequence_number`` and ends with ``response.completed``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from brute_nb.message import INVALID_ARGUMENTS_KEY, ToolCall, dumps
from brute_nb.testing.script import Reply

CREATED = 1_700_000_000


def pieces(text: str, size: int = 6) -> list[str]:
    """Text split the way a model streams it: several small deltas."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def arguments_text(call: ToolCall) -> str:
    if set(call.arguments) == {INVALID_ARGUMENTS_KEY}:
        return str(call.arguments[INVALID_ARGUMENTS_KEY])
    return dumps(call.arguments)


def usage_numbers(body: Mapping[str, Any], reply: Reply) -> tuple[int, int]:
    out = len(reply.text) + len(reply.thinking) + sum(len(arguments_text(c)) for c in reply.calls)
    written = max(1, out // 4) + (reply.reasoning_tokens or 0)  # reasoning is billed as output, part of its count
    if reply.prompt_tokens is not None:
        return reply.prompt_tokens, written
    sent = json.dumps(body.get("messages", body.get("input", "")))
    return max(1, len(sent) // 4), written


def token_logprobs(text: str, top: int) -> list[dict[str, Any]]:
    """The logprobs a real API reports for ``text``: one entry a token (here a streamed piece), each with ``top``
    alternatives, the chosen token first among them."""
    out = []
    for i, token in enumerate(pieces(text)):
        chosen = -0.01 * (i % 7 + 1)
        alternatives = [{"token": token, "logprob": chosen, "bytes": list(token.encode())}]
        alternatives += [{"token": f"{token}~{k}", "logprob": chosen - k, "bytes": None} for k in range(1, top)]
        out.append({"token": token, "logprob": chosen, "bytes": list(token.encode()),
                    "top_logprobs": alternatives[:top]})
    return out


def _chat_logprobs(body: Mapping[str, Any], text: str) -> dict[str, Any] | None:
    """Chat Completions reports logprobs only when the request asked (``logprobs: true``)."""
    if not body.get("logprobs"):
        return None
    return {"content": token_logprobs(text, int(body.get("top_logprobs") or 0)), "refusal": None}


def data_line(payload: Any) -> str:
    return f"data: {dumps(payload)}\n\n"


def event_line(name: str, payload: Any) -> str:
    return f"event: {name}\ndata: {dumps(payload)}\n\n"


def openai_chat_json(body: Mapping[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    tokens_in, tokens_out = usage_numbers(body, reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or (None if reply.calls else "")}
    if reply.blocks:  # a compatible server's content as a list of parts (Mistral's thinking chunks)
        message["content"] = [dict(b) for b in reply.blocks]
    if reply.thinking:
        message["reasoning_content"] = reply.thinking
    if reply.calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": arguments_text(c)}} for c in reply.calls]
    if reply.citations:
        message["annotations"] = chat_annotations(reply)
    return {
        "id": f"chatcmpl-{n}", "object": "chat.completion", "created": CREATED, "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": _chat_finish(reply),
                     "logprobs": _chat_logprobs(body, reply.text)}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
                  "prompt_tokens_details": {"cached_tokens": reply.cached_tokens, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens or 0, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
    }


def chat_annotations(reply: Reply) -> list[dict[str, Any]]:
    """Search models' ``url_citation`` annotations, with offsets of the cited text in the reply."""
    out = []
    for c in reply.citations:
        cited = str(c.get("cited_text") or "")
        start = max(reply.text.find(cited), 0)
        end = start + len(cited) if cited in reply.text else start
        out.append({"type": "url_citation", "url_citation": {"url": c.get("url"), "title": c.get("title"),
                                                             "start_index": start, "end_index": end}})
    return out


def _chat_finish(reply: Reply) -> str:
    return reply.finish or ("tool_calls" if reply.calls else "stop")


def openai_chat_sse(body: Mapping[str, Any], reply: Reply, n: int) -> list[str]:
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": CREATED, "model": body.get("model")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        if isinstance(delta.get("content"), str) and delta["content"] and body.get("logprobs"):
            choice["logprobs"] = _chat_logprobs(body, delta["content"])
        return data_line({**base, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": p}) for p in pieces(reply.thinking)]
    events += [chunk({"content": p}) for p in pieces(reply.text)]
    events += [chunk({"content": p}) for p in _chat_part_deltas(reply.blocks)]
    if reply.citations:
        events.append(chunk({"annotations": chat_annotations(reply)}))
    for i, c in enumerate(reply.calls):
        events.append(chunk({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                                             "function": {"name": c.name, "arguments": ""}}]}))
        events += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                   for p in pieces(arguments_text(c), 8)]
    events.append(chunk({}, _chat_finish(reply)))
    if (body.get("stream_options") or {}).get("include_usage"):
        # Real servers report usage only when asked, in a last chunk with no choices.
        usage = openai_chat_json(body, reply, n)["usage"]
        events.append(data_line({**base, "choices": [], "usage": usage}))
    events.append("data: [DONE]\n\n")
    return events


def _chat_part_deltas(parts: Any) -> list[Any]:
    """Content parts as a compatible server streams them: text in string pieces, any other part whole, in a list."""
    out: list[Any] = []
    for part in parts:
        out += pieces(part["text"]) if part.get("type") == "text" else [[dict(part)]]
    return out


def anthropic_json(body: Mapping[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    tokens_in, tokens_out = usage_numbers(body, reply)
    content = [dict(b) for b in reply.blocks] or _content(reply, n)
    uses = any(b.get("type") == "tool_use" for b in content)
    return {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": body.get("model"), "content": content,
        "stop_reason": reply.finish or ("tool_use" if uses else "end_turn"), "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out,
                  "cache_read_input_tokens": reply.cached_tokens,
                  "cache_creation_input_tokens": reply.cache_write_tokens, "service_tier": "standard",
                  **_thinking_details(reply)},
    }


def _thinking_details(reply: Reply) -> dict[str, Any]:
    """Anthropic's breakdown of the output, sent only when there is one to give (it is optional in the API)."""
    if reply.reasoning_tokens is None:
        return {}
    return {"output_tokens_details": {"thinking_tokens": reply.reasoning_tokens}}


def _content(reply: Reply, n: int) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if reply.thinking:
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": f"sig-{n}"})
    for i, server in enumerate(reply.server_calls):
        use_id = f"srvtoolu_{n}_{i}"
        content.append({"type": "server_tool_use", "id": use_id, "name": server["name"],
                        "input": server.get("arguments") or {}})
        content.append({"type": f"{server['name']}_tool_result", "tool_use_id": use_id,
                        "content": server.get("result") or []})
    if reply.text:
        text: dict[str, Any] = {"type": "text", "text": reply.text}
        if reply.citations:
            text["citations"] = [{"type": "web_search_result_location", "url": c.get("url"), "title": c.get("title"),
                                  "cited_text": c.get("cited_text"), "encrypted_index": f"idx-{n}"}
                                 for c in reply.citations]
        content.append(text)
    for c in reply.calls:
        content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c)})
    return content


def _input(call: ToolCall) -> Any:
    # Anthropic always sends an object; a "malformed" scripted call becomes the raw text under one key.
    return call.arguments


def anthropic_sse(body: Mapping[str, Any], reply: Reply, n: int) -> list[str]:
    full = anthropic_json(body, reply, n)
    start = {**full, "content": [], "stop_reason": None,
             "usage": {**{k: v for k, v in full["usage"].items() if k != "output_tokens_details"},
                       "output_tokens": 1}}  # the breakdown comes with the final count, in message_delta
    events = [event_line("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(full["content"]):
        kind = block["type"]
        empty = {"thinking": {"type": "thinking", "thinking": "", "signature": ""},
                 "text": {"type": "text", "text": ""},
                 "tool_use": {**block, "input": {}},
                 "server_tool_use": {**block, "input": {}},
                 "mcp_tool_use": {**block, "input": {}},
                 "compaction": {**{k: v for k, v in block.items() if k not in COMPACTION_DELTA}, "content": None},
                 }.get(kind, block)
        events.append(event_line("content_block_start",
                                 {"type": "content_block_start", "index": index, "content_block": empty}))
        for delta in _block_deltas(block):
            events.append(event_line("content_block_delta",
                                     {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(event_line("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(event_line("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": full["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": full["usage"]["output_tokens"], **_thinking_details(reply)}}))
    events.append(event_line("message_stop", {"type": "message_stop"}))
    return events


def _block_deltas(block: Mapping[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "thinking":
        return [*({"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])),
                {"type": "signature_delta", "signature": block["signature"]}]
    if block["type"] == "text":
        cited = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or ()]
        return [*cited, *({"type": "text_delta", "text": p} for p in pieces(block["text"]))]
    if block["type"] in ("tool_use", "server_tool_use", "mcp_tool_use"):
        return [{"type": "input_json_delta", "partial_json": p} for p in pieces(dumps(block["input"]), 8)]
    if block["type"] == "compaction":  # the summary comes whole, in one delta (the SDK's beta helper sets it)
        return [{"type": "compaction_delta", **{k: block.get(k) for k in COMPACTION_DELTA}}]
    return []  # a server tool's result, redacted thinking, a container upload, a kind the fake does not know: whole


COMPACTION_DELTA = ("content", "encrypted_content")
"""The fields of a ``compaction`` block that its ``compaction_delta`` carries (``BetaCompactionContentBlockDelta``)."""
