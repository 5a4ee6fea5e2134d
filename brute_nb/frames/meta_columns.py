"""The explicit meta columns (``model``, the token counts, ``cost``, ``created_at``...): each lifted out of the
messages' meta dicts into a typed column, a value of the wrong type shown as missing (it stays in ``meta``).

Its own module because building a frame and reading one back must compute these columns alike: ``log_from_frame``
recomputes them from ``meta`` and writes back only the cells that differ, so an untouched value keeps its bytes.

The token columns are ``Usage``'s counts (``brute_nb.usage``), the numbers every other reader shows: a reply's meta
holds them as such (``cached_tokens`` is its ``cache_read_tokens``), and the few lines written before that
convention are read the old way, by the rule ``Usage.of_meta`` applies (``usage.left_out``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, compress, repeat
from operator import and_, is_, is_not
from typing import Any

from brute_nb.frames.arrays import _masked, _number_or_none, _objects, _scatter, _strings
from brute_nb.usage import CONVENTION_KEY, LEGACY_READS, input_excludes_cache, left_out

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

META_COLUMNS: tuple[str, ...] = (
    "model", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost", "finish_reason",
    "created_at", "duration_ms",
)
"""Columns lifted out of ``Message.meta`` (providers report these keys)."""
TOKEN_KEYS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens", "cached_tokens": CONVENTION_KEY,
              "cache_write_tokens": "cache_write_tokens"}
"""Each token column and the meta key it shows (in ``Usage``'s convention)."""
LIFTED: tuple[str, ...] = (*META_COLUMNS, CONVENTION_KEY)
"""The meta keys read while a file is parsed (``sessions.columns``): the columns' own, and the convention's mark."""


def _non_empty(metas: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
    """The non-empty metas and their rows (most messages, user, tool and system ones, carry no meta)."""
    import numpy as np

    flags = list(map(bool, metas))
    return list(compress(metas, flags)), np.flatnonzero(flags) if flags else np.zeros(0, dtype=np.intp)


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
    tokens = {column: values(key) for column, key in TOKEN_KEYS.items()}
    legacy = values(LEGACY_READS)
    if legacy:
        _read_legacy(full, tokens, legacy)
    for key in TOKEN_KEYS:
        out[key] = _masked_column(n, rows, tokens[key], np.int64, pd.arrays.IntegerArray)
    out["cost"] = _masked_column(n, rows, values("cost"), np.float64, pd.arrays.FloatingArray)
    out["finish_reason"] = _strings(_scatter(n, rows, _texts_or_nan(values("finish_reason")), np.nan),
                                    text_only=True)
    stamps = values("created_at")
    if not set(map(type, stamps)) <= _TEXT_OR_NONE:
        stamps = [v if type(v) is str else None for v in stamps]
    out["created_at"] = _timestamps(n, rows, stamps)
    out["duration_ms"] = _masked_column(n, rows, values("duration_ms"), np.float64, pd.arrays.FloatingArray)
    return out


def _read_legacy(full: Sequence[dict[str, Any]], tokens: dict[str, list[Any]], legacy: list[Any]) -> None:
    """The token columns of the lines written before ``Usage``'s convention (no ``cache_read_tokens``, their
    cache reads in ``cached_tokens``), read the old way; lines in the convention are untouched. Only a file with
    such lines pays for this pass (``legacy`` is empty when no meta has ``cached_tokens``), and only a provider
    whose old input left the cache out (``usage.input_excludes_cache``) has its input made whole row by row, by the
    rule ``Usage.of_meta`` applies (``usage.left_out``): the loops over every row run in C."""
    from operator import contains, not_

    unmarked = list(map(not_, map(contains, full, repeat(CONVENTION_KEY))))
    if True not in unmarked:
        return
    for column in ("input_tokens", "cached_tokens"):
        if not tokens[column]:
            tokens[column] = [None] * len(full)
    inputs, reads = tokens["input_tokens"], tokens["cached_tokens"]
    if False not in unmarked:  # a file written before the convention: every row reads the old way
        reads[:] = legacy
    else:
        for i in compress(range(len(full)), unmarked):
            reads[i] = legacy[i]
    providers = list(map(dict.get, full, repeat("provider")))
    excludes = {p: input_excludes_cache(p) for p in {p for p in providers if type(p) is str}}
    excluding = [type(p) is str and excludes[p] for p in providers]
    for i in compress(range(len(full)), map(and_, unmarked, excluding)):
        if type(inputs[i]) is int and inputs[i] >= 0:
            inputs[i] += left_out(full[i])


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
