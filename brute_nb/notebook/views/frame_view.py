"""Log frames shown with their text as text: line breaks and tabs in ``content`` and ``result`` break the line in
the cell, instead of pandas' escaped ``\\n`` and ``\\t``; a call's arguments one per line; a map's frame the same
for its replies, with each row's session (a hash file name in a hash folder) as its first characters, so the frame
fits a notebook; a search's notebooks relative to the folder searched; costs in dollars; an unknown value (None,
NaN, NaT) as an empty cell.

Only the display changes (the data keeps every character). A frame is ours when ``frames.KIND`` is in its
``attrs``, which pandas carries through filtering, ``head`` and copies, so ``df[df.role == "tool"]`` reads the
same way. Any other DataFrame gets pandas' own HTML: this formatter is registered for every DataFrame, so it must
give everything else back unchanged. pandas is never imported here: IPython calls the formatter only for an
object that is already a DataFrame.
"""

from __future__ import annotations

import re
from contextlib import suppress
from functools import partial
from html import escape
from typing import Any

TEXT = "white-space:pre-wrap;overflow-wrap:anywhere;text-align:left;display:block;min-width:12em"
TEXT_COLUMNS = frozenset({"content", "result", "arguments", "reasoning", "reply", "error"})
WHOLE_COLUMNS = frozenset({"snippet"})
"""Text bounded where it is made (a search's snippet): shown whole, wrapped, never cut to ``max_colwidth``."""
PATH_COLUMNS = frozenset({"session", "notebook", "path"})
"""A path is shown by its end: the file name is what tells one row's session from the next."""
MONEY_COLUMNS = frozenset({"cost"})
MISSING = re.compile(r"<td>(?:None|NaT|NaN|nan|<NA>)</td>")
BARE = frozenset({"None", "NaT", "NaN", "nan"})
SHORT_NAME = 12
"""A file name's stem longer than this (a hash) shows its first 8 characters; the title holds the whole path."""


def frame_html(df: Any) -> str | None:
    """The frame's HTML: pandas' own for a frame that is not ours or whose labels we did not make.

    ``escape=False`` lets a text cell hold its ``<span>``, so every cell is escaped here instead (pandas' ``<NA>``
    included), and cut to ``display.max_colwidth`` before it is escaped: pandas would cut the markup itself."""
    from pandas import get_option, option_context

    from brute_nb.frames import BASE, KIND  # here, not at the top: %load_ext imports this module and must stay light

    if not df.attrs.get(KIND) or not _plain_labels(df):
        return _pandas_html(df)

    width, precision = get_option("display.max_colwidth"), get_option("display.precision")
    formatters = {name: partial(_formatter(name, df.attrs.get(BASE)), width=width, precision=precision)
                  for name in df.columns}
    rows, shortest = get_option("display.max_rows"), get_option("display.min_rows")
    if rows and len(df) > rows and shortest:
        rows = min(rows, shortest)  # pandas' own rule: a frame too long to show whole shows min_rows of it
    with option_context("display.max_colwidth", None):
        html = str(df.to_html(
            formatters=formatters, escape=False, notebook=True, border=1, max_rows=rows,
            max_cols=get_option("display.max_columns"), show_dimensions=get_option("display.show_dimensions")))
    # pandas writes a missing value itself, never asking the formatters ("None", "NaT", an unescaped "<NA>"): such a
    # cell is made empty. A formatter never gives those words bare (see _cell), so no value is mistaken for one.
    return MISSING.sub("<td></td>", html)


def _pandas_html(df: Any) -> str | None:
    for key in FRAME_NAMES:
        if key in _replaced:
            return _replaced[key](df)  # type: ignore[no-any-return]
    result = df._repr_html_()
    return None if result is None else str(result)


def _formatter(name: str, base: str | None) -> Any:
    if name in TEXT_COLUMNS:
        return _text
    if name in WHOLE_COLUMNS:
        return partial(_text, whole=True)
    if name in PATH_COLUMNS:
        return partial(_path, base=base)
    return _money if name in MONEY_COLUMNS else _cell


