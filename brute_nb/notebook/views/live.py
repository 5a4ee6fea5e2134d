"""The live view of a running turn, sent as what changed (O(n) bytes), not re-sent whole at every update.

``LiveOps`` turns the cell's live segments (streamed texts and tool rows) into small operations, remembering what
each segment already sent; ``WidgetLive`` sends them to an anywidget (``LiveWidget``) shown in the cell's live
display, whose script applies them. Operations, per segment index ``i``:

- ``{"i", "a": text}``: append ``text`` to the segment's tail, as a text node (never parsed as HTML);
- ``{"i", "b": html, "t": text}``: append a completed Markdown block, rendered and sanitised in the kernel by
  ``render.markdown_html``, and set the tail to ``text`` (what follows the block so far);
- ``{"i", "h": html}``: replace the segment with ``html`` (a tool row, ``tool_html``: escaped).

A widget message is ``{"o": [op, ...]}``, or, for the usual delta (one append to the segment the previous
operation addressed), the appended text alone as a JSON string (``message``). Work per delta is O(the delta):
``Blocks`` reads each character once for blank lines and fences, and an append is sent without re-reading what
was sent before.

Invariants: model text reaches the page only as text nodes or as ``render``'s sanitised/escaped HTML, as in the
final outputs; no known API key is sent, even cut across deltas (a tail that could be a key's beginning is held
back until it is known not to be, ``redact.key_prefix_at_end``); a block is cut only at a blank line outside a
code fence, so a finished segment's live view reads as its final output. The final outputs are published as today
(``CellView.finish``); the live widget is closed and its display set back to the placeholder (kernel-notes Q4).

The live widget's output only renders while its model lives in the kernel: a turn whose kernel died before it
finished (killed, restarted) would leave "Error displaying widget: model not found" in the saved notebook, since
JupyterLab's widget renderer never falls back to the ``text/html`` of the same output. So the cell also holds a
static copy (``copy_bundle``), an output of its own, as the chat panel has (``chat_static``): what had streamed,
sanitised as the final outputs are, and a line saying the turn did not finish. ``COPY_STYLE`` shows exactly one of
the two: the copy hides while the live view is rendered in its output area, and the widget output hides while its
node holds text alone (its "model not found" line). At the end of the turn the copy goes back to the placeholder
with the live display. It is re-sent whole, so it is brought up to date at most once every ``len / COPY_BYTES_PER_S``
seconds (and never more than once a second): the bytes it adds grow with the reply, not its square.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from html import escape
from pathlib import Path
from typing import Any, Protocol
from uuid import uuid4

from brute_nb.notebook.views import render
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.redact import key_prefix_at_end

LIVE_RATE = 10
"""Live writes a second at most. Every write is an IOPub message of ~600 bytes whatever it carries, and ipykernel
spends ~0.3 ms of CPU on each, so a message per chunk (a fast model sends ~33 a second) cost 4-8x a ``print``
stream's bytes and ~1.8x its CPU to show a chunk 1 ms sooner than anyone can see. At 10 a second a chunk is on
screen within 100 ms (50 ms at the median), as soon as a printed one (ipykernel flushes ``print`` every 0.2 s)."""

COPY_BYTES_PER_S = 1000
"""Bytes a second the static copy may cost while a reply streams: a copy of ``n`` bytes is sent again after
``n / COPY_BYTES_PER_S`` seconds at the earliest, so its messages thin out as it grows and it costs the same few
bytes a second however long the reply (re-sent at a fixed rate, a reply's copies would cost its square). In
exchange it lags further behind as it grows (a 20,000-byte copy up to 20 s), which only shows if the kernel dies
mid-turn. Measured (``bench/stream_bench.py --quick``: 10,000 characters at 33 chunks a second, 50 s): 13 more
messages than the live view's 517, and 63 KB more than its 357 KB."""
COPY_MIN_INTERVAL = 1.0
"""The copy's first write waits this long after the live view's (by then the widget is drawn, so the copy, which
says the turn did not finish, does not flash up first), and it is never sent more often."""
COPY_CLASS = "brute-live-copy"
COPY_STYLE = (
    "<style>"
    f".jp-OutputArea:has(.brute-live) .jp-OutputArea-child:has(.{COPY_CLASS}){{display:none}}"
    # The widget output's own node holds text alone while it waits ("Loading widget...") or failed ("Error
    # displaying widget: model not found"); the live view's node holds elements.
    f".jp-OutputArea:has(.{COPY_CLASS}) .jp-OutputArea-output:not(:has(*)){{display:none}}"
    "</style>"
)
UNFINISHED = ("this turn did not finish (the kernel stopped, or the notebook was saved, while it ran): "
              "above is what had streamed by then")
UNFINISHED_PLAIN = ("this turn did not finish (the kernel stopped, or the notebook was saved, while it ran): "
                    "what had streamed by then is in this output's HTML")
"""The copy's ``text/plain``: the streamed text again would double the copy's bytes for front ends that show no
widgets and no HTML, where nobody would see the copy's reason to exist."""

Op = dict[str, Any]
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)


