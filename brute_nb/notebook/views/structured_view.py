"""A structured reply (``--schema``) as something to read: records as a table, an object as a key/value table,
the rest as indented JSON.

The reply's text stays the compact JSON the model wrote (the log and ``Message.parsed`` use it); only what the
cell shows changes, because one long JSON line is where a reader stops reading. Every string is escaped here, so
the HTML needs no sanitiser: nothing the model wrote can become markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from typing import Any

from brute_nb.notebook.views.render import WRAP, Bundle

TABLE = "border-collapse:collapse;margin:.3em 0;font-size:inherit"
CELL = "border:1px solid var(--jp-border-color2,#d0d7de);padding:.15em .5em;text-align:left;vertical-align:top"
HEAD = f"{CELL};background:var(--jp-layout-color2,#f6f8fa);font-weight:600"
PRE = f"{WRAP};margin:0"
MAX_ROWS = 200  # a table longer than this is cut with a line saying how many rows are left out; parsed_df has all


def structured_bundle(text: str) -> Bundle | None:
    """The display of a structured reply; None when ``text`` is not JSON (the caller shows it as text)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    html = f'<div class="brute-text brute-structured">{value_html(value)}</div>'
    return {"text/html": html, "text/plain": json.dumps(value, indent=2, ensure_ascii=False)}


def is_records(value: Any) -> bool:
    """A non-empty list of objects: what becomes a DataFrame (``parsed_df``) and reads best as a table."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def value_html(value: Any) -> str:
    if is_records(value):
        return records_html(value)
    if isinstance(value, Mapping) and value:
        rows = "".join(f'<tr><th style="{HEAD}">{escape(str(k))}</th><td style="{CELL}">{cell_html(v)}</td></tr>'
                       for k, v in value.items())
        return f'<table style="{TABLE}"><tbody>{rows}</tbody></table>'
    return f'<pre style="{PRE}">{escape(json.dumps(value, indent=2, ensure_ascii=False))}</pre>'


def cell_html(value: Any) -> str:
    """A value inside a table: scalars as text, records and objects as nested tables, lists of scalars joined."""
    if value is None:
        return '<span style="opacity:.6">null</span>'
    if isinstance(value, str):
        return f'<span style="{WRAP}">{escape(value)}</span>'
    if isinstance(value, bool | int | float):
        return escape(json.dumps(value))
    if isinstance(value, list) and not any(isinstance(v, Mapping | list) for v in value):
        return escape(", ".join(v if isinstance(v, str) else json.dumps(v) for v in value))
    return value_html(value)


def records_html(records: list[Mapping[str, Any]]) -> str:
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(str(k) for k in record))
    head = "".join(f'<th style="{HEAD}">{escape(c)}</th>' for c in columns)
    body = "".join("<tr>" + "".join(f'<td style="{CELL}">{cell_html(r[c]) if c in r else ""}</td>' for c in columns)
                   + "</tr>" for r in records[:MAX_ROWS])
    more = len(records) - MAX_ROWS
    note = (f'<div style="opacity:.7">… {more:,} more rows (all of them: brute_nb.current().last.parsed_df)</div>'
            if more > 0 else "")
    return f'<table style="{TABLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}'
