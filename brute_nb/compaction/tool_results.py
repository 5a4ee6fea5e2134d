"""ToolResults: the free first rung of the ladder. Older tool output becomes a one-line stub.

The stub keeps the result's ``tool_call_id`` (so the call stays answered for every provider) and says what was
elided: the tool, its arguments in brief, and the size. The most recent ``keep`` steps stay intact, and the
oldest output goes first, stopping as soon as the conversation is under target.
"""

from __future__ import annotations

from typing import Any

from brute_nb.compaction.pipeline import Compaction, CompactionApp, Layer
from brute_nb.compaction.steps import recent_start, split
from brute_nb.errors import MiddlewareError
from brute_nb.message import Message, Role, dumps, role_of

ARGS_PREVIEW = 80


class ToolResults(Layer):
    name = "tool_results"

    def __init__(self, app: CompactionApp | None = None, *, keep: int = 4, min_chars: int = 200) -> None:
        problems = [
            f"{opt} must be a non-negative integer, got {value!r}"
            for opt, value in (("keep", keep), ("min_chars", min_chars))
            if not isinstance(value, int) or isinstance(value, bool) or value < 0
        ]
        if problems:
            raise MiddlewareError("ToolResults: " + "; ".join(problems))
        super().__init__(app)
        self.keep = keep
        self.min_chars = min_chars

    async def compact(self, ctx: Compaction) -> None:
        messages = list(ctx.messages)
        units = split(messages)
        calls = {c.id: c for m in messages for c in getattr(m, "tool_calls", None) or ()}
        tokens = ctx.tokens
        rewritten: list[tuple[Any, Any]] = []
        for unit in units[: recent_start(units, self.keep)]:
            if unit.kind != "step" or tokens <= ctx.target:
                continue
            for i in unit.indices:
                old = messages[i]
                if not self._elidable(old):
                    continue
                new = stub(old, calls.get(old.tool_call_id))
                tokens -= ctx.cost(old) - ctx.cost(new)
                messages[i] = new
                rewritten.append((old, new))
                if tokens <= ctx.target:
                    break
        if rewritten:
            ctx.update(self.name, messages, rewritten)

    def _elidable(self, message: Any) -> bool:
        meta = getattr(message, "meta", None) or {}
        return role_of(message) == "tool" and "compacted" not in meta and len(message.content) >= self.min_chars


def stub(message: Any, call: Any) -> Message:
    """The short replacement for one tool result."""
    meta = dict(getattr(message, "meta", None) or {})
    name = meta.get("tool_name") or (call.name if call is not None else "tool")
    what = name
    if call is not None and call.arguments:
        args = dumps(call.arguments)
        what += "(" + (args if len(args) <= ARGS_PREVIEW else args[: ARGS_PREVIEW - 3] + "...") + ")"
    text = message.content
    lines = text.count("\n") + 1
    content = f"[tool output elided to save context: {what} returned {len(text):,} chars, {lines:,} lines]"
    meta.update(compacted="tool_results", elided_chars=len(text))
    return Message(Role.TOOL, content, tool_call_id=message.tool_call_id, meta=meta)