class Blocks:
    """Where the complete Markdown blocks of a text that only grows end (after a blank line outside a code fence),
    looking at each character once: a long paragraph or code fence costs O(its length) over the whole stream, not
    O(length) at every delta."""

    __slots__ = ("cut", "fence", "pos", "searched")

    def __init__(self) -> None:
        self.cut = 0  # the end of the last complete block
        self.pos = 0  # where the lines not yet read for fences begin (just after a blank line)
        self.searched = 0  # no blank line starts between ``pos`` and here
        self.fence = ""  # the fence open at ``pos``

    def end(self, text: str) -> int:
        """The end of the last complete block in ``text`` (this object's text, grown since the last call)."""
        while True:
            blank = text.find("\n\n", max(self.pos, self.searched))
            if blank < 0:
                self.searched = max(self.pos, len(text) - 1)  # a blank line may straddle the end
                return self.cut
            for m in _FENCE.finditer(text, self.pos, blank):
                mark = m.group(1)
                if not self.fence:
                    self.fence = mark
                elif mark[0] == self.fence[0] and len(mark) >= len(self.fence):
                    self.fence = ""
            if not self.fence:
                self.cut = blank + 2
            self.pos = blank + 2


class _Text:
    """What one streamed text segment has sent: blocks up to ``rendered``, the tail's text up to ``sent``."""

    __slots__ = ("blocks", "done", "rendered", "sent")

    def __init__(self) -> None:
        self.rendered = 0
        self.sent = 0
        self.done = False
        self.blocks = Blocks()


class LiveOps:
    """The operations that bring a live view from what it was last sent to ``segments`` as they are now."""

    def __init__(self) -> None:
        self._texts: dict[int, _Text] = {}
        self._rows: dict[int, tuple[Any, ...]] = {}

    def diff(self, segments: list[str | ToolView], streaming: bool) -> list[Op]:
        """``streaming``: the last text segment may still grow (its tail is shown as text, blocks as they end)."""
        ops: list[Op] = []
        last = len(segments) - 1
        for i, seg in enumerate(segments):
            if isinstance(seg, ToolView):
                key = (seg.status, seg.duration_ms, None if seg.result is None else len(seg.result),
                       seg.meta.get("approval"))
                if self._rows.get(i) != key:
                    self._rows[i] = key
                    ops.append({"i": i, "h": tool_html(seg)})
            elif seg:
                ops.extend(self._text(i, str(seg), open_=streaming and i == last))
        return ops

    def _text(self, i: int, text: str, open_: bool) -> list[Op]:
        state = self._texts.setdefault(i, _Text())
        if state.done:
            return []
        if not open_:  # complete: the rest as one rendered block, as the final output shows it
            state.done = True
            rest = text[state.rendered:]
            return [{"i": i, "b": render.markdown_html(rest), "t": ""}] if rest.strip() else (
                [{"i": i, "b": "", "t": ""}] if state.sent > state.rendered else [])
        safe = len(text) - key_prefix_at_end(text)
        cut = state.blocks.end(text)
        if cut > state.rendered:
            block = text[state.rendered:cut]
            state.rendered = cut
            state.sent = max(cut, safe)
            return [{"i": i, "b": render.markdown_html(block) if block.strip() else "",
                     "t": render.plain(text[cut:state.sent])}]
        if safe > state.sent:
            piece, state.sent = text[state.sent:safe], safe
            return [{"i": i, "a": render.plain(piece)}]
        return []


