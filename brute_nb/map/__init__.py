"""Prompts over a DataFrame: ``brute_nb.map(template, df)``, ``df.brute.map(template)`` and ``%%brute --over df``.

An engine: it imports nothing of the notebook. What it needs from whoever drives it (where rows are saved, the
defaults, how ``tools=`` is read, who confirms a cost) is a ``context.MapContext``; in a kernel the notebook's front
door (``notebook/front/map_api.py``) builds it from the kernel's settings, elsewhere (plain Python, a Dask worker)
a run gets ``context.default_context()``.

Modules, in the order data flows: ``context`` (what a run takes from its driver), ``template`` (fill a row),
``spec`` (settings and row keys), ``cache`` (the per-row JSONL), ``limiter`` (AIMD concurrency), ``row`` (one row's
agent turn), ``local`` / ``cluster`` (the engines), ``progress``, ``api`` (the public function), ``cost_estimate``
and ``forecast`` (its cost before it runs), ``comparison`` (the same work on other models).

Names load on first use (PEP 562), so the notebook can hand its context to ``context`` at ``%load_ext`` without
importing pandas; the pandas accessor (``df.brute``) comes with pandas' import there (``pandas_hook``), and with
the first of the engine's functions to load anywhere.
"""

from typing import TYPE_CHECKING, Any

from brute_nb import _lazy

if TYPE_CHECKING:
    from brute_nb.map.api import map, map_rows
    from brute_nb.map.comparison import compare
    from brute_nb.map.context import MapContext, default_context
    from brute_nb.map.cost_estimate import Estimate
    from brute_nb.map.forecast import estimate

_EXPORTS = _lazy.exports({
    "brute_nb.map.api": ("map", "map_rows"),
    "brute_nb.map.comparison": ("compare",),
    "brute_nb.map.context": ("MapContext", "default_context"),
    "brute_nb.map.cost_estimate": ("Estimate",),
    "brute_nb.map.forecast": ("estimate",),
})
CONTEXT = ("MapContext", "default_context")
"""Light names: the notebook's front door reads them at ``%load_ext``; they bring no pandas and no accessor."""


def __getattr__(name: str) -> Any:
    value = _lazy.load(__name__, _EXPORTS, name)
    if name not in CONTEXT:
        from brute_nb.map import accessor  # noqa: F401 - df.brute arrives with the engine (and pandas)
    return value


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)


__all__ = ["Estimate", "MapContext", "compare", "default_context", "estimate", "map", "map_rows"]
