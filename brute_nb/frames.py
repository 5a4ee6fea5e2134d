"""The log as pandas DataFrames: one row a message (``frame``), one row a tool call (``tool_calls_frame``).

A frame is a view computed from the log and its ``meta``; ``log_from_frame`` turns a (filtered, edited) frame back
into a ``Log``. The invariant: ``log_from_frame(frame(log)) == log`` for every log of ``Message`` values, because the
last column, ``meta``, carries each message's whole meta; the explicit meta columns (``model``, ``input_tokens``...)
are written back into it only where they were edited. Derived columns (``turn``, ``tool_names``, ``n_tool_calls``,
``chars``) are never read back: ``tool_calls`` and ``content`` are the truth.

Frames are built column-wise in one pass of plain Python lists and one DataFrame constructor, so 100,000 messages
take a fraction of a second. pandas is imported inside the functions so ``import brute_nb`` stays light.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from brute_nb.errors import FrameError
from brute_nb.message import ROLES, Log, Message, Role, ToolCall, role_of

if TYPE_CHECKING:
    import pandas as pd

# Role is a StrEnum, so plain strings find their entry too; Role.value goes through a slow descriptor.
_ROLE_TEXT: dict[Any, str] = {r: r.value for r in Role}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

COLUMNS: tuple[str, ...] = (
    "turn", "role", "content", "tool_calls", "tool_call_id", "tool_names", "n_tool_calls", "chars",
    "model", "input_tokens", "output_tokens", "finish_reason", "created_at", "duration_ms", "meta",
)
"""The columns of ``frame(log)``, in order."""

META_COLUMNS: tuple[str, ...] = ("model", "input_tokens", "output_tokens", "finish_reason", "created_at", "duration_ms")
"""Columns lifted out of ``Message.meta`` (providers report these keys)."""

TOOL_CALL_COLUMNS: tuple[str, ...] = (
    "turn", "call_id", "name", "arguments", "result", "is_error", "result_chars", "duration_ms",
)
"""The columns of ``tool_calls_frame(log)``, in order."""


def frame(log: Iterable[Any]) -> pd.DataFrame:
    """The log as a DataFrame: one row a message, index = position in the log, columns ``COLUMNS``.

    Works with any message-like object (role, content, tool_calls, tool_call_id; ``meta`` if it has one).
    """
    import pandas as pd

    turns: list[int] = []
    roles: list[str] = []
    contents: list[Any] = []
    calls: list[list[dict[str, Any]] | None] = []
    call_ids: list[str | None] = []
    names: list[str] = []
    metas: list[dict[str, Any]] = []
    turn = 0
    for m in log:
        role = _ROLE_TEXT.get(m.role) or role_of(m)
        meta = getattr(m, "meta", None)
        meta = dict(meta) if meta else {}
        if role == "user" and not meta.get("synthetic"):
            turn += 1
        row_calls = m.tool_calls
        if row_calls is not None:
            row_calls = [_call_dict(c) for c in row_calls]
            names.append(",".join(c["name"] for c in row_calls))
        else:
            names.append("")
        content = m.content
        turns.append(turn)
        roles.append(role)
        contents.append("" if content is None else content)
        calls.append(row_calls)
        call_ids.append(m.tool_call_id)
        metas.append(meta)
    columns: dict[str, Any] = {
        "turn": pd.array(turns, dtype="int64"),
        "role": pd.Categorical(roles, categories=list(ROLES)),
        "content": pd.array(contents, dtype="str"),
        "tool_calls": _objects(calls),
        "tool_call_id": pd.array(call_ids, dtype="str"),
        "tool_names": pd.array(names, dtype="str"),
        "n_tool_calls": pd.array([len(c) if c else 0 for c in calls], dtype="int64"),
        "chars": pd.array([len(c) if isinstance(c, str) else len(str(c)) for c in contents], dtype="int64"),
        **_meta_columns(metas),
        "meta": _objects(metas),
    }
    return pd.DataFrame(columns, index=pd.RangeIndex(len(turns)))


def _call_dict(call: Any) -> dict[str, Any]:
    """A plain dict copy of a tool call (ToolCall, mapping, or an object with id/name/arguments)."""
    if isinstance(call, Mapping):
        call = ToolCall.coerce(call)
    elif not isinstance(call, ToolCall):
        call = ToolCall(id=getattr(call, "id", ""), name=getattr(call, "name", ""),
                        arguments=getattr(call, "arguments", None))  # type: ignore[arg-type]
    # A copy of the arguments, so editing the frame never reaches into the log's values.
    return {"id": call.id, "name": call.name, "arguments": dict(call.arguments)}


def _objects(values: list[Any]) -> Any:
    """An object array holding the values themselves (lists and dicts are not unpacked)."""
    import numpy as np

    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _meta_columns(metas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The explicit meta columns; a value of the wrong type shows as missing (it stays in ``meta``)."""
    import pandas as pd

    n = len(metas)
    model: list[str | None] = [None] * n
    tokens_in: list[int | None] = [None] * n
    tokens_out: list[int | None] = [None] * n
    finish: list[str | None] = [None] * n
    stamps: list[str | None] = [None] * n
    duration: list[float | None] = [None] * n
    for i, m in enumerate(metas):
        if not m:  # most messages (user, tool, system) carry no provider meta: skip them cheaply
            continue
        # `type(v) is` rather than isinstance: JSON values are exact types, and bool must not pass as int.
        v = m.get("model")
        model[i] = v if type(v) is str else None
        v = m.get("input_tokens")
        tokens_in[i] = v if type(v) is int and _INT64_MIN <= v <= _INT64_MAX else None
        v = m.get("output_tokens")
        tokens_out[i] = v if type(v) is int and _INT64_MIN <= v <= _INT64_MAX else None
        v = m.get("finish_reason")
        finish[i] = v if type(v) is str else None
        v = m.get("created_at")
        stamps[i] = v if type(v) is str else None
        v = m.get("duration_ms")
        duration[i] = _number_or_none(v) if v is not None else None
    return {
        "model": pd.array(model, dtype="str"),
        "input_tokens": pd.array(tokens_in, dtype="Int64"),
        "output_tokens": pd.array(tokens_out, dtype="Int64"),
        "finish_reason": pd.array(finish, dtype="str"),
        "created_at": pd.DatetimeIndex(
            pd.to_datetime(pd.Series(stamps, dtype=object), utc=True, errors="coerce", format="ISO8601")
        ),
        "duration_ms": pd.array(duration, dtype="Float64"),
    }


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
    return pd.DataFrame({
        "turn": pd.array(cols[0], dtype="int64"),
        "call_id": pd.array(cols[1], dtype="str"),
        "name": pd.array(cols[2], dtype="str"),
        "arguments": _objects(list(cols[3])),
        "result": pd.array(cols[4], dtype="str"),
        "is_error": pd.array(cols[5], dtype="boolean"),
        "result_chars": pd.array(cols[6], dtype="Int64"),
        "duration_ms": pd.array(cols[7], dtype="Float64"),
    }, index=pd.RangeIndex(len(rows)))


