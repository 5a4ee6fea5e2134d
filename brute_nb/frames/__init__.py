"""The log as pandas DataFrames: one row a message (``frame``), one row a tool call (``tool_calls_frame``).

A frame is a view computed from the log and its ``meta``; ``log_from_frame`` turns a (filtered, edited) frame back
into a ``Log``. The invariant: ``log_from_frame(frame(log)) == log`` for every log of ``Message`` values, because the
last column, ``meta``, carries each message's whole meta; the explicit meta columns (``model``, ``input_tokens``...)
are written back into it only where they were edited; ``attachments`` holds the ``Attachment`` values themselves
(bytes reachable), so a frame turned back into a session keeps them. Derived columns (``turn``, ``tool_names``,
``n_tool_calls``, ``chars``) are never read back: ``tool_calls`` and ``content`` are the truth. A session file is read
into the same columns by ``brute_nb.sessions.columns.read_frame``.

Frames are built column-wise, one comprehension of plain Python values a field, then numpy arrays and one DataFrame
constructor (no per-row dict or Series), so 100,000 messages take well under the naive ``pd.DataFrame([m.to_dict()
...])``. ``read_frame(path)`` builds the same frame from a session file's lines without making a ``Message`` a line
(``brute_nb.sessions.lines``): equal to ``frame(read_session(path))``, the strict reader deciding anything irregular.
Memory: the frame is its values plus one pointer or number a row and column, and the build adds little to that
(peak ~2.5x the file for ``read_frame``): sparse fields (tool calls, call ids, meta) are gathered only where present,
each column's scratch list dies before the next is made, pandas wraps the arrays instead of copying or inferring
them, and repeated meta strings (model, provider...) are shared by the rows. pandas is imported inside the
functions so ``import brute_nb`` stays light.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import is_, is_not, itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from brute_nb.errors import FrameError
from brute_nb.message import ROLES, Log, Message, Role, ToolCall, role_of

if TYPE_CHECKING:
    import pandas as pd

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

COLUMNS: tuple[str, ...] = (
    "turn", "role", "content", "tool_calls", "tool_call_id", "attachments", "tool_names", "n_tool_calls",
    "chars", "model", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost", "finish_reason",
    "created_at", "duration_ms", "meta",
)
"""The columns of ``frame(log)``, in order."""

META_COLUMNS: tuple[str, ...] = (
    "model", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost", "finish_reason",
    "created_at", "duration_ms",
)
"""Columns lifted out of ``Message.meta`` (providers report these keys)."""

KIND = "brute_nb"
"""The ``attrs`` key marking a frame as a session log (``"log"``) or its tool calls (``"tool_calls"``): the
notebook shows such frames with their text as text (``notebook.views.frame_view``); pandas carries it through
filters."""

TOOL_CALL_COLUMNS: tuple[str, ...] = (
    "turn", "call_id", "name", "arguments", "result", "is_error", "result_chars", "duration_ms",
)
"""The columns of ``tool_calls_frame(log)``, in order."""


def frame(log: Iterable[Any]) -> pd.DataFrame:
    """The log as a DataFrame: one row a message, index = position in the log, columns ``COLUMNS``.

    Works with any message-like object (role, content, tool_calls, tool_call_id; ``meta`` if it has one).
    """
    msgs = log if isinstance(log, list) else list(log)
    # Building makes one small dict a row (the meta copies) and no reference cycle; pausing the cyclic
    # collector meanwhile spares a 100,000-row frame repeated passes over objects that can never be garbage.
    paused = gc.isenabled()
    gc.disable()
    try:
        columns = _columns(msgs)
    finally:
        if paused:
            gc.enable()
    return _frame_of(columns)


def _frame_of(columns: dict[str, Any]) -> pd.DataFrame:
    """The DataFrame holding the fresh column arrays themselves (``copy=False``: no copy, no consolidation).

    An object array goes in as a ``Series`` of dtype object: given the bare array, pandas tries to infer a
    narrower dtype for it, with a scratch array of each numeric kind (~40 bytes a row, the peak of the build).
    """
    import numpy as np
    import pandas as pd

    index = pd.RangeIndex(len(columns["turn"]))
    df = pd.DataFrame({name: pd.Series(values, index=index, dtype=object, copy=False)
                       if isinstance(values, np.ndarray) and values.dtype == object else values
                       for name, values in columns.items()}, index=index, copy=False)
    df.attrs[KIND] = "log"
    return df


def _present(values: list[Any], offset: int) -> tuple[Any, list[Any]] | None:
    """The rows (``offset`` + index) where ``values`` is not None, and those values; None if there are none."""
    import numpy as np

    flags = list(map(is_not, values, repeat(None)))
    if True not in flags:
        return None
    return np.flatnonzero(flags) + offset, list(compress(values, flags))


def _rows(parts: list[Any]) -> Any:
    import numpy as np

    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)


def _columns(msgs: Sequence[Any]) -> dict[str, Any]:
    """Every column, one comprehension a field (C-speed attribute reads), no per-row dict or Series."""
    import numpy as np

    codes = np.array([_ROLE_CODE.get(m.role, -2) for m in msgs], dtype=np.int8)
    if (codes == -2).any():  # a duck-typed message with a role that is no Role: the slow, general way
        codes = np.array([_ROLE_CODE.get(role_of(m), -1) for m in msgs], dtype=np.int8)
    content, chars = _texts([m.content for m in msgs])
    rows, calls = _present([m.tool_calls for m in msgs], 0) or (np.zeros(0, dtype=np.intp), [])
    calls = [[_call_dict(x) for x in c] for c in calls]
    ids = _present([m.tool_call_id for m in msgs], 0) or (np.zeros(0, dtype=np.intp), [])
    files = [list(a) if (a := getattr(m, "attachments", None)) else None for m in msgs]
    metas = _meta_copies(msgs)
    full, meta_rows = _non_empty(metas)
    return _assemble(codes, content, chars, _objects(metas), full, meta_rows, (rows, calls), ids, files)


def _texts(contents: list[Any], checked: bool = False) -> tuple[Any, Any]:
    """The content column (a string array, None shown as '') and its length a row.

    ``checked``: every value is already a str (a parsed file's, None replaced), so no pass needs to look."""
    import numpy as np

    if not checked and None in contents:
        contents = ["" if c is None else c for c in contents]
    if text_only := checked or set(map(type, contents)) <= {str}:
        chars = np.fromiter(map(len, contents), dtype=np.int64, count=len(contents))
    else:
        chars = np.array([len(c) if type(c) is str else len(str(c)) for c in contents], dtype=np.int64)
    return _strings(contents, text_only), chars


def _non_empty(metas: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
    """The non-empty metas and their rows (most messages, user, tool and system ones, carry no meta)."""
    import numpy as np

    flags = list(map(bool, metas))
    return list(compress(metas, flags)), np.flatnonzero(flags) if flags else np.zeros(0, dtype=np.intp)


def _assemble(codes: Any, content: Any, chars: Any, meta: Any, full: list[dict[str, Any]], meta_rows: Any,
              calls: tuple[Any, list[Any]], call_ids: tuple[Any, list[Any]],
              attachments: list[Any] | None = None, lifted: dict[str, list[Iterable[Any]]] | None = None
              ) -> dict[str, Any]:
    """The frame's columns from the fields' values: role codes as an int8 array, the content and meta columns
    made, and for the sparse fields (``full``: the non-empty metas at ``meta_rows``; tool calls and call ids as
    rows and values) only the rows that have them.

    ``attachments``: each message's list of ``Attachment``s, or None; a file read the fast way has none (a line
    naming attachments is read by the strict reader, which locates their bytes). ``lifted``: each meta column's
    values, read from ``full`` already, in chunks (``None``: read here)."""
    import numpy as np
    import pandas as pd

    n = len(codes)
    call_rows, call_values = calls
    # A user message starts a turn unless it is synthetic (a compaction summary).
    starts = codes == _ROLE_CODE["user"]
    if full and "synthetic" in set().union(*full):
        starts[meta_rows[[bool(m.get("synthetic")) for m in full]]] = False
    n_calls = np.zeros(n, dtype=np.int64)
    n_calls[call_rows] = list(map(len, call_values))
    return {
        "turn": np.cumsum(starts, dtype=np.int64),
        "role": pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(list(ROLES))),
        "content": content,
        "tool_calls": _scatter(n, call_rows, call_values),
        "tool_call_id": _strings(_scatter(n, *call_ids, np.nan), text_only=set(map(type, call_ids[1])) <= {str}),
        "attachments": _objects(attachments) if attachments is not None else np.full(n, None, dtype=object),
        "tool_names": _strings(_scatter(n, call_rows, list(map(",".join, map(map, repeat(_NAME), call_values))), ""),
                               text_only=True),
        "n_tool_calls": n_calls,
        "chars": chars,
        **_meta_columns(n, full, meta_rows, lifted),
        "meta": meta,
    }


_COPYABLE = {MappingProxyType, dict}
_NAME = itemgetter("name")


# Role is a StrEnum, so plain strings find their code too; an unknown role is -1 (a missing category).
_ROLE_CODE: dict[Any, int] = {**{r: i for i, r in enumerate(ROLES)}, **{Role(r): i for i, r in enumerate(ROLES)}}


def _meta_copies(msgs: Sequence[Any]) -> list[dict[str, Any]]:
    """A plain dict copy of each message's meta, so editing the frame never reaches the log.

    ``MappingProxyType.copy`` (what ``Message.meta`` is) is ~10x faster than ``dict(proxy)``, which goes
    through the generic mapping protocol.
    """
    try:
        raw = [m.meta for m in msgs]
    except AttributeError:  # duck-typed messages need not carry meta
        raw = [getattr(m, "meta", None) for m in msgs]
    if {type(x) for x in raw} <= _COPYABLE:
        return [x.copy() if x else {} for x in raw]
    return [dict(x) if x else {} for x in raw]


def _strings(values: list[Any] | Any, text_only: bool = False) -> Any:
    """A pandas string array; from an object ndarray it is about twice as fast as from a list.

    An ndarray given is this module's own fresh one. ``text_only``: the caller knows every value is a str or
    ``np.nan`` (the missing value of pandas' ``str`` dtype), so the array is wrapped as it is; otherwise pandas
    converts the values (None becomes NaN, other values text) into a second array.
    """
    import numpy as np
    import pandas as pd

    values = _objects(values) if isinstance(values, list) else values
    dtype = pd.api.types.pandas_dtype("str")
    if not isinstance(dtype, pd.StringDtype):
        # pandas 2 (without future.infer_string): "str" is numpy's fixed-width unicode, n times the longest text
        # (146 MB to build a 22 MB frame), and it turns a missing value into the text "nan". pandas 2's own text
        # columns are object arrays of the strings, NaN where missing, as these are.
        return values if text_only else np.fromiter(
            (v if type(v) is str else np.nan if _missing(v) else str(v) for v in values), dtype=object,
            count=len(values))
    if text_only and isinstance(dtype, pd.StringDtype) and dtype.storage == "python":
        return pd.arrays.StringArray(values, dtype=dtype)  # type: ignore[call-arg]  # the stubs lack dtype
    return pd.array(values, dtype=dtype, copy=False)


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
    """An object array holding the values themselves (lists and dicts are not unpacked).

    ``np.fromiter`` never looks inside the values; assigning a list into an object array checks each one for a
    sequence, about five times slower.
    """
    import numpy as np

    return np.fromiter(values, dtype=object, count=len(values))


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _meta_columns(n: int, full: Sequence[dict[str, Any]], rows: Any,
                  lifted: dict[str, list[Iterable[Any]]] | None = None) -> dict[str, Any]:
    """The explicit meta columns of ``n`` rows; a value of the wrong type shows as missing (it stays in ``meta``).

    Only the non-empty metas (``full``, at the indexes ``rows``) are read, a key's values at once (``dict.get``
    mapped over them, in C), and scattered into full-length columns with one numpy assignment. A column whose
    values all have the expected types (the usual case) is then made by numpy; any other goes value by value.
    ``lifted``: each column's values in ``full``'s order, in chunks, read by the caller (``sessions.columns``).
    """
    import numpy as np
    import pandas as pd

    # `type(v) is` rather than isinstance: JSON values are exact types, and bool must not pass as int. Each
    # column's list of values dies as soon as its array is made, so they are never all alive at once.
    # A key no message has is an empty list (no list, array or mask of n Nones made and dropped: each such scratch
    # raises the process's peak memory a little, ~0.15x a session file over the nine columns).
    keys = set().union(*full) if lifted is None else {
        key for key, chunks in lifted.items() if any(type(c) is not repeat for c in chunks)}

    def values(key: str) -> list[Any]:
        if key not in keys:
            return []
        return _values(full, key) if lifted is None else list(chain.from_iterable(lifted.pop(key)))

    out = {"model": _strings(_scatter(n, rows, _texts_or_nan(values("model")), np.nan), text_only=True)}
    for key in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"):
        out[key] = _masked_column(n, rows, values(key), np.int64, pd.arrays.IntegerArray)
    out["cost"] = _masked_column(n, rows, values("cost"), np.float64, pd.arrays.FloatingArray)
    out["finish_reason"] = _strings(_scatter(n, rows, _texts_or_nan(values("finish_reason")), np.nan),
                                    text_only=True)
    stamps = values("created_at")
    if not set(map(type, stamps)) <= _TEXT_OR_NONE:
        stamps = [v if type(v) is str else None for v in stamps]
    out["created_at"] = _timestamps(n, rows, stamps)
    out["duration_ms"] = _masked_column(n, rows, values("duration_ms"), np.float64, pd.arrays.FloatingArray)
    return out


_TEXT_OR_NONE = {str, type(None)}
_INT_OR_NONE = {int, type(None)}
_NUMBER_OR_NONE = {int, float, type(None)}


def _values(metas: Sequence[dict[str, Any]], key: str) -> list[Any]:
    """Each meta's value under ``key``, None where it has none."""
    return list(map(dict.get, metas, repeat(key)))


def _texts_or_nan(values: list[Any]) -> Any:
    """The texts as an object array, NaN for anything else (None, a number, a dict): set by a mask, since a
    tool result's meta has no model and a reply's no tool name (a third of the rows or more)."""
    import numpy as np

    out = _objects(values)
    if set(map(type, values)) != {str}:
        out[np.fromiter(map(is_not, map(type, values), repeat(str)), dtype=bool, count=len(values))] = np.nan
    return out


def _masked_column(n: int, rows: Any, values: list[Any], dtype: Any, kind: Any) -> Any:
    """A nullable int64 or float64 column of ``values`` at ``rows``: what ``_masked`` makes of them, each value
    shown only if it is an int in int64's range (int64), an int or float that is finite (float64).

    When every value is of those types (or None) numpy converts them all at once; a value it cannot convert
    (an int past int64, or past float64's range) sends the column value by value, as does any other type."""
    import numpy as np

    allowed = _INT_OR_NONE if dtype is np.int64 else _NUMBER_OR_NONE
    if values and set(map(type, values)) <= allowed:
        missing = np.fromiter(map(is_, values, repeat(None)), dtype=bool, count=len(values))
        objects = _objects(values)
        objects[missing] = 0
        try:
            data = objects.astype(dtype)
        except OverflowError:
            data = None
        if data is not None:
            if dtype is np.float64:
                odd = ~np.isfinite(data)
                missing |= odd
                data[odd] = 0
            mask = np.ones(n, dtype=bool)
            full = np.zeros(n, dtype=dtype)
            mask[rows] = missing
            full[rows] = data
            return kind(full, mask)
    if dtype is np.int64:
        shown: list[Any] = [v if type(v) is int and _INT64_MIN <= v <= _INT64_MAX else None for v in values]
    else:
        shown = [None if v is None else _number_or_none(v) for v in values]
    return _masked(n, rows, shown, dtype, kind)


def _timestamps(n: int, rows: Any, stamps: list[str | None]) -> Any:
    """UTC timestamps; parsing only when some message has one (an all-missing column needs no parser)."""
    import numpy as np
    import pandas as pd

    if stamps.count(None) == len(stamps):  # an empty text is still parsed: its unit is what pandas makes of it
        return pd.DatetimeIndex(np.full(n, np.datetime64("NaT", "s"))).tz_localize("UTC")
    # Only the texts are parsed (what pandas infers, the unit, depends on them alone, not on the missing rows), then
    # scattered into a full column: parsing the whole column costs ~8 scratch arrays of n.
    flags = list(map(is_not, stamps, repeat(None)))
    parsed = pd.DatetimeIndex(pd.to_datetime(pd.Series(list(compress(stamps, flags)), dtype=object), utc=True,
                                             errors="coerce", format="ISO8601"))
    # NaT with its unit: a unitless NaT is numpy's deprecated 'generic' unit (a warning on numpy 2.5, an error later).
    out = np.full(n, np.datetime64("NaT", parsed.unit))
    out[rows[np.array(flags, dtype=bool)]] = parsed.tz_localize(None).to_numpy()
    return pd.DatetimeIndex(out).tz_localize(parsed.tz)


def _scatter(n: int, rows: Any, values: list[Any] | Any, fill: Any = None) -> Any:
    """An object array of n ``fill``s with ``values`` (a list, or an object array of this module's) at ``rows``."""
    import numpy as np

    out = np.full(n, fill, dtype=object)
    if len(values):
        out[rows] = values if isinstance(values, np.ndarray) else _objects(values)
    return out


def _masked(n: int, rows: Any, values: list[Any], dtype: Any, kind: Any) -> Any:
    """A nullable numeric array: ``values`` (None for missing) at ``rows``, missing elsewhere."""
    import numpy as np

    mask = np.ones(n, dtype=bool)
    data = np.zeros(n, dtype=dtype)
    if values:
        mask[rows] = [v is None for v in values]
        data[rows] = [0 if v is None else v for v in values]
    return kind(data, mask)


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


def log_from_frame(df: pd.DataFrame) -> Log:
    """Rebuild a ``Log`` from a frame made by ``frame`` (possibly filtered, reordered or edited).

    ``role`` is required; ``content``, ``tool_calls``, ``tool_call_id``, ``meta`` and the meta columns are optional.
    An edited meta column wins over the ``meta`` dict; a bad row raises ``FrameError`` naming its index label.
    """
    if "role" not in df.columns:
        raise FrameError("the frame has no 'role' column; make it with brute_nb.frame(log)")
    n = len(df)
    column = {name: (df[name].tolist() if name in df.columns else [None] * n)
              for name in ("role", "content", "tool_calls", "tool_call_id", "meta", "attachments")}
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
                None if _missing(column["attachments"][i]) else column["attachments"][i],
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
    derived = _meta_columns(len(metas), *_non_empty(metas))
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
    if name in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"):
        return int(value)
    if name == "cost":
        return float(value)
    if name == "duration_ms":
        number = float(value)
        return int(number) if number.is_integer() else number
    return str(value)