def live_html(segments: list[str | ToolView]) -> str:
    """The whole live display while a turn runs, for a view with no live sink: streamed text (escaped, as typed)
    and tool rows."""
    out = ['<div class="brute-live">']
    out.extend(tool_html(seg) if isinstance(seg, ToolView) else render.streamed_html(str(seg))
               for seg in segments if isinstance(seg, ToolView) or seg)
    out.append("</div>")
    return "".join(out)


def copy_bundle(segments: list[str | ToolView], streaming: bool) -> dict[str, str]:
    """The static copy of a live view showing ``segments`` (``streaming``: the last text may still grow, so a
    key's beginning at its end is held back, as ``LiveOps`` does): text as sanitised Markdown, tool rows escaped,
    as the final outputs render them, then the line saying the turn did not finish."""
    html: list[str] = []
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if isinstance(seg, ToolView):
            html.append(tool_html(seg))
        elif seg:
            shown = str(seg)
            if streaming and i == last:
                shown = shown[:len(shown) - key_prefix_at_end(shown)]
            html.append(render.markdown_html(shown))
    note = f'<div class="brute-unfinished" style="{render.WARN}">{escape(UNFINISHED)}</div>'
    return {"text/html": render.one_block(f'{COPY_STYLE}<div class="{COPY_CLASS}">{"".join(html)}{note}</div>'),
            "text/plain": UNFINISHED_PLAIN}


def copy_wait(bundle: Mapping[str, str]) -> float:
    """Seconds before a copy may be sent again after ``bundle``: its bytes spread at ``COPY_BYTES_PER_S``."""
    return max(COPY_MIN_INTERVAL, sum(len(part) for part in bundle.values()) / COPY_BYTES_PER_S)


class LiveSink(Protocol):
    def send(self, display_id: str, ops: list[Op]) -> None: ...

    def close(self) -> None: ...


class NoLive:
    """For runs nobody watches (nbclient, nbval, papermill: no stdin): nothing is sent until the final outputs."""

    def send(self, display_id: str, ops: list[Op]) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing shown."""


def _update(bundle: Mapping[str, Any], display_id: str) -> None:
    from IPython.display import update_display

    update_display(dict(bundle), raw=True, display_id=display_id)  # type: ignore[no-untyped-call]


class WidgetLive:
    """Shows a ``LiveWidget`` in the live display at the first write, then sends it each write's operations."""

    def __init__(self, update: Callable[[Mapping[str, Any], str], None] = _update) -> None:
        self._update = update
        self._widget: Any = None
        self._shown = ""
        self._last = -1  # the segment the widget's last operation addressed

    def send(self, display_id: str, ops: list[Op]) -> None:
        if not ops:
            return
        if self._widget is None or display_id != self._shown:
            self.close()
            self._widget = live_widget()
            self._shown = display_id
            self._last = -1
            self._update({**self._widget._repr_mimebundle_()[0], "text/plain": ""}, display_id)
        self._widget.send(message(ops, self._last))
        self._last = ops[-1]["i"]

    def close(self) -> None:
        widget, self._widget = self._widget, None
        if widget is not None:
            widget.close()


def message(ops: list[Op], last: int) -> Any:
    """The widget message for ``ops``: the appended text alone (a JSON string) for the usual delta, one append to
    the segment the last operation addressed (``last``); ``{"o": ops}`` otherwise. Each message rides in an IOPub
    envelope of ~600 bytes, so the few bytes saved are all the payload there is to save."""
    if len(ops) == 1 and ops[0]["i"] == last and ops[0].keys() == {"i", "a"}:
        return ops[0]["a"]
    return {"o": ops}


def live_widget() -> Any:
    """A new ``LiveWidget`` (anywidget is imported here, at the first streamed reply, never by ``%load_ext``)."""
    import anywidget
    import traitlets

    class LiveWidget(anywidget.AnyWidget):
        """The live part of a running turn; see the module docstring for the operations it applies."""

        _esm = traitlets.Unicode(ESM).tag(sync=True)
        key = traitlets.Unicode("").tag(sync=True)

    return LiveWidget(key=uuid4().hex)


# The model keeps the segments as sent (operations can arrive before a view exists, and a view can be drawn again);
# each view applies the same operations to its own nodes. Text goes in text nodes; "b" and "h" hold HTML the
# kernel rendered and sanitised (render.markdown_html) or escaped (tool_html).
ESM = Path(__file__).with_name("live.js").read_text(encoding="utf-8")