def _plain_labels(df: Any) -> bool:
    """Column names and index we can show unescaped: ``escape=False`` applies to labels too, and a user's
    ``set_index("content")`` must not put a model's text into the page as markup. An index of words we made
    (``%brute usage``'s turns and ``total``) is plain when every label is a number or a word that needs no escape."""
    labels = [*df.columns, *(df.index.names or [])]
    simple = all(label is None or (isinstance(label, str) and escape(label) == label) for label in labels)
    if getattr(df.index.dtype, "kind", "O") not in "iu":
        simple = simple and df.attrs.get(_kind()) == "usage" and all(
            isinstance(label, int) or (isinstance(label, str) and escape(label) == label) for label in df.index)
    return simple and df.columns.nlevels == 1


def _kind() -> str:
    from brute_nb.frames import KIND

    return KIND


def _cut(text: str, width: int | None) -> str:
    return text if width is None or len(text) <= width else text[:max(width - 3, 0)] + "..."


def _missing(value: Any) -> bool:
    """None, NaN, and pandas' NA and NaT, told apart without importing pandas."""
    return value is None or (isinstance(value, float) and value != value) or type(value).__name__ in (
        "NAType", "NaTType")


def _path(value: Any, *, width: int | None, precision: int, base: str | None = None) -> str:
    if not isinstance(value, str) or "/" not in value:
        return _cell(value, width=width, precision=precision)
    from pathlib import PurePath

    from brute_nb.confine import inside

    path = PurePath(value)
    if base is not None and inside(path, base):
        shown = str(path.relative_to(base))
    else:
        shown = path.name if len(path.stem) <= SHORT_NAME else path.stem[:8] + "…"
    return f'<span title="{escape(value)}">{escape(shown)}</span>'


def _cell(value: Any, *, width: int | None, precision: int) -> str:
    if _missing(value):
        return ""
    text = f"{value:.{precision}g}" if isinstance(value, float) else escape(_cut(str(value), width))
    return f"<span>{text}</span>" if text in BARE else text  # a real "None" is not a missing value


def _money(value: Any, *, width: int | None, precision: int) -> str:
    if isinstance(value, int | float) and not _missing(value):
        return escape(f"${value:.{precision}g}")
    return _cell(value, width=width, precision=precision)


def _text(value: Any, *, width: int | None, precision: int, whole: bool = False) -> str:
    if isinstance(value, dict):
        value = _arguments(value)
    if not isinstance(value, str):
        return _cell(value, width=width, precision=precision)
    return f'<span style="{TEXT}">{escape(value if whole else _cut(value, width))}</span>'


def _arguments(arguments: dict[Any, Any]) -> str:
    """A call's arguments one a line, ``name: value``, a text value with its own line breaks (a file's content)."""
    import json

    lines = []
    for name, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{name}: {text}")
    return "\n".join(lines)


# Where DataFrame lives, by the name IPython matches it on: "pandas" from pandas 3, "pandas.core.frame" before.
FRAME_NAMES = (("pandas", "DataFrame"), ("pandas.core.frame", "DataFrame"))
_replaced: dict[tuple[str, str], Any] = {}


def register(shell: Any) -> None:
    """Show log frames through ``frame_html`` in this shell (lazily: pandas is looked up by name). A formatter
    registered before ours (another extension's) still shows every frame that is not ours."""
    html = shell.display_formatter.formatters["text/html"]
    for module, name in FRAME_NAMES:
        old = html.for_type_by_name(module, name, frame_html)
        if old is not None and old is not frame_html:
            _replaced[(module, name)] = old


def unregister(shell: Any) -> None:
    html = shell.display_formatter.formatters["text/html"]
    for module, name in FRAME_NAMES:
        with suppress(KeyError):
            html.pop(f"{module}.{name}")
        old = _replaced.pop((module, name), None)
        if old is not None:
            html.for_type_by_name(module, name, old)
