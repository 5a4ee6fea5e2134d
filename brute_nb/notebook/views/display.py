"""CellView: shows one turn in the cell that ran it, rendering the turn's ``TurnModel`` (``turn_model``).

While the turn runs, one display (``display_id``) shows it live. With a ``live`` sink (a kernel's cells: the
``live.WidgetLive`` anywidget), only what changed is sent (``live.LiveOps``: appended text, completed Markdown
blocks, changed tool rows), at most ``LIVE_RATE`` writes a second, so a reply costs O(its length) on the wire.
Without one (tests, benchmarks) the whole live HTML is re-sent through ``update``, at most ``MAX_UPDATES_PER_S``
times a second. Either way writes go through a ``Coalescer``: the latest text always shown within one interval,
also when the stream pauses; the widget's first write waits one interval, so a turn over by then (a short reply)
never creates it. Beside the live widget, a static copy of what streamed (``live.copy_bundle``) is what JupyterLab
shows if the kernel dies before the turn ends (instead of "model not found"), kept up to date by a coalescer of its
own at a rate that falls as the copy grows. At the end both displays are set back to their fixed placeholder and
the final transcript is published as new outputs built from the log itself: nbval ignores display updates, so this
keeps stored notebooks and fresh runs identical (kernel-notes Q4).

An approval question asked in the cell (``asker``) must appear where the tool is, not above the transcript: the
answered prompt is an output of its own, so what the turn showed up to that tool is published as final outputs
first (the tool's row with its own display id, saying "waiting for approval" and updated in place as it runs),
then the question, then a new live display for the rest of the turn. Runs headless (nbval) never ask.
"""

from __future__ import annotations

import itertools
import os
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from brute_nb.notebook.views import render
from brute_nb.notebook.views.coalesce import MAX_UPDATES_PER_S, Coalescer, StartTimer, start_thread_timer
from brute_nb.notebook.views.live import (
    COPY_MIN_INTERVAL,
    LIVE_RATE,
    LiveOps,
    LiveSink,
    NoLive,
    copy_bundle,
    copy_wait,
    live_html,
)
from brute_nb.notebook.views.structured_view import structured_bundle
from brute_nb.notebook.views.thumbnails import thumbnails_bundle, turn_attachments
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_markdown import tool_markdown
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.tool_text import tool_plain
from brute_nb.notebook.views.turn_model import NOTICE, WAITING, TurnModel
from brute_nb.structured import SCHEMA_KEY

__all__ = ["MAX_UPDATES_PER_S", "PLACEHOLDER", "CellView"]

PLACEHOLDER: dict[str, str] = {"text/html": "", "text/plain": ""}

Publish = Callable[..., Any]

_RUN = secrets.token_hex(6)
"""Random once per process: display ids from two kernels (a restart) never meet in one front end."""
_COUNT = itertools.count()


def display_id(prefix: str = "brute") -> str:
    """A display id unique to this process: its random ``_RUN``, its pid (a fork shares ``_RUN``) and a counter.

    Not a ``uuid4`` each: that is a ``getrandom`` call, which lets go of the GIL, and at a cell's start the kernel's
    IOPub and shell-channel threads are busy, so taking it back cost up to ~1 ms (0.68 ms a cell, profiled)."""
    return f"{prefix}-{_RUN}{os.getpid():x}-{next(_COUNT):x}"


def _publish(bundle: Mapping[str, str], metadata: Mapping[str, Any] | None = None, **kw: Any) -> None:
    from IPython.display import display

    display(dict(bundle), raw=True, metadata=dict(metadata or {}), **kw)  # type: ignore[no-untyped-call]


def _update(bundle: Mapping[str, str], display_id: str) -> None:
    from IPython.display import update_display

    update_display(dict(bundle), raw=True, display_id=display_id)  # type: ignore[no-untyped-call]


