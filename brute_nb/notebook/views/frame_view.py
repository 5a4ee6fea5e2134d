"""Log frames shown with their text as text: line breaks and tabs in ``content`` and ``result`` break the line in
the cell, instead of pandas' escaped ``\\n`` and ``\\t``; a map's frame the same for its replies, with each session
path cut at its start, so the file name shows.

Only the display changes (the data keeps every character). A frame is ours when ``frames.KIND`` is in its
``attrs``, which pandas carries through filtering, ``head`` and copies, so ``df[df.role == "tool"]`` reads the
same way. Any other DataFrame gets pandas' own HTML: this formatter is registered for every DataFrame, so it must
give everything else back unchanged. pandas is never imported here: IPython calls the formatter only for an
object that is already a DataFrame.
"""

from __future__ import annotations

from contextlib import suppress
from functools import partial
from html import escape
from typing import Any

TEXT = "white-space:pre-wrap;overflow-wrap:anywhere;text-align:left;display:block;min-width:12em"
TEXT_COLUMNS = frozenset({"content", "result", "arguments", "reasoning", "reply", "error"})
PATH_COLUMNS = frozenset({"session"})
"""A path is cut at its start, not its end: the file name is what tells one row's session from the next."""


def frame_html(df: Any) -> str | None:
    """The frame's HTML: pandas' own for a frame that is not ours or whose labels we did not make.

    ``escape=False`` lets a text cell hold its ``<span>``, so every cell is escaped here instead (pandas' ``<NA>``
    included), and cut to ``display.max_colwidth`` before it is escaped: pandas would cut the markup itself."""
    from pandas import get_option, option_context

    from brute_nb.frames import KIND  # here, not at the top: %load_ext imports this module and must stay light

    if not df.attrs.get(KIND) or not _plain_labels(df):
        return _pandas_html(df)

    width, precision = get_option("display.max_colwidth"), get_option("display.precision")
    formatters = {name: partial(_text if name in TEXT_COLUMNS else _path if name in PATH_COLUMNS else _cell,
                                width=width, precision=precision) for name in df.columns}
    rows, shortest = get_option("display.max_rows"), get_option("display.min_rows")
    if rows and len(df) > rows and shortest:
        rows = min(rows, shortest)  # pandas' own rule: a frame too long to show whole shows min_rows of it
    with option_context("display.max_colwidth", None):
        return str(df.to_html(
            formatters=formatters, escape=False, notebook=True, border=1, max_rows=rows,
            max_cols=get_option("display.max_columns"), show_dimensions=get_option("display.show_dimensions")))


def _pandas_html(df: Any) -> str | None:
    for key in FRAME_NAMES:
        if key in _replaced:
            return _replaced[key](df)  # type: ignore[no-any-return]
    result = df._repr_html_()
    return None if result is None else str(result)


def _plain_labels(df: Any) -> bool:
    """Column names and index we can show unescaped: ``escape=False`` applies to labels too, and a user's
    ``set_index("content")`` must not put a model's text into the page as markup."""
    labels = [*df.columns, *(df.index.names or [])]
    simple = all(label is None or (isinstance(label, str) and escape(label) == label) for label in labels)
    return simple and getattr(df.index.dtype, "kind", "O") in "iu" and df.columns.nlevels == 1


def _cut(text: str, width: int | None) -> str:
    return text if width is None or len(text) <= width else text[:max(width - 3, 0)] + "..."


def _path(value: Any, *, width: int | None, precision: int) -> str:
    if not isinstance(value, str) or width is None or len(value) <= width:
        return _cell(value, width=None, precision=precision)
    return f'<span title="{escape(value)}">{escape("..." + value[-max(width - 3, 1):])}</span>'


def _cell(value: Any, *, width: int | None, precision: int) -> str:
    if isinstance(value, float) and value == value:  # NaN is shown as pandas shows it, below
        return f"{value:.{precision}g}"
    return escape(_cut(str(value), width))


def _text(value: Any, *, width: int | None, precision: int) -> str:
    if not isinstance(value, str):
        return _cell(value, width=width, precision=precision)
    return f'<span style="{TEXT}">{escape(_cut(value, width))}</span>'


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
