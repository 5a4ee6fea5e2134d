"""The beta flags a request is sent with: what the user asked for and what the request itself carries.

An API that takes a feature only under a beta header (Anthropic's ``anthropic-beta``: the MCP connector, the
advisor tool, context editing, compaction) refuses a request carrying it without that header, and a feature comes
in by more ways than the option that turned it on: a server tool, an option (``-o context_management=...``), a
block of one kept in the log and sent back on a later turn, after the tool is gone. The invariant: a request
carrying a feature of the profile's ``betas`` table is sent with its beta, beside the user's own (``-o
betas=[...]``, or an ``anthropic-beta`` in ``-o extra_headers``), all in ``betas`` (the SDK lets an
``extra_headers`` entry replace the header its ``betas`` build, which would drop the rest). Pure: a request's
keyword arguments in, the same out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

HEADER = "anthropic-beta"
"""The header a beta goes in (``AnthropicBetaParam``'s), read out of ``extra_headers`` into ``betas``."""


def with_betas(kwargs: Mapping[str, Any], table: Mapping[str, str]) -> dict[str, Any]:
    """``kwargs`` with ``betas``: the user's, those of an ``anthropic-beta`` extra header, and those ``table``
    names for a feature the request carries; none when there are none (the plain call is made then)."""
    out = dict(kwargs)
    headers = dict(out.pop("extra_headers", None) or {})
    given = [str(b) for b in out.pop("betas", None) or ()]
    for name in [k for k in headers if k.strip().lower() == HEADER]:
        given += [b.strip() for b in str(headers.pop(name)).split(",") if b.strip()]
    wanted = list(dict.fromkeys([*given, *needed(kwargs, table)]))
    if wanted:
        out["betas"] = wanted
    if headers:
        out["extra_headers"] = headers
    return out


def needed(kwargs: Mapping[str, Any], table: Mapping[str, str]) -> list[str]:
    """The betas of the features in ``kwargs``: its parameters, its tools' types, its messages' block types, its
    context edits' types."""
    edits = kwargs.get("context_management")
    carried = set(kwargs) | set(_types(kwargs.get("tools"))) | {
        kind for m in kwargs.get("messages") or () if isinstance(m, Mapping) for kind in _types(m.get("content"))}
    carried |= set(_types(edits.get("edits"))) if isinstance(edits, Mapping) else set()
    return list(dict.fromkeys(beta for feature, beta in table.items() if feature in carried))


def _types(items: Any) -> Iterator[str]:
    if isinstance(items, list | tuple):
        yield from (str(i["type"]) for i in items if isinstance(i, Mapping) and "type" in i)
