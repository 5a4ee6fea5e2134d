"""Prompts over a DataFrame: ``brute_nb.map(template, df)``, ``df.brute.map(template)`` and ``%%brute --over df``.

Modules, in the order data flows: ``template`` (fill a row), ``spec`` (settings and row keys), ``cache`` (the
per-row JSONL), ``limiter`` (AIMD concurrency), ``row`` (one row's agent turn), ``local`` / ``cluster`` (the
engines), ``progress``, ``api`` (the public function), ``cost_estimate`` and ``forecast`` (its cost before it runs),
``comparison`` (the same work on other models). Importing this package registers the pandas accessor.
"""

from brute_nb.map import accessor as _accessor  # noqa: F401 - registers df.brute
from brute_nb.map.api import map_rows
from brute_nb.map.comparison import compare
from brute_nb.map.cost_estimate import Estimate
from brute_nb.map.forecast import estimate

map = map_rows  # the public name: brute_nb.map(template, df), like the builtin over rows

__all__ = ["Estimate", "compare", "estimate", "map", "map_rows"]