class CellView:
    """Renders one turn's ``TurnModel`` in the cell that ran it; holds no agent logic and no turn state."""

    def __init__(self, *, session: str = "", quiet: bool = False, replayed: bool = False,
                 publish: Publish = _publish, update: Publish = _update, rate: float | None = None,
                 live: LiveSink | None = None, clock: Callable[[], float] = time.monotonic,
                 start_timer: StartTimer = start_thread_timer, hold_first: bool | None = None) -> None:
        self.model = TurnModel(replayed=replayed, watch=self.changed)
        self.session = session
        self.quiet = quiet
        self._publish = publish
        self._update = update
        self.display_id = display_id()
        self._sink = live
        self._ops = LiveOps()
        rate = rate or (MAX_UPDATES_PER_S if live is None else LIVE_RATE)
        # The live widget shows up one interval after the turn's first event: a turn over by then (a short reply)
        # goes straight to its final outputs, without the widget's messages.
        # (``hold_first=False``: every write as it comes, for tests of what is written rather than when.)
        self._live = Coalescer(self._write_live, rate, clock=clock, start_timer=start_timer,
                               hold_first=live is not None if hold_first is None else hold_first)
        # The static copy beside the live widget (see the module docstring); its first write waits an interval.
        self._copy = Coalescer(self._write_copy, 1 / COPY_MIN_INTERVAL, clock=clock, start_timer=start_timer,
                               hold_first=True)
        self._copy_id = ""  # the copy's display id once it is published
        self._shown = False  # the live display shows something (else it still holds the empty placeholder)
        self._opened = False  # the live display's output exists (made at its first write)
        self._lock = self.model.lock  # one lock: the model's pieces and what of them is published
        self._committed = 0  # final segments already published (before an approval question)
        self._live_from = 0  # live segments before this index are published; the live display shows the rest
        self._tool_displays: dict[str, str] = {}  # call id -> display id of a tool row published early
        self._paused = False  # a question is on screen: the live display must not write above it

    def attach(self, agent: Any) -> None:
        self.model.attach(agent)

    def detach(self, agent: Any) -> None:
        self.model.detach(agent)
        self._cancel_writes()  # no trailing update after the turn: finish() owns the display from here

    def start(self) -> None:
        """The turn's clock starts; the live display's output is made at its first write (``_open``), so a turn
        that never showed anything live (headless runs, a reply faster than the first update) leaves no empty
        output at the top of the cell."""
        self.model.start()

    def _open(self) -> None:
        """The live display's output, made once per display id, just before its first write."""
        if not self._opened:
            self._publish(PLACEHOLDER, display_id=self.display_id)
            self._opened = True

    def changed(self, event: str, item: Any) -> None:
        """The model took an event (``TurnModel.watch``): the live display (and a tool row shown early) follows."""
        if event in ("tool_call", "tool_result"):
            with self._lock:
                early = item.call_id in self._tool_displays
            if early:
                self._show_row(item)
            if early and event == "tool_call":  # its row is on screen already, above the live display
                return
        if event in ("reply", "tool_call", "tool_result"):
            self._refresh(force=True)
        elif event == "text":
            self._refresh()

    def _refresh(self, force: bool = False) -> None:
        if not self.quiet and not isinstance(self._sink, NoLive):
            self._live.push(None, force=force)  # the write renders the segments as they are by then

    def _live_segments(self) -> list[str | ToolView]:
        return [s for s in self.model.segments[self._live_from:]
                if not (isinstance(s, ToolView) and s.call_id in self._tool_displays)]

    def _write_live(self, _: object) -> None:
        # Called by the coalescer, possibly on its timer thread while the worker appends: render a snapshot.
        sent = False
        with self._lock:
            if self._paused:
                return
            live = self._live_segments()
            if self._sink is not None:
                ops = self._ops.diff(live, self.model.streaming)
                if ops:
                    self._open()
                self._sink.send(self.display_id, ops)
                self._shown = self._shown or bool(ops)
                sent = bool(ops)
            elif live or self._opened:
                self._open()
                self._update({"text/html": live_html(live), "text/plain": ""}, self.display_id)
                self._shown = True
        if sent:  # outside our lock: the copy's coalescer takes its own lock before ours when it writes
            self._copy.push(None)

    def _write_copy(self, _: object) -> None:
        """Publish (or bring up to date) the static copy of what the live widget shows; its next write waits as
        long as ``copy_wait`` says for what was just sent."""
        with self._lock:
            if self._paused or not self._shown:
                return
            bundle = copy_bundle(self._live_segments(), self.model.streaming)
            if self._copy_id:
                self._update(bundle, self._copy_id)
            else:
                self._copy_id = display_id("brute-copy")
                self._publish(bundle, display_id=self._copy_id)
        self._copy.interval = copy_wait(bundle)

    def _cancel_writes(self) -> None:
        """No held write of the live display or its copy lands after this. Called outside our lock: a coalescer
        takes its own lock before ours when it writes."""
        self._live.cancel()
        self._copy.cancel()

    def _end_live(self) -> None:
        """The live display goes back to its placeholder (its widget closed): what it showed becomes outputs.
        A display that never showed anything is the placeholder already: no message. The caller has cancelled
        the coalescers (outside our lock)."""
        if self._shown:
            self._update(PLACEHOLDER, self.display_id)
            self._shown = False
        if self._copy_id:
            self._update(PLACEHOLDER, self._copy_id)
            self._copy_id = ""
        if self._sink is not None:
            self._sink.close()
            self._ops = LiveOps()

    def asker(self, ask: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
        """``ask`` (which prints the call and reads the answer, e.g. ``input_asker``) asked in place: see the module
        docstring. Runs on the approver's thread; the turn's events may arrive meanwhile."""

        def in_place(call: Any, risk: str) -> Any:
            self._cancel_writes()
            with self._lock:
                self._paused = True
                view = self.model.tools.get(call.id)
                if view is not None:
                    view.status = WAITING
                self._end_live()  # what it showed becomes outputs, in order
                self._commit(call.id)
            try:
                return ask(call, risk)
            finally:
                with self._lock:
                    if view is not None and view.status == WAITING:
                        view.status = "running"
                        self._show_row(view)
                    self.display_id = display_id()  # the rest of the turn shows below the answer
                    self._opened = False
                    self._paused = False
                self._refresh(force=True)

        return in_place

    def _commit(self, call_id: str) -> None:
        """Publish the final segments so far, up to and including the tool ``call_id``; tool rows get a display id
        so their status and result can still change in place."""
        segments = self.model.final_segments()
        end = next((i + 1 for i, s in enumerate(segments) if isinstance(s, ToolView) and s.call_id == call_id),
                   len(segments))
        base = self.output_meta(self.model.stats(sum(isinstance(s, ToolView) for s in segments)))
        if self.model.repaired and not self._committed:
            self._publish(render.notice_bundle(self.model.repaired, "interrupted"), {"brute": base})
        for item in segments[self._committed:end]:
            if isinstance(item, ToolView):
                self.model.queue(item)  # a call of the same reply that has not started yet
                self._tool_displays[item.call_id] = display_id()
                if not self.quiet:
                    self._publish(tool_bundle(item), {"brute": {**base, "tool": item.name}},
                                  display_id=self._tool_displays[item.call_id])
            else:
                self._publish(segment_bundle(*item), {"brute": {**base, **item[1]}})
        self._committed = max(self._committed, end)
        at = [i for i, s in enumerate(self.model.segments) if isinstance(s, ToolView) and s.call_id == call_id]
        self._live_from = at[0] + 1 if at else len(self.model.segments)

    def _show_row(self, view: ToolView) -> None:
        """A tool row published early shows its new status (or result) in place."""
        with self._lock:
            display_id = self._tool_displays.get(view.call_id)
        if display_id is not None and not self.quiet:
            self._update(tool_bundle(view), display_id)

    def finish(self, *, env: Mapping[str, Any] | None = None, notice: str | None = None, kind: str = "note",
               extra_stats: Mapping[str, Any] | None = None, failed: bool = False) -> None:
        """Reset the live display to its placeholder, then publish the final transcript from the log.

        ``failed``: an error output follows (brute_nb's one red line); a turn that failed before the model said
        anything gets no footer, whose "0 tool calls" would read as a finished turn just above the error."""
        self._cancel_writes()  # a held update must not land on top of the placeholder
        self._end_live()
        model = self.model
        segments = model.final_segments()
        tool_calls = sum(isinstance(item, ToolView) for item in segments)
        stats = {**model.stats(tool_calls), **(extra_stats or {})}
        base = self.output_meta(stats)
        pictures = thumbnails_bundle(turn_attachments(model.messages))
        if pictures is not None and not self.quiet:
            self._publish(pictures, {"brute": base})
        if model.repaired and not self._committed:
            self._publish(render.notice_bundle(model.repaired, "interrupted"), {"brute": base})
        for index, item in enumerate(segments):
            if index < self._committed:  # published before an approval question: brought up to date in place
                if isinstance(item, ToolView):
                    self._show_row(item)
                continue
            if isinstance(item, ToolView):
                if not self.quiet:
                    self._publish(tool_bundle(item), {"brute": {**base, "tool": item.name,
                                                                       "call_id": item.call_id,
                                                                       "status": item.status}})
            else:
                text, meta = item
                self._publish(segment_bundle(text, meta), {"brute": {**base, **meta}})
        if stats.get("cut_off"):
            self._publish(render.notice_bundle(render.CUT_OFF_NOTICE, "interrupted"), {"brute": base})
        if model.stopped and not self.quiet:
            self._publish(render.notice_bundle(model.stopped, "interrupted"), {"brute": base})
        if notice:
            self._publish(render.notice_bundle(notice, kind), {"brute": base})
        if model.wants_footer(quiet=self.quiet, failed=failed):
            self._publish(render.footer_bundle(stats), {"brute": base})

    def output_meta(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        """What every final output carries: the session, the ids of the messages this turn added, model, usage.

        The ids are the ``meta["id"]`` of the lines this turn wrote to the session file, so a saved notebook's
        output can be traced back to the exact messages behind it.
        """
        ids = [str(m.meta["id"]) for m in self.model.messages if "id" in (getattr(m, "meta", None) or {})]
        usage = {k: stats.get(k) for k in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
                                           "cost", "tool_calls")}
        return {"session": self.session, "message_ids": ids, "model": stats.get("model"), "usage": usage}


def segment_bundle(text: str, meta: Mapping[str, Any]) -> dict[str, str]:
    """A text segment as the cell shows it: a notice, a structured reply (tables), or the model's Markdown."""
    if NOTICE in meta:
        return render.notice_bundle(text, meta[NOTICE])
    structured = structured_bundle(text) if meta.get(SCHEMA_KEY) else None
    return structured or render.text_bundle(text)


def tool_bundle(view: ToolView) -> render.Bundle:
    """A tool row as the cell publishes it: each form from its own renderer, all reading one ``ToolView``."""
    return {"text/html": tool_html(view), "text/markdown": tool_markdown(view), "text/plain": tool_plain(view)}
