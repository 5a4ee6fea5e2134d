"""Turning whatever a tool returned into the text the model reads.

Results are strings; a figure, an image or an ``Attachment`` rides along as the result's attachment, and the text
is what the tool returned beside it, nothing added. A dict is rendered as readable ``key: value`` lines, a
multi-line string value (a diff, a page) as a block under its key, so nothing collapses into one 2,000-character
line (Brute's inspect-string bug); other values become JSON. Then the universal truncation runs, unless the tool
already truncated itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

from brute_nb.tools.truncation import ToolOutput, truncate


def render(value: Any) -> ToolOutput:
    if value.__class__ is str:  # most results: no figure or image to look for
        return ToolOutput(value, is_error=value.startswith("Error:"))
    if isinstance(value, ToolOutput):
        return value
    pictures = _pictures(value)
    if pictures is not None:
        return pictures
    if value is None:
        return ToolOutput("")
    if isinstance(value, str):
        return ToolOutput(value, is_error=value.startswith("Error:"))
    if isinstance(value, Mapping):
        return ToolOutput(render_mapping(value), is_error=bool(value.get("error")))
    if isinstance(value, list | tuple | int | float | bool):
        return ToolOutput(to_json(value))
    return ToolOutput(str(value))


def _pictures(value: Any) -> ToolOutput | None:
    """A figure, an image or an Attachment (alone, or in a list beside text) as a result that carries them."""
    from brute_nb.attachments import Attachment, attachment, is_attachable

    items = value if isinstance(value, list | tuple) else [value]
    if not any(isinstance(v, Attachment) or is_attachable(v) for v in items):
        return None
    files = tuple(attachment(v) for v in items if isinstance(v, Attachment) or is_attachable(v))
    texts = [v if isinstance(v, str) else to_json(v) for v in items if not (isinstance(v, Attachment)
                                                                             or is_attachable(v))]
    # The text is the tool's own: each file travels in its API's form for a file in a tool result, named there as
    # the tool named it where the form has a name (``transports.attachment_blocks``); no line of ours is added.
    return ToolOutput("\n".join(texts), attachments=files)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def render_mapping(value: Mapping[str, Any]) -> str:
    lines = []
    for key, item in value.items():
        if isinstance(item, str) and "\n" in item:
            lines.append(f"{key}:\n{item.rstrip(chr(10))}")
        elif isinstance(item, str):
            lines.append(f"{key}: {item}")
        else:
            lines.append(f"{key}: {json.dumps(item, ensure_ascii=False, default=str)}")
    return "\n".join(lines)


def finish(value: Any, overflow_dir: str | os.PathLike[str] | None = None) -> ToolOutput:
    """Render, then apply the universal truncation unless the tool already did."""
    out = render(value)
    if out.truncated:
        return out
    capped = truncate(out.text, directory=overflow_dir)
    return dataclasses.replace(out, text=capped.text, truncated=capped.text != out.text,
                               overflow_path=capped.overflow_path)


def error_text(exc: BaseException) -> str:
    return f"Error: {type(exc).__name__}: {exc}"
