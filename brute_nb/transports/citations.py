"""Citations and provider-run (server) tool calls, read from each API's reply into one shape for ``meta``.

The invariant: whatever the provider, ``meta["citations"]`` is a list of ``{"type", "url", "title", "cited_text"}``
and ``meta["server_tool_calls"]`` a list of ``{"id", "name", "arguments", "result"}``, each value as the provider
sent it: a field it did not send (or sent null) is None, and an empty one ("" or []) stays empty, never taken for
absent (no ``x or None``, no ``x or y``). Both are absent when the reply had none, so plain replies
stay small on disk. Pure functions over plain dicts, like every transport.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.message import JSON


def citation(kind: object, url: object = None, title: object = None, cited_text: object = None) -> dict[str, JSON]:
    return {"type": str(kind or "citation"), "url": _text(url), "title": _text(title), "cited_text": _text(cited_text)}


def _text(value: object) -> str | None:
    """A string field as sent ("" included: a citation of an untitled page, of nothing quoted); None otherwise."""
    return value if isinstance(value, str) else None


def _sent(item: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` the item holds a value for (an empty one included), or None: each kind of citation or
    server call names the field its own way (``title`` or ``document_title``, ``results`` or ``outputs``)."""
    return next((item[k] for k in keys if item.get(k) is not None), None)


def anthropic_citations(blocks: Iterable[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """From the ``citations`` of text blocks (web search, documents: URL or document title)."""
    out = []
    for block in blocks:
        for c in block.get("citations") or () if block.get("type") == "text" else ():
            out.append(citation(c.get("type"), c.get("url"), _sent(c, "title", "document_title"),
                                c.get("cited_text")))
    return out


def anthropic_server_calls(blocks: Iterable[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """``server_tool_use`` (and the MCP connector's ``mcp_tool_use``) blocks joined with the ``*_tool_result``
    block that answers each."""
    calls: dict[str, dict[str, JSON]] = {}
    for block in blocks:
        kind = str(block.get("type") or "")
        if kind in ("server_tool_use", "mcp_tool_use"):
            calls[str(block.get("id"))] = {"id": block.get("id"), "name": block.get("name"),
                                           "arguments": block.get("input") or {}, "result": None}
        elif kind.endswith("_tool_result") and str(block.get("tool_use_id")) in calls:
            calls[str(block["tool_use_id"])]["result"] = block.get("content")
    return list(calls.values())


def chat_citations(message: Mapping[str, Any]) -> list[dict[str, JSON]]:
    """Chat Completions ``annotations`` (search models): ``url_citation`` with offsets into the content."""
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    out = []
    for a in message.get("annotations") or ():
        inner = a.get("url_citation") or a
        out.append(citation(a.get("type"), inner.get("url"), inner.get("title"), _span(text, inner)))
    return out


def _span(text: str, where: Mapping[str, Any]) -> str | None:
    start, end = where.get("start_index"), where.get("end_index")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(text):
        return text[start:end]
    return None


def responses_citations(output: Iterable[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """The Responses API's ``output_text`` annotations (url and file citations)."""
    out = []
    for item in output:
        for part in item.get("content") or () if item.get("type") == "message" else ():
            text = part.get("text") or ""
            for a in part.get("annotations") or ():
                out.append(citation(a.get("type"), a.get("url"), _sent(a, "title", "filename"), _span(text, a)))
    return out


RESPONSES_CLIENT_ITEMS = frozenset({"message", "function_call", "reasoning", "custom_tool_call"})


def responses_server_calls(output: Iterable[Mapping[str, Any]]) -> list[dict[str, JSON]]:
    """Output items the provider ran itself: ``web_search_call``, ``file_search_call``, ``code_interpreter_call``..."""
    out = []
    for item in output:
        kind = str(item.get("type") or "")
        if kind.endswith("_call") and kind not in RESPONSES_CLIENT_ITEMS:
            action = item.get("action")
            arguments = action if action is not None else {k: item[k] for k in ("queries", "code", "arguments")
                                                           if k in item}
            out.append({"id": item.get("id"), "name": kind.removesuffix("_call"), "arguments": arguments,
                        "result": _sent(item, "results", "outputs", "status")})
    return out


def add_to(meta: dict[str, JSON], citations: list[dict[str, JSON]], server_calls: list[dict[str, JSON]]) -> None:
    if citations:
        meta["citations"] = citations
    if server_calls:
        meta["server_tool_calls"] = server_calls
