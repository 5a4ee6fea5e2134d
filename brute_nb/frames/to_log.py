"""An edited frame back into a ``Log`` (``log_from_frame``), keeping ``log_from_frame(frame(log)) == log``.

The ``meta`` column is the truth for each message's meta; an explicit meta column is written back into it only where
it differs from what ``meta`` alone shows (recomputed by ``meta_columns``, as ``frame`` computed it), so a filter or
reorder changes nothing and an edit changes only its key. A bad row raises ``FrameError`` naming its index label.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from brute_nb.errors import FrameError
from brute_nb.frames.arrays import _missing
from brute_nb.frames.meta_columns import META_COLUMNS, TOKEN_KEYS, _meta_columns, _non_empty
from brute_nb.log import Log
from brute_nb.message import Message
from brute_nb.usage import in_convention

if TYPE_CHECKING:
    import pandas as pd


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
        if not edits[i].keys().isdisjoint(TOKEN_KEYS):
            # An edited count is in Usage's convention, as the column showed it: an old line's counts are moved to
            # the convention first, so the old reading is not applied to the new number.
            meta = in_convention(meta)
        for name, value in edits[i].items():
            key = TOKEN_KEYS.get(name, name)
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
