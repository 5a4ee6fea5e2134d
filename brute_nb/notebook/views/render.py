"""Pure rendering of a turn's text, footer and notices to MIME bundles, and the text safety every view uses: no
IPython, no I/O, so it is tested as strings. A tool row has a model of its own (``tool_row``) and one renderer
module per output form (``tool_html``, ``tool_markdown``, ``tool_text``), built on the helpers here.

Model text and tool results may be written by an attacker (a page or file the agent read), so three invariants:

* Nothing they hold reaches a renderer as live HTML. Tool results, arguments and names pass through
  ``html.escape``; assistant Markdown is rendered here (mistune, raw HTML escaped) and then sanitised with an
  allow-list (nh3: no scripts, handlers, styles beyond table alignment, ``javascript:``/``data:`` links). Text is
  published as that ``text/html`` plus ``text/plain``, never as ``text/markdown``: JupyterLab and nbconvert
  render raw HTML inside Markdown, and every exporter prefers the sanitised HTML.
* Nothing loads from the network: images become links the user may click (a remote image's URL can carry a
  secret out), and no ``<img>`` survives sanitising.
* Plain text carries no terminal escape sequences (ANSI colours, OSC titles, hyperlinks or clipboard writes) and
  no API key (``brute_nb.redact``); a tool result's Markdown fence is longer than any run of ``~`` in it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from html import escape
from typing import Any

from brute_nb.cost import format_usd
from brute_nb.redact import redact, redact_stream

WRAP = "white-space:pre-wrap;overflow-wrap:anywhere"


def tone(variable: str, fallback: str) -> str:
    """A colour of JupyterLab's theme (``--jp-success-color1``...) pulled 30% toward the theme's text colour, so it
    reads at 4.5:1 or more on Lab's light and dark backgrounds alike (the bare colour-1s reach 2.7-4.4:1 on one
    or the other); ``fallback`` first, for renderers without ``color-mix`` or Lab's variables (static exports)."""
    return (f"color:{fallback};color:color-mix(in srgb,var({variable},{fallback}) 70%,"
            "var(--jp-content-font-color1,#000))")


WARN = tone("--jp-warn-color1", "#8a6d00")
SUCCESS = tone("--jp-success-color1", "#1a7f37")
FAILURE = tone("--jp-error-color1", "#cf222e")

STATUS_STYLE = {
    "running": WARN,
    "waiting for approval": WARN + ";font-weight:bold",
    "queued": "opacity:.7",
    "ok": SUCCESS,
    "error": FAILURE,
    "denied": FAILURE,
    "interrupted": WARN,
    "server": tone("--jp-info-color1", "#0550ae"),
}
"""The colour a status reads in: a tool row's (``tool_html``) and a notice's."""

Bundle = dict[str, str]

CUT_OFF_NOTICE = ("the reply was cut off: the model reached its output limit (max_tokens) before it finished; "
                  "ask it to continue")

_TERMINAL = re.compile(
    r"\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC (title, hyperlink, clipboard), to BEL or ST
    r"|\x1b[P^_X][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, PM, APC, SOS strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor moves, erase)
    r"|\x1b[ -/]*[0-~]"  # the other two- and three-byte escapes
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"  # lone controls, bidi overrides
)
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")

SAFE_TAGS = frozenset({
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub",
})
"""What rendered Markdown may contain: no ``img``, ``svg``, ``iframe``, forms, ``style`` or ``script``."""
SAFE_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"style"}, "td": {"style"}}
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})


def plain(text: str) -> str:
    """``text`` safe for a terminal or a ``text/plain`` output: no escape sequences or control characters (tabs
    and newlines kept, a carriage return becomes a newline so it cannot overwrite what a line showed) and no
    API key."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _TERMINAL.sub("", redact(text))


def visible(text: str) -> str:
    """``text`` with every invisible or reordering character shown as ``\\uXXXX``: for what a person must read
    exactly (an approval), where stripping would hide that something was there."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def fence(text: str, char: str = "~") -> str:
    """A Markdown code fence ``text`` cannot close: longer than the longest run of ``char`` in it."""
    runs = re.findall(f"{re.escape(char)}+", text)
    return char * max(4, max((len(r) for r in runs), default=0) + 1)


def md_escape(text: str) -> str:
    """``text`` read as itself in Markdown: every character Markdown could give a meaning is backslash-escaped."""
    return "".join("\\" + c if c in "\\`*_{}[]<>#|" else c for c in text)


@cache
def _markdown() -> Any:
    import mistune

    class NoImages(mistune.HTMLRenderer):
        """Images become links: loading a remote image sends its URL (and any secret in it) to its server."""

        def image(self, text: str, url: str, title: str | None = None) -> str:
            return self.link(f"image: {text}" if text else "image", url, title)

    return mistune.create_markdown(renderer=NoImages(escape=True), plugins=["strikethrough", "table", "url"])


