"""What ``brute_nb.compare`` shows: each turn of each conversation summed up, and the models side by side.

A conversation (a session's messages, or one map row's) is cut at its user turns; each turn's final answer is its
last reply, and its tool calls, tokens, cost and seconds are those of every model call inside it, counted as
everywhere else in brute_nb (``Usage``; a replayed call cost nothing, as in ``map``). The frame has one row per
turn (or per map row) and a column pair ``(field, model)`` per model, the original first; ``diff`` is a unified
diff of each model's final answer against the original's (empty when they are the same).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brute_nb.message import Message
from brute_nb.usage import Usage

if TYPE_CHECKING:
    import pandas as pd

ORIGINAL = "original"
FIELDS = ("reply", "tool_calls", "input_tokens", "output_tokens", "cost", "seconds", "error")


@dataclass(frozen=True)
class Turn:
    """One user turn as one model answered it."""

    reply: str | None = None
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    error: str | None = None


def user_turns(messages: list[Message]) -> list[str]:
    """The prompts of a conversation, in order (tool results are not turns)."""
    return [m.content for m in messages if m.role == "user" and isinstance(m.content, str) and m.content.strip()]


def turns(messages: list[Message]) -> list[Turn]:
    """Each user turn of ``messages`` summed up; a turn with no reply yet has ``reply`` None."""
    from brute_nb.map.row import price

    out: list[Turn] = []
    segment: list[Message] = []

    def close() -> None:
        replies = [m for m in segment if m.role == "assistant"]
        usage = Usage.total(replies) or Usage()
        costs = [price(m) for m in replies]
        known = [c for c in costs if c is not None]
        seconds = sum(m.meta["duration_ms"] for m in replies if isinstance(m.meta.get("duration_ms"), int)) / 1000
        out.append(Turn(reply=replies[-1].content if replies else None,
                        tool_calls=sum(len(m.tool_calls or ()) for m in replies), input_tokens=usage.input_tokens,
                        output_tokens=usage.output_tokens,
                        cost=sum(known) if known and len(known) == len(costs) else None, seconds=seconds))

    started = False
    for m in messages:
        if m.role == "user" and isinstance(m.content, str) and m.content.strip():
            if started:
                close()
            segment, started = [], True
        elif started:
            segment.append(m)
    if started:
        close()
    return out


def diff(original: str | None, other: str | None) -> str:
    """A unified diff of two final answers, line by line ("" when they are the same)."""
    if (original or "") == (other or ""):
        return ""
    lines = difflib.unified_diff((original or "").splitlines(), (other or "").splitlines(), ORIGINAL, "this",
                                 lineterm="", n=1)
    return "\n".join(lines)


def side_by_side(index: Any, columns: dict[str, list[Turn]]) -> pd.DataFrame:
    """The frame: ``columns`` maps a model (``ORIGINAL`` first) to its turns, aligned with ``index``."""
    import pandas as pd

    data: dict[tuple[str, str], list[Any]] = {}
    original = columns.get(ORIGINAL, [])
    for field in (*FIELDS, "diff"):
        for model, answered in columns.items():
            if field == "diff":
                if model != ORIGINAL:
                    data[(field, model)] = [diff(o.reply, t.reply) for o, t in zip(original, answered, strict=True)]
                continue
            data[(field, model)] = [getattr(t, field) for t in answered]
    frame = pd.DataFrame(data, index=index)
    frame.columns = pd.MultiIndex.from_tuples(list(data), names=["field", "model"])
    for model in columns:
        for field in ("tool_calls", "input_tokens", "output_tokens"):
            frame[(field, model)] = frame[(field, model)].astype("Int64")
        frame[("cost", model)] = frame[("cost", model)].astype("Float64")
    return frame
