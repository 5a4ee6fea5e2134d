"""Hostile cases: frames (see the package docstring).

What a DataFrame handed to ``brute_nb.map`` (``df.brute.map``, ``estimate``, ``%%brute --over``) may hold, and the
output schema a run is asked to fill: a frame is often loaded from a file someone else made. Tags say what a case is
and what must hold:

- ``value`` (``data``: a cell's value, ``{key}`` standing for the user's API key): the row runs, and its prompt
  holds the value as text, never expanded again as a template and never with the key; a value that cannot become
  text is a clear error naming its column, before any row is asked;
- ``column`` (``data``: a column name): a template naming it with ``{row[...]}`` runs with its value, or is a clear
  error before any row is asked; with ``twice``, the frame has two columns of that name as a template reads it,
  and the run is refused (which value a prompt holds would be a guess);
- ``schema`` (``data``: a field name): a schema with such a field either runs or is refused before any row is asked,
  never failing once the rows are paid for.
"""

from __future__ import annotations

from typing import Any

from tests.security.hostile.case import Case

VALUE = frozenset({"value"})
COLUMN = frozenset({"column"})
SCHEMA = frozenset({"schema"})


class Unprintable:
    """A value whose text cannot be made (a broken ``__repr__``, as a half-built object may have)."""

    def __repr__(self) -> str:
        raise RuntimeError("no text for this value")

    __str__ = __repr__


def _value(id: str, value: Any, expect: str) -> Case:
    return Case(id, value, expect, VALUE)


FRAMES: tuple[Case, ...] = (
    _value("value-a-template", "{w} {row} {__import__('os').getcwd()}",
           "braces in a value are text: never filled again, never evaluated"),
    _value("value-the-key", "the token is {key}", "the user's key in a cell: redacted in what is sent and kept"),
    _value("value-markup", "<img src=x onerror=alert(1)>\x1b[31m", "markup and escapes are text"),
    _value("value-nul", "before\x00after", "a NUL is text"),
    _value("value-huge", "x" * 200_000, "a huge value is bounded in the prompt"),
    _value("value-none", None, "a missing value"),
    _value("value-bytes", b"\xff\xfe", "bytes that are no text"),
    _value("value-unprintable", Unprintable(), "a value whose text cannot be made: named, before any row runs"),
    Case("column-markup", "<b>name</b>", "a column named with markup", COLUMN),
    Case("column-nul", "a\x00b", "a column name with a NUL", COLUMN),
    Case("column-number", 0, "a column named by a number", COLUMN),
    Case("column-row", "row", "a column named like the whole-row name", COLUMN),
    Case("column-dunder", "__class__", "a column named like an attribute of every object", COLUMN),
    Case("column-long", "c" * 5000, "a very long column name", COLUMN),
    Case("column-twice", "w", "two columns of one name, both read: which one a prompt holds is refused, not guessed",
         COLUMN | {"twice"}),
    Case("column-number-and-text", 0, "columns 0 and '0', one name as a template reads it: refused, not guessed",
         COLUMN | {"twice"}),
    *(Case(f"schema-field-{name}", name, f"a schema field named {name!r}, like a column map adds", SCHEMA)
      for name in ("error", "cost", "session", "cached", "input_tokens", "output_tokens")),
    Case("schema-field-reply", "reply", "a schema field named like a plain run's reply column", SCHEMA),
    Case("schema-field-model", "model", "a schema field named like the column escalate= adds", SCHEMA),
)
