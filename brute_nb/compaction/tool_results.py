"""ToolResults: the free first rung of the ladder. Older tool traffic becomes short stubs, in both directions.

Old tool output becomes a one-line stub that keeps the result's ``tool_call_id`` (so the call stays answered for
every provider) and says what was elided: the tool, its arguments in brief, and the size. Old tool-call arguments
that carry a large string (a ``write`` of 50 KB) keep every key and the call's id and name, so they stay a valid
JSON object the provider accepts; only the big string values become a stub naming the argument and its size. The
most recent ``keep`` steps stay intact, the oldest step goes first, and it stops as soon as the conversation is
under target. Every rewrite is reported to the context, so the ``compacted`` event carries the originals.
"""

from __future__ import annotations

from typing import Any

from brute_nb.compaction.pipeline import Compaction, CompactionApp, Layer
from brute_nb.compaction.steps import recent_start, split
from brute_nb.errors import MiddlewareError
from brute_nb.message import INVALID_ARGUMENTS_KEY, JSON, Message, Role, ToolCall, dumps

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
                new = self._rewrite(messages[i], calls)
                if new is None:
                    continue
                old = messages[i]
                tokens -= ctx.cost(old) - ctx.cost(new)
                messages[i] = new
                rewritten.append((old, new))
                if tokens <= ctx.target:
                    break
        if rewritten:
            ctx.update(self.name, messages, rewritten)

    def _rewrite(self, message: Message, calls: dict[str, Any]) -> Message | None:
        """The stubbed message, or None when there is nothing worth eliding (or it was compacted before)."""
        if "compacted" in message.meta:
            return None
        role = message.role
        if role == "tool" and len(message.content) >= self.min_chars:
            return stub(message, calls.get(message.tool_call_id or ""))
        if role == "assistant" and message.tool_calls:
            return shorten_arguments(message, self.min_chars)
        return None


def stub(message: Message, call: ToolCall | None) -> Message:
    """The short replacement for one tool result."""
    meta = dict(message.meta)
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


def argument_stub(name: str, value: str) -> str:
    """What a large string argument becomes: its name and size, so the model knows what it once sent."""
    return f"[elided to save context: {name} was {len(value):,} chars, {value.count(chr(10)) + 1:,} lines]"


def shorten_arguments(message: Message, min_chars: int) -> Message | None:
    """``message`` with every string argument of at least ``min_chars`` stubbed, or None if none was."""
    elided: list[str] = []
    saved = 0
    calls = []
    for call in message.tool_calls or ():
        arguments: dict[str, JSON] = {}
        for key, value in call.arguments.items():
            label = "arguments" if key == INVALID_ARGUMENTS_KEY else key  # raw text a model sent as arguments
            arguments[key], found = _shorten(value, label, min_chars)
            elided.extend(f"{call.name}.{path}" for path, _ in found)
            saved += sum(size for _, size in found)
        calls.append(ToolCall(call.id, call.name, arguments))
    if not elided:
        return None
    meta = dict(message.meta)
    meta.update(compacted="tool_results", elided_chars=saved, elided_arguments=elided)
    return Message(Role.ASSISTANT, message.content, tool_calls=calls, meta=meta)


def _shorten(value: JSON, path: str, min_chars: int) -> tuple[JSON, list[tuple[str, int]]]:
    """The value with big strings stubbed (nested objects and arrays keep their shape), and what was elided."""
    if isinstance(value, str):
        short = argument_stub(path, value)
        if len(value) >= min_chars and len(short) < len(value):
            return short, [(path, len(value))]
        return value, []
    found: list[tuple[str, int]] = []
    if isinstance(value, dict):
        out: dict[str, JSON] = {}
        for k, v in value.items():
            out[k], inner = _shorten(v, f"{path}.{k}", min_chars)
            found.extend(inner)
        return out, found
    if isinstance(value, list):
        items: list[JSON] = []
        for n, v in enumerate(value):
            item, inner = _shorten(v, f"{path}.{n}", min_chars)
            items.append(item)
            found.extend(inner)
        return items, found
    return value, []
