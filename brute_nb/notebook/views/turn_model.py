"""TurnModel: what one turn says, apart from every place it is shown.

It takes the agent's events (``attach``) and holds the turn's pieces: the messages it added, the live segments
(streamed text and tool views, in the order they came), the tool views by call id, the compaction notices, why it
stopped, whether its request was repaired, and its clock. It imports no IPython and draws nothing: the cell view
(``display.CellView``), the terminal (``terminal.TerminalView``), the chat panel (``widget``) and the transcript
(``transcript_html``) each render one, and none is built as a side effect of another (chatlas' display model).

A sink learns what changed through ``watch(event, item)``, called after the model has taken the event and outside
its lock (a sink's writer may take its own lock before this one): ``"reply"`` (a finished assistant message),
``"text"`` (a streamed delta), ``"tool_call"`` and ``"tool_result"`` (the ``ToolView``), ``"compacted"`` (the
notice's text). ``lock`` guards the segments and tool views against a sink reading them from another thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from brute_nb.cost import total as cost_total
from brute_nb.message import role_of
from brute_nb.notebook.views import render
from brute_nb.notebook.views.tool_row import ToolView, server_views
from brute_nb.sendable import INTERRUPTED_RESULT
from brute_nb.structured import SCHEMA_KEY
from brute_nb.transports.blocks import UNKNOWN_KEY
from brute_nb.usage import Usage

__all__ = ["NOTICE", "WAITING", "TurnModel", "Watch", "provider_blocks", "server_views"]

NOTICE = "notice"
"""A text segment's meta key marking it a notice (compaction), not the model's words: its value is the kind."""
WAITING = "waiting for approval"

Watch = Callable[[str, Any], None]


def _unwatched(event: str, item: Any) -> None:
    """A model nobody shows while it runs (a finished turn read back from the log)."""


class TurnModel:
    """One turn's pieces, built from its events (or, finished, from its messages: ``of``)."""

    def __init__(self, *, replayed: bool = False, watch: Watch = _unwatched) -> None:
        self.replayed = replayed
        self.watch = watch
        self.segments: list[str | ToolView] = []
        self.tools: dict[str, ToolView] = {}
        self.messages: list[Any] = []
        self.streaming = False  # the last segment is text still being streamed
        self.stopped: str | None = None
        self.repaired: str | None = None
        self.compactions: list[tuple[int, str]] = []  # (replies before it, what it says): shown where it happened
        # (compaction notices, and the line saying a reply was asked again)
        self.started = time.monotonic()
        self.lock = threading.RLock()

    @classmethod
    def of(cls, messages: list[Any]) -> TurnModel:
        """A finished turn, from the messages it added (history, or a turn run elsewhere)."""
        model = cls()
        model.messages = list(messages)
        return model

    def handlers(self) -> dict[str, Callable[[dict[str, Any], Any], None]]:
        return {
            "message": self.on_message,
            "assistant_delta": self.on_delta,
            "tool_call": self.on_tool_call,
            "tool_result": self.on_tool_result,
            "should_exit": self.on_should_exit,
            "repaired": self.on_repaired,
            "compacted": self.on_compacted,
            "retry": self.on_retry,
            "notice": self.on_retry,
        }

    def attach(self, agent: Any) -> None:
        for name, fn in self.handlers().items():
            agent.on(name, fn)

    def detach(self, agent: Any) -> None:
        for name, fn in self.handlers().items():
            agent.off(name, fn)

    def start(self) -> None:
        """The turn's clock starts (the footer's time)."""
        self.started = time.monotonic()

    def on_message(self, env: dict[str, Any], message: Any) -> None:
        self.messages.append(message)
        if role_of(message) != "assistant":
            return
        with self.lock:
            if not self.streaming and message.content:
                self.segments.append(message.content)  # a provider that did not stream
            self.streaming = False
        self.watch("reply", message)

    def on_delta(self, env: dict[str, Any], payload: Any) -> None:
        text = payload.get("text", "") if isinstance(payload, Mapping) else str(payload)
        if not text:
            return
        with self.lock:
            if self.streaming:
                self.segments[-1] = str(self.segments[-1]) + text
            else:
                self.segments.append(text)
                self.streaming = True
        self.watch("text", text)

    def on_tool_call(self, env: dict[str, Any], payload: Any) -> None:
        call = payload["call"]
        with self.lock:
            self.streaming = False
            view = self.tools.get(call.id)
            if view is not None:  # queued before it started (shown while an earlier call asked): it runs now
                view.status = "running"
            else:
                view = ToolView(call_id=call.id, name=call.name, arguments=call.arguments)
                self.tools[call.id] = view
                self.segments.append(view)
        self.watch("tool_call", view)

    def on_tool_result(self, env: dict[str, Any], payload: Any) -> None:
        view = self.tools.get(payload["call"].id)
        if view is None:
            return
        view.finish(payload)
        self.watch("tool_result", view)

    def on_should_exit(self, env: dict[str, Any], payload: Any) -> None:
        self.stopped = payload.get("message") if isinstance(payload, Mapping) else str(payload)

    def on_compacted(self, env: dict[str, Any], payload: Any) -> None:
        """Compaction before a model call: a notice in the transcript between the steps it came between."""
        replies = sum(role_of(m) == "assistant" for m in self.messages)
        text = render.compaction_text(payload)
        self.compactions.append((replies, text))
        self.watch("compacted", text)

    def on_retry(self, env: dict[str, Any], payload: Any) -> None:
        """A reply that failed mid-way is asked again, or the session has a word on the turn (``notice``): one
        notice line where it happened (kept with the compaction notices), and the next text starts a segment of
        its own."""
        replies = sum(role_of(m) == "assistant" for m in self.messages)
        text = str(payload.get("message", "")) if isinstance(payload, Mapping) else str(payload)
        with self.lock:
            self.streaming = False
        self.compactions.append((replies, text))
        self.watch("compacted", text)

    def on_repaired(self, env: dict[str, Any], payload: Any) -> None:
        """The request was repaired (``sendable``); the agent reports each repair once, so it shows once."""
        self.repaired = str(payload.get("message", "")) if isinstance(payload, Mapping) else str(payload)

    def queue(self, view: ToolView) -> None:
        """A call of a reply whose turn has not come (a sink showed it early): it starts as this view."""
        with self.lock:
            if view.call_id not in self.tools:
                self.tools[view.call_id] = view
                view.status = "queued"

    @property
    def answered(self) -> bool:
        """The model said something this turn."""
        return any(role_of(m) == "assistant" for m in self.messages)

    def wants_footer(self, *, quiet: bool, failed: bool) -> bool:
        """A footer, unless quiet or the turn failed before the model said anything (its "0 tool calls" would read
        as a finished turn just above the error)."""
        return not quiet and (not failed or self.answered)

    def final_segments(self) -> list[Any]:
        """Assistant texts and tool calls of this turn, in log order, with results joined."""
        results = {m.tool_call_id: m for m in self.messages if role_of(m) == "tool"}
        out: list[Any] = []
        replies = 0
        for m in self.messages:
            if role_of(m) != "assistant":
                continue
            out.extend((text, {NOTICE: "note"}) for at, text in self.compactions if at == replies)
            replies += 1
            meta = dict(getattr(m, "meta", {}) or {})
            out.extend(server_views(meta))
            out.extend((f"provider block: {kind}", {NOTICE: "note"}) for kind in provider_blocks(meta))
            if m.content:
                usage = m.usage
                own: dict[str, Any] = {} if usage is None else {"input_tokens": usage.input_tokens,
                                                                "output_tokens": usage.output_tokens}
                if "id" in meta:
                    own["message_id"] = meta["id"]
                if meta.get(SCHEMA_KEY):
                    own[SCHEMA_KEY] = meta[SCHEMA_KEY]  # shown as a table or indented JSON (structured_view)
                out.append((m.content, own))
            sources = render.sources_text(meta.get("citations"))
            if sources:
                out.append((sources, {}))
            for call in m.tool_calls or ():
                out.append(self._joined(call, results.get(call.id)))
        out.extend((text, {NOTICE: "note"}) for at, text in self.compactions if at >= replies)
        return out

    def _joined(self, call: Any, result: Any) -> ToolView:
        """A call's view with its result (if any) and the status the result says."""
        view = self.tools.get(call.id) or ToolView(call_id=call.id, name=call.name, arguments=call.arguments)
        if result is not None:
            rmeta = dict(getattr(result, "meta", {}) or {})
            view.result = result.content
            view.meta = rmeta
            view.duration_ms = rmeta.get("duration_ms", view.duration_ms)
            err = rmeta.get("is_error", result.content.startswith("Error:"))
            # The pipeline's own result for a cancelled call is not marked synthetic; its text tells.
            stopped = rmeta.get("synthetic") or result.content == INTERRUPTED_RESULT
            view.status = "interrupted" if stopped else ("error" if err else "ok")
            if str(rmeta.get("approval", "")).startswith("denied"):
                view.status = "denied"
        return view

    def stats(self, tool_calls: int) -> dict[str, Any]:
        cut_off = False
        model = None
        replies = [m for m in self.messages if m.role == "assistant"]
        for m in replies:
            model = m.meta.get("model", model)
            cut_off = cut_off or m.finish_reason == "max_tokens"
        usage = Usage.total(replies)  # input counts cache reads and writes, as the price and the budget do
        return {
            "model": model,
            "input_tokens": None if usage is None else usage.input_tokens,
            "output_tokens": None if usage is None else usage.output_tokens,
            "cached_tokens": 0 if usage is None else usage.cache_read_tokens,
            "cache_write_tokens": 0 if usage is None else usage.cache_write_tokens,
            "cost": None if usage is None else cost_total(replies),
            "tool_calls": tool_calls,
            "elapsed_s": time.monotonic() - self.started,
            "replayed": self.replayed,
            "cut_off": cut_off,
        }


def provider_blocks(meta: Mapping[str, Any]) -> list[str]:
    """The kinds of a reply's blocks its transport could not read (kept and sent back as they came): one quiet row
    each, so a user sees the API said more than the text without an error (``transports.blocks.UNKNOWN_KEY``)."""
    kinds = meta.get(UNKNOWN_KEY)
    return [str(k) for k in kinds] if isinstance(kinds, list) else []