def log_from_frame(df: pd.DataFrame) -> Log:
    """Rebuild a ``Log`` from a frame made by ``frame`` (possibly filtered, reordered or edited).

    ``role`` is required; ``content``, ``tool_calls``, ``tool_call_id``, ``meta`` and the meta columns are optional.
    An edited meta column wins over the ``meta`` dict; a bad row raises ``FrameError`` naming its index label.
    """
    if "role" not in df.columns:
        raise FrameError("the frame has no 'role' column; make it with brute_nb.frame(log) or log.to_frame()")
    n = len(df)
    column = {name: (df[name].tolist() if name in df.columns else [None] * n)
              for name in ("role", "content", "tool_calls", "tool_call_id", "meta")}
    metas = [_meta_cell(v, label) for v, label in zip(column["meta"], df.index, strict=True)]
    edits = _meta_edits(df, metas)
    out = Log()
    for i, label in enumerate(df.index):
        meta = metas[i]
        for key, value in edits[i].items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        try:
            out.append(Message(
                _cell_text(column["role"][i], "role"),
                "" if _missing(column["content"][i]) else column["content"][i],
                _calls_cell(column["tool_calls"][i]),
                None if _missing(column["tool_call_id"][i]) else column["tool_call_id"][i],
                meta,
            ))
        except (TypeError, ValueError) as exc:
            raise FrameError(f"row {label!r}: {exc}") from None
    return out


def _missing(value: Any) -> bool:
    """None, NaN, pd.NA and NaT all mean 'no value' in a cell."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    import pandas as pd

    return value is pd.NA or value is pd.NaT


def _cell_text(value: Any, column: str) -> Any:
    if _missing(value):
        raise ValueError(f"the {column!r} cell is empty")
    return value


def _meta_cell(value: Any, label: Any) -> dict[str, Any]:
    if _missing(value):
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    raise FrameError(f"row {label!r}: the 'meta' cell must be a dict, not {type(value).__name__}")


def _calls_cell(value: Any) -> list[Any] | None:
    if _missing(value):
        return None
    if isinstance(value, str):
        # A frame saved to CSV/JSON and read back holds tool calls as JSON text.
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"the 'tool_calls' cell is not a list of tool calls: {value[:80]!r}") from None
    if not isinstance(value, list | tuple):
        raise TypeError(f"the 'tool_calls' cell must be a list of tool calls, not {type(value).__name__}")
    return list(value)


def _meta_edits(df: pd.DataFrame, metas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per row, the meta keys whose explicit column differs from what ``meta`` alone would show.

    Comparing against the columns recomputed from ``meta`` keeps untouched values byte for byte (a
    ``created_at`` string keeps its own format); a cell set to missing removes the key.
    """
    import pandas as pd

    edits: list[dict[str, Any]] = [{} for _ in metas]
    derived = _meta_columns(metas)
    for name in META_COLUMNS:
        if name not in df.columns:
            continue
        now = df[name].reset_index(drop=True)
        before = pd.Series(derived[name])
        changed = now.isna() != before.isna()
        both = ~now.isna() & ~before.isna()
        if both.any():
            changed |= both & ~_equal(now, before)
        for i in changed[changed].index:
            value = now.iloc[i]
            try:
                edits[i][name] = None if _missing(value) else _meta_value(name, value)
            except (TypeError, ValueError) as exc:
                raise FrameError(f"row {df.index[i]!r}: the {name!r} cell {value!r} is not usable: {exc}") from None
    return edits


def _equal(a: pd.Series, b: pd.Series) -> pd.Series:
    """Element-wise equality that tolerates an edited column of another dtype (falls back to Python ==)."""
    import pandas as pd

    try:
        return (a == b).fillna(False).astype(bool)
    except (TypeError, ValueError):
        return pd.Series([_same(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)], dtype=bool)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _meta_value(name: str, value: Any) -> Any:
    """A cell value as JSON-ready meta (timestamps as ISO text, whole numbers as int)."""
    if name == "created_at":
        import pandas as pd

        return pd.Timestamp(value).isoformat()
    if name in ("input_tokens", "output_tokens"):
        return int(value)
    if name == "duration_ms":
        number = float(value)
        return int(number) if number.is_integer() else number
    return str(value)
