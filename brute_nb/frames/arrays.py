"""Plain Python values as the numpy and pandas arrays a frame's columns are, without the copies and dtype inference
pandas would do on its own, and the one test of a missing cell.

Building a frame and reading one back share these so a value means the same thing both ways: what ``_strings``
stores as missing, ``_missing`` reads as no value; ``_number_or_none`` decides for every column which numbers show.
"""

from __future__ import annotations

import math
from typing import Any


def _strings(values: list[Any] | Any, text_only: bool = False) -> Any:
    """A pandas string array; from an object ndarray it is about twice as fast as from a list.

    An ndarray given is the frames package's own fresh one. ``text_only``: the caller knows every value is a str or
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


def _scatter(n: int, rows: Any, values: list[Any] | Any, fill: Any = None) -> Any:
    """An object array of n ``fill``s with ``values`` (a list, or an object array the frames package made) at
    ``rows``."""
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


def _missing(value: Any) -> bool:
    """None, NaN, pd.NA and NaT all mean 'no value' in a cell."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    import pandas as pd

    return value is pd.NA or value is pd.NaT
