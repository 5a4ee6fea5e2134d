"""The tool-call frame: one row a tool call, joined with the tool message that answers it.

A view only, never read back: the message frame's ``tool_calls`` and ``content`` columns are the truth. Its cells
are made by the same helpers as the message frame's, so a call's arguments and a result's text look alike in both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from brute_nb.frames.arrays import _number_or_none, _objects, _strings
from brute_nb.frames.messages import KIND, _call_dict
from brute_nb.message import role_of

if TYPE_CHECKING:
    import pandas as pd

TOOL_CALL_COLUMNS: tuple[str, ...] = (
    "turn", "call_id", "name", "arguments", "result", "is_error", "result_chars", "duration_ms",
)
"""The columns of ``tool_calls_frame(log)``, in order."""


def tool_calls_frame(log: Iterable[Any]) -> pd.DataFrame:
    """One row a tool call, joined with its result (the next tool message answering its id).

    ``result`` is missing for an unanswered call. ``is_error`` is the result's ``meta["is_error"]`` when present,
    else whether the text starts with ``Error:`` (the tool pipeline's convention).
    """
    import pandas as pd

    rows: list[list[Any]] = []
    pending: dict[str, list[Any]] = {}
    turn = 0
    for m in log:
        role = role_of(m)
        meta = getattr(m, "meta", None) or {}
        if role == "user" and not meta.get("synthetic"):
            turn += 1
        elif role == "assistant" and m.tool_calls:
            for c in m.tool_calls:
                call = _call_dict(c)
                row = [turn, call["id"], call["name"], call["arguments"], None, None, None, None]
                rows.append(row)
                pending[call["id"]] = row
        elif role == "tool" and m.tool_call_id in pending:
            row = pending.pop(m.tool_call_id)
            text = "" if m.content is None else str(m.content)
            flagged = meta.get("is_error")
            row[4:] = [text, bool(flagged) if flagged is not None else text.startswith("Error:"), len(text),
                       _number_or_none(meta.get("duration_ms"))]
    cols = list(zip(*rows, strict=True)) if rows else [()] * len(TOOL_CALL_COLUMNS)
    df = pd.DataFrame({
        "turn": pd.array(cols[0], dtype="int64"),
        "call_id": _strings(list(cols[1])),
        "name": _strings(list(cols[2])),
        "arguments": _objects(list(cols[3])),
        "result": _strings(list(cols[4])),
        "is_error": pd.array(cols[5], dtype="boolean"),
        "result_chars": pd.array(cols[6], dtype="Int64"),
        "duration_ms": pd.array(cols[7], dtype="Float64"),
    }, index=pd.RangeIndex(len(rows)))
    df.attrs[KIND] = "tool_calls"
    return df
