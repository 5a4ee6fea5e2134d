"""Pure rendering of a turn's pieces to MIME bundles: no IPython, no I/O, so it is tested as strings.

Every string that reaches HTML passes through ``html.escape``: a tool result, argument or tool name can never
inject markup. Assistant text is emitted as ``text/markdown`` (the frontend renders it); tool calls as static
``<details>`` HTML that needs no kernel and no widget, so saved notebooks show them everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any

from brute_nb.cost import format_usd

RESULT_DISPLAY_CAP = 4000
"""Characters of a tool result shown in the cell; the full result stays in the log and ``%brute tools``."""

ARGS_SUMMARY_CAP = 80

STATUS_STYLE = {
    "running": "color:#8a6d00",
    "ok": "color:#1a7f37",
    "error": "color:#cf222e",
    "denied": "color:#cf222e",
    "interrupted": "color:#8a6d00",
}

Bundle = dict[str, str]


@dataclass
class ToolView:
    """What the cell knows about one tool call, from its start to its result."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]
    status: str = "running"
    result: str | None = None
    duration_ms: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def short_args(arguments: Mapping[str, Any], cap: int = ARGS_SUMMARY_CAP) -> str:
    """``file_path=a.py, start_line=3``: the one-line form for a summary."""
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = " ".join(text.split())
        parts.append(f"{key}={text}")
    line = ", ".join(parts)
    return line if len(line) <= cap else line[: cap - 1] + "…"


def human_size(chars: int) -> str:
    if chars < 1000:
        return f"{chars} chars"
    if chars < 1_000_000:
        return f"{chars / 1000:.1f}k chars"
    return f"{chars / 1_000_000:.1f}M chars"


def human_ms(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _summary_bits(view: ToolView) -> list[str]:
    bits = [view.status]
    if view.duration_ms is not None:
        bits.append(human_ms(view.duration_ms))
    if view.result is not None:
        bits.append(human_size(len(view.result)))
    return bits


def tool_html(view: ToolView, *, open_: bool = False) -> str:
    args = short_args(view.arguments)
    bits = _summary_bits(view)
    style = STATUS_STYLE.get(view.status, "")
    status = f'<span style="{style}">{escape(bits[0])}</span>'
    rest = "".join(f" · {escape(b)}" for b in bits[1:])
    summary = (
        f'<summary><code>{escape(view.name)}</code> <span style="opacity:.75">{escape(args)}</span>'
        f" — {status}{rest}</summary>"
    )
    pretty = json.dumps(dict(view.arguments), indent=2, ensure_ascii=False, default=str)
    body = [f'<div style="margin-left:1em"><div><b>arguments</b></div><pre>{escape(pretty)}</pre>']
    if view.result is not None:
        shown = view.result[:RESULT_DISPLAY_CAP]
        body.append(f"<div><b>result</b></div><pre>{escape(shown)}</pre>")
        if len(view.result) > RESULT_DISPLAY_CAP:
            body.append(
                f"<div><small>showing {RESULT_DISPLAY_CAP:,} of {len(view.result):,} characters; the full result is "
                f"in <code>%brute tools</code> (or <code>brute_nb.current().tool_calls_df</code>)</small></div>"
            )
    for key in ("approval",):
        if key in view.meta:
            body.append(f"<div><small>{escape(key)}: {escape(str(view.meta[key]))}</small></div>")
    body.append("</div>")
    attr = " open" if open_ else ""
    return f'<details class="brute-tool"{attr}>{summary}{"".join(body)}</details>'


def tool_plain(view: ToolView) -> str:
    head = f"[{view.name}] {short_args(view.arguments)} — {' · '.join(_summary_bits(view))}"
    if view.result is None:
        return head
    return head + "\n" + view.result[:RESULT_DISPLAY_CAP]


def tool_markdown(view: ToolView) -> str:
    args = short_args(view.arguments).replace("`", "'")
    head = f"**{_md_escape(view.name)}** `{args}` — {' · '.join(_summary_bits(view))}"
    if view.result is None:
        return head
    fence = "~~~~"
    return f"{head}\n\n{fence}\n{view.result[:RESULT_DISPLAY_CAP]}\n{fence}"


def _md_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_{}[]<>#|" else c for c in text)


def tool_bundle(view: ToolView) -> Bundle:
    return {"text/html": tool_html(view), "text/markdown": tool_markdown(view), "text/plain": tool_plain(view)}


def text_bundle(text: str) -> Bundle:
    return {"text/markdown": text, "text/plain": text}


def footer_text(stats: Mapping[str, Any]) -> str:
    bits = []
    if stats.get("model"):
        bits.append(str(stats["model"]))
    if stats.get("input_tokens") is not None or stats.get("output_tokens") is not None:
        bits.append(f"{stats.get('input_tokens') or 0:,} in / {stats.get('output_tokens') or 0:,} out tokens")
    if stats.get("cached_tokens") or stats.get("cache_write_tokens"):
        reads, writes = stats.get("cached_tokens") or 0, stats.get("cache_write_tokens") or 0
        bits.append(f"{reads:,} cache read / {writes:,} written")
    # An unpriced model (local, fake) shows no price rather than a guess; a replay cost nothing (the recorded
    # price stays in the frame's cost column).
    if stats.get("cost") is not None and not stats.get("replayed"):
        bits.append(format_usd(stats["cost"]))
    n = stats.get("tool_calls", 0)
    bits.append(f"{n} tool call{'s' if n != 1 else ''}")
    if stats.get("elapsed_s") is not None:
        bits.append(f"{stats['elapsed_s']:.1f} s")
    if stats.get("replayed"):
        bits.append("replayed")
    if stats.get("stopped"):
        bits.append(str(stats["stopped"]))
    return " · ".join(bits)


def footer_bundle(stats: Mapping[str, Any]) -> Bundle:
    text = footer_text(stats)
    html = f'<div class="brute-footer" style="opacity:.6;font-size:85%">{escape(text)}</div>'
    return {"text/html": html, "text/markdown": f"*{_md_escape(text)}*", "text/plain": text}


def live_html(segments: list[Any]) -> str:
    """The in-place display while a turn runs: streamed text (escaped, as typed) and tool blocks."""
    out = ['<div class="brute-live">']
    for seg in segments:
        if isinstance(seg, ToolView):
            out.append(tool_html(seg))
        elif seg:
            out.append(f'<div style="white-space:pre-wrap">{escape(seg)}</div>')
    out.append("</div>")
    return "".join(out)


def notice_bundle(text: str, kind: str = "note") -> Bundle:
    style = STATUS_STYLE.get(kind, "")
    return {
        "text/html": f'<div class="brute-{escape(kind)}" style="{style}">{escape(text)}</div>',
        "text/plain": text,
    }
