"""Thumbnails of a turn's attachments, for the cell and the chat panel.

Pure rendering, tested as strings. The invariant: every text shown is escaped, and an image is embedded only when
its bytes are at hand and small (``MAX_BYTES``); anything else is a named chip, so a notebook never balloons and a
missing file never breaks a view.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from html import escape
from typing import Any

from brute_nb.attachments import AttachmentError

MAX_BYTES = 200_000
IMG_STYLE = "max-height:96px;max-width:160px;margin:2px;border:1px solid #d0d7de;border-radius:4px"
CHIP_STYLE = "display:inline-block;margin:2px;padding:1px 6px;border:1px solid #d0d7de;border-radius:10px"


def thumbnails_html(items: Iterable[Any]) -> str:
    parts = []
    for item in items:
        label = escape(f"{item.label} ({item.media_type})")
        data = None
        if item.kind == "image":
            try:
                raw = item.read_bytes()
            except AttachmentError:
                raw = b""
            if 0 < len(raw) <= MAX_BYTES:
                data = base64.b64encode(raw).decode("ascii")
        if data is not None:
            parts.append(f'<img src="data:{escape(item.media_type)};base64,{data}" alt="{label}" title="{label}" '
                         f'style="{IMG_STYLE}">')
        else:
            parts.append(f'<span class="brute-attachment" style="{CHIP_STYLE}">📎 {label}</span>')
    return f'<div class="brute-attachments">{"".join(parts)}</div>' if parts else ""


def thumbnails_bundle(items: Iterable[Any]) -> dict[str, str] | None:
    items = list(items)
    if not items:
        return None
    text = "attached: " + ", ".join(f"{a.label} ({a.media_type})" for a in items)
    return {"text/html": thumbnails_html(items), "text/plain": text}


def turn_attachments(messages: Iterable[Any]) -> list[Any]:
    """The attachments a turn's messages carry (the prompt's and the tool results'), each once, in order."""
    seen: set[str] = set()
    out = []
    for m in messages:
        for item in getattr(m, "attachments", None) or ():
            if item.sha256 not in seen:
                seen.add(item.sha256)
                out.append(item)
    return out
