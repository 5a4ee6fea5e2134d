"""The message frame: one row a message (``frame``), and the column assembly ``sessions.columns.read_frame`` shares.

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
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, repeat
from operator import is_not, itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from brute_nb.frames.arrays import _objects, _scatter, _strings
from brute_nb.frames.meta_columns import _meta_columns, _non_empty
from brute_nb.message import ROLES, Role, ToolCall, role_of

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: tuple[str, ...] = (
    "turn", "role", "content", "tool_calls", "tool_call_id", "attachments", "tool_names", "n_tool_calls",
    "chars", "model", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost", "finish_reason",
    "created_at", "duration_ms", "meta",
)
"""The columns of ``frame(log)``, in order."""

KIND = "brute_nb"
"""The ``attrs`` key marking a frame as a session log (``"log"``) or its tool calls (``"tool_calls"``): the
notebook shows such frames with their text as text (``notebook.views.frame_view``); pandas carries it through
filters."""
BASE = "brute_nb.base"
"""The ``attrs`` key naming the folder a frame's paths are shown relative to (``%brute search``'s hits)."""


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


def _call_dict(call: Any) -> dict[str, Any]:
    """A plain dict copy of a tool call (ToolCall, mapping, or an object with id/name/arguments)."""
    if isinstance(call, Mapping):
        call = ToolCall.coerce(call)
    elif not isinstance(call, ToolCall):
        call = ToolCall(id=getattr(call, "id", ""), name=getattr(call, "name", ""),
                        arguments=getattr(call, "arguments", None))  # type: ignore[arg-type]
    # A copy of the arguments, so editing the frame never reaches into the log's values.
    return {"id": call.id, "name": call.name, "arguments": dict(call.arguments)}
