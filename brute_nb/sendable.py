"""What a model may be sent: the log with every tool result next to its call, and every call answered.

Both APIs refuse (HTTP 400) a request holding a tool result with no matching call before it, or a call with no
result after it; one such pair in a session file would fail every later turn. The invariant kept here: no request
ever carries an orphan result or an unanswered call. ``sendable`` repairs what is *sent* (orphan results left out,
a synthetic error result put after each unanswered call) and reports what it did; the log itself, and the file
behind it, are never changed. Every model call asks, and a valid log (the common case) is answered by ``valid``,
a walk with no copy and no call per message, before any repaired list is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from brute_nb.message import ROLES, Message, Role, ToolCall, role_of

UNANSWERED_RESULT = "Error: no result was recorded for this tool call"


@dataclass(frozen=True)
class Repair:
    """What ``sendable`` changed: results it left out, calls it answered with an error."""

    dropped: list[Any] = field(default_factory=list)
    closed: list[ToolCall] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.dropped or self.closed)

    def describe(self) -> str:
        parts = []
        if self.dropped:
            ids = ", ".join(repr(m.tool_call_id) for m in self.dropped)
            parts.append(f"left out {len(self.dropped)} tool result(s) with no matching call ({ids})")
        if self.closed:
            names = ", ".join(f"{c.name} ({c.id})" for c in self.closed)
            parts.append(f"answered {len(self.closed)} tool call(s) that had no result with an error ({names})")
        return ("the session history is not valid for the model API, so what is sent was repaired: "
                + "; ".join(parts) + ". The session file is unchanged.")


def sendable(messages: Sequence[Any]) -> tuple[list[Any], Repair]:
    """The messages to send and what was repaired. A result counts only in the run of tool messages right after
    the assistant message that made its call (where both APIs require it), and only once."""
    if valid(messages):  # every model call of a turn asks, so the common answer is a plain copy
        return list(messages), Repair()
    return repaired(messages)


def repaired(messages: Sequence[Any]) -> tuple[list[Any], Repair]:
    """``sendable`` without its fast check: the walk that builds the repaired list (tests compare the two)."""
    out: list[Any] = []
    repair = Repair()
    open_calls: dict[str, ToolCall] = {}  # the calls of the last assistant message, not yet answered

    def close_open() -> None:
        for call in open_calls.values():
            out.append(Message(Role.TOOL, UNANSWERED_RESULT, tool_call_id=call.id,
                               meta={"synthetic": True, "tool_name": call.name, "is_error": True}))
            repair.closed.append(call)
        open_calls.clear()

    for m in messages:
        role = role_of(m)
        if role == "tool":
            if m.tool_call_id in open_calls:
                del open_calls[m.tool_call_id]
                out.append(m)
            else:
                repair.dropped.append(m)
            continue
        close_open()
        out.append(m)
        if role == "assistant" and m.tool_calls:
            open_calls = {c.id: c for c in (ToolCall.coerce(c) for c in m.tool_calls)}
    close_open()
    return out, repair


def valid(messages: Sequence[Any]) -> bool:
    """True when ``sendable`` has nothing to repair: the same walk, with no copy and no call per message.

    On a ``Log`` the walk resumes where the last one ended (``Log.prefix_memo``): a long session's history was
    checked by earlier model calls and can only have grown since, so each call checks only the new messages.
    """
    tool, assistant = Role.TOOL, Role.ASSISTANT
    memo = getattr(messages, "prefix_memo", None)
    start, open_ids = 0, set()
    if isinstance(memo, dict) and "sendable" in memo and memo["sendable"][0] <= len(messages):
        start, ids = memo["sendable"]
        open_ids = set(ids)
    for i in range(start, len(messages)):
        m = messages[i]
        role = m.role
        if role.__class__ is not Role:
            role = _role_or_none(m)
        if role is tool:
            if m.tool_call_id not in open_ids:
                return False
            open_ids.discard(m.tool_call_id)
            continue
        if open_ids:
            return False
        if role is assistant and m.tool_calls:
            open_ids = {ToolCall.coerce(c).id for c in m.tool_calls}
    if isinstance(memo, dict):
        memo["sendable"] = (len(messages), frozenset(open_ids))  # valid so far, with these calls still open
    return not open_ids


def _role_or_none(m: Any) -> Role | None:
    """A message-like object's role as a Role (a plain string too), None for a role no API has."""
    r = role_of(m)
    return Role(r) if r in ROLES else None
