"""Helpers the library transports share: which tool a result answers, and what a library cannot carry.

Libraries whose tool results name their tool (pydantic-ai, llm) need the name a Brute ``tool`` message does not
hold; it is the name of the call with the same id earlier in the log (or ``meta["tool_name"]``, which the tool
pipeline sets). Invariant: a result whose tool cannot be named is refused, never sent with a made-up name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.message import ToolCall, role_of


def call_names(messages: Iterable[Any]) -> dict[str, str]:
    """``{call id: tool name}`` for every call in the log."""
    names: dict[str, str] = {}
    for m in messages:
        if role_of(m) == "assistant":
            for c in m.tool_calls or ():
                call = ToolCall.coerce(c)
                names[call.id] = call.name
    return names


def tool_name(transport: str, message: Any, names: Mapping[str, str]) -> str:
    """The tool a ``tool`` message answers; a TypeError saying how to supply it when the log does not say."""
    meta = getattr(message, "meta", None) or {}
    name = names.get(message.tool_call_id or "") or meta.get("tool_name")
    if not name:
        raise TypeError(f"{transport} needs the tool name of the result for call {message.tool_call_id!r}: dump the "
                        "whole log with dump_all (so the call is in it) or set meta['tool_name'] on the result")
    return str(name)


def cannot_carry(transport: str, what: str) -> TypeError:
    return TypeError(f"{transport} transport cannot carry {what}: a brute_nb message holds text, tool calls and "
                     "tool results only")