@cache
def _cleaner() -> Any:
    """One ``nh3.Cleaner`` for the process: ``nh3.clean`` builds its allow-lists anew on every call, 6-7x the
    cleaning of a short reply itself (~50 of ~57 us)."""
    import nh3

    return nh3.Cleaner(tags=set(SAFE_TAGS), attributes={k: set(v) for k, v in SAFE_ATTRIBUTES.items()},
                       url_schemes=set(SAFE_SCHEMES), filter_style_properties={"text-align"},
                       link_rel="noopener noreferrer nofollow")


def sanitize(html: str) -> str:
    """An HTML fragment cut down to ``SAFE_TAGS``/``SAFE_ATTRIBUTES`` with http(s)/mailto links only."""
    return str(_cleaner().clean(html))


def markdown_html(text: str) -> str:
    """Assistant Markdown as inert HTML: raw HTML escaped, images as links, then sanitised by allow-list."""
    return one_block(f'<div class="brute-text">{sanitize(_markdown()(plain(text)))}</div>')


def one_block(html: str) -> str:
    """``html`` on one line, its newlines as ``&#10;`` (the same text in a ``<pre>``, mere space elsewhere).

    ``nbconvert --to markdown`` pastes an output's HTML into the Markdown; a blank line would end that HTML
    block and the rest of a tool result (``![x](https://...)``, raw ``<img>``) would be read as live Markdown.
    """
    return html.replace("\r", "").replace("\n", "&#10;")


def sources_text(citations: Any) -> str:
    """A reply's citations as a Markdown list of links (each source once), for under the reply; empty if none.

    Titles and cited text come from the web: Markdown-escaped here, and the list is rendered like any reply text
    (raw HTML escaped, links other than http(s) dropped)."""
    seen: dict[str, list[str]] = {}
    for c in citations or ():
        url = str(c.get("url") or "") if isinstance(c, Mapping) else ""
        if not url.startswith(("http://", "https://")) or any(ch in url for ch in " <>\n"):
            continue
        quote = str(c.get("cited_text") or "").strip()
        entry = seen.setdefault(url, [plain(str(c.get("title") or url))])
        if quote and len(entry) < 3:
            entry.append(quote)
    lines = []
    for n, (url, (title, *quotes)) in enumerate(seen.items(), 1):
        said = "".join(f" — “{md_escape(plain(q[:200]))}”" for q in quotes)
        lines.append(f"{n}. [{md_escape(title)}](<{url}>){said}")
    return "Sources:\n\n" + "\n".join(lines) if lines else ""


def text_bundle(text: str) -> Bundle:
    """Assistant text: sanitised HTML and plain text, no ``text/markdown`` (see the module docstring)."""
    return {"text/html": markdown_html(text), "text/plain": plain(text)}


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
    if stats.get("cut_off"):
        bits.append("cut off at max_tokens")
    if stats.get("stopped"):
        bits.append(str(stats["stopped"]))
    return " · ".join(bits)


def footer_bundle(stats: Mapping[str, Any]) -> Bundle:
    text = plain(footer_text(stats))
    html = one_block(f'<div class="brute-footer" style="opacity:.6;font-size:85%">{escape(text)}</div>')
    return {"text/html": html, "text/markdown": f"*{md_escape(text)}*", "text/plain": text}


def streamed_html(text: str) -> str:
    """A text segment of the live display while it streams: escaped as typed (its Markdown is rendered when its
    block is complete), no terminal escape, no key (a key's beginning at the end is held back)."""
    return f'<div style="white-space:pre-wrap">{escape(_TERMINAL.sub("", redact_stream(text)))}</div>'


def compaction_text(payload: Mapping[str, Any]) -> str:
    """The ``compacted`` event in one line: what ran, what it saved, and that nothing was lost."""
    layers = ", ".join(str(layer) for layer in payload.get("layers") or ()) or str(payload.get("layer", ""))
    removed, rewritten = payload.get("removed") or (), payload.get("rewritten") or ()
    count = (len(removed) if isinstance(removed, list | tuple) else int(removed or 0),
             len(rewritten) if isinstance(rewritten, list | tuple) else int(rewritten or 0))
    return (f"history compacted by {layers}: {payload.get('tokens_before', 0):,} → "
            f"{payload.get('tokens_after', 0):,} tokens, {payload.get('messages_before', 0)} → "
            f"{payload.get('messages_after', 0)} messages ({count[0]} removed, {count[1]} rewritten; "
            "the originals are in the session's archive file)")


def notice_bundle(text: str, kind: str = "note") -> Bundle:
    text = plain(text)
    style = STATUS_STYLE.get(kind, "")
    return {
        "text/html": one_block(f'<div class="brute-{escape(kind)}" style="{style}">{escape(text)}</div>'),
        "text/plain": text,
    }
