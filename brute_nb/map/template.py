"""A map's template, filled per row by the same ``{...}`` rules as a ``%%brute`` cell (``brute_nb.fill.expand``).

A row's namespace is its columns by name, plus ``row`` (the whole row as a dict, for a column whose name is not an
identifier: ``{row["unit price"]}``). The invariant: a field naming something that is neither a column nor a
builtin is refused before any row runs (a typo would otherwise reach the model as literal ``{revew}`` text on
every row), and the row key depends only on the columns the template reads.
"""

from __future__ import annotations

import builtins
import string
from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.errors import SettingsError

ROW = "row"


def fields(template: str) -> list[str]:
    """The ``{...}`` expressions of the template, in order (empty when its braces do not parse)."""
    try:
        return [f for _, f, _, _ in string.Formatter().parse(template) if f]
    except ValueError:
        return []


def names_read(template: str) -> set[str]:
    """Every name the template's fields read (a field that does not compile reads nothing: it stays text)."""
    names: set[str] = set()
    for field in fields(template):
        try:
            names.update(compile(field.strip(), "<template>", "eval").co_names)
        except SyntaxError:
            continue
    return names


def columns_read(template: str, columns: Iterable[Any]) -> list[str]:
    """The columns a row's prompt depends on: those named, or all of them when the template reads ``row``."""
    cols = [str(c) for c in columns]
    names = names_read(template)
    if ROW in names and ROW not in cols:
        return cols
    return [c for c in cols if c in names]


def check(template: str, columns: Iterable[Any]) -> None:
    """Refuse an empty template, or one naming a column the frame lacks (every such name listed)."""
    if not isinstance(template, str) or not template.strip():
        raise SettingsError("map() needs a template: a prompt with {column} fields, e.g. 'Classify: {review}'")
    cols = {str(c) for c in columns}
    unknown = sorted(n for n in names_read(template) if n not in cols and n != ROW and not hasattr(builtins, n))
    if unknown:
        raise SettingsError(f"the template reads {', '.join(unknown)}, which the frame has no column for; columns: "
                            f"{', '.join(sorted(cols)) or '(none)'} (use {{row[\"name\"]}} for any column)")
    read = columns_read(template, columns)
    twice = sorted({c for c in read if read.count(c) > 1})
    if twice:  # a row's prompt would hold whichever came last
        raise SettingsError(f"the frame has more than one column named {', '.join(repr(c) for c in twice)} (as "
                            "text), which the template reads: rename them apart (df.columns = [...]) first")


def fill(template: str, row: Mapping[str, Any]) -> str:
    """The row's prompt."""
    from brute_nb.fill import expand

    return expand(template, {**row, ROW: dict(row)})
