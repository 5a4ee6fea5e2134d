"""ToolView: what one tool row says, apart from every form that shows it.

A row is a tool call from its start to its result: name, arguments, status, time, result, and the facts a person
reads from them (``exit 1`` for a command that ran and failed, "run by the provider" for a server tool, how much of
a long result is shown). The cell, the chat panel, the terminal and an export each render it through one renderer
module per output form (``tool_html``, ``tool_markdown``, ``tool_text``), and every form takes these facts from
here, so they cannot disagree on what a row says (``tests/notebook/test_tool_row.py`` reads them all back).
Rows of tools the provider ran itself are built here too (``server_views``), from a reply's meta.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from brute_nb.notebook.views.render import plain

RESULT_DISPLAY_CAP = 4000
"""Characters of a tool result shown in the cell; the full result stays in the log and ``%brute tools``."""

ARGS_SUMMARY_CAP = 80

STATUS_TEXT = {"server": "run by the provider"}
"""A status whose words differ from its key: a server tool ran at the provider, not in this kernel."""

FULL_RESULT = ("%brute tools", "brute_nb.current().tool_calls_df")
"""Where a cut result is whole, as the truncation note names them (each form marks them as code its own way)."""

_EXIT = re.compile(r"\[exit code: (-?\d+)\]\s*$")


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

    def finish(self, payload: Mapping[str, Any]) -> None:
        """Take a ``tool_result`` event's fields, so the cell, the widget and the terminal read one result alike;
        a call the user refused is "denied", as the transcript built from the log says it."""
        message = payload["message"]
        self.result = message.content
        self.duration_ms = payload.get("duration_ms")
        self.meta = dict(getattr(message, "meta", {}) or {})
        self.status = "denied" if self.denied else "error" if payload.get("is_error") else "ok"

    @property
    def shown_status(self) -> str:
        """The status a person reads: a command that ran but exited non-zero (a failing test run) says
        ``exit N``, not "ok"."""
        found = _EXIT.search(self.result or "") if self.status == "ok" else None
        return f"exit {found.group(1)}" if found and found.group(1) != "0" else self.status

    @property
    def denied(self) -> bool:
        """The user (or the policy) refused the call; its result is also an error."""
        return str(self.meta.get("approval", "")).startswith("denied")

    @property
    def tone(self) -> str:
        """The status whose colour the row takes: a failed command's is an error's."""
        return "error" if self.shown_status.startswith("exit ") else self.status

    def summary_bits(self) -> list[str]:
        """The words after the row's name and arguments: status, then time and size when known."""
        bits = [STATUS_TEXT.get(self.status, self.shown_status)]
        if self.duration_ms is not None:
            bits.append(human_ms(self.duration_ms))
        if self.result is not None:
            bits.append(human_size(len(self.result)))
        return bits

    @property
    def args_line(self) -> str:
        """The arguments in one line, as every form's summary shows them."""
        return short_args(self.arguments)

    @property
    def shown_result(self) -> str | None:
        """The part of the result every form shows (terminal-safe, no key), None before there is one."""
        return None if self.result is None else plain(self.result[:RESULT_DISPLAY_CAP])

    @property
    def cut(self) -> bool:
        return self.result is not None and len(self.result) > RESULT_DISPLAY_CAP

    def cut_note(self, code: Callable[[str], str] = str) -> str:
        """What a cut result's row says under it; ``code`` marks a name to type as code in the form's own way."""
        total = len(self.result or "")
        return (f"showing {RESULT_DISPLAY_CAP:,} of {total:,} characters; the full result is in "
                f"{code(FULL_RESULT[0])} (or {code(FULL_RESULT[1])})")


def short_args(arguments: Mapping[str, Any], cap: int = ARGS_SUMMARY_CAP) -> str:
    """``file_path=a.py, start_line=3``: the one-line form for a summary. Names are the model's as much as values
    are: both are made one terminal-safe line."""
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{_one_line(str(key))}={_one_line(text)}")
    line = ", ".join(parts)
    return line if len(line) <= cap else line[: cap - 1] + "…"


def _one_line(text: str) -> str:
    return " ".join(plain(text).split())


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


def server_views(meta: Mapping[str, Any]) -> list[ToolView]:
    """The tools the provider ran itself (web search), as tool rows whose status says "server"."""
    views = []
    calls = meta.get("server_tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, Mapping):  # a hand-edited or hostile session line: nothing to show
            continue
        result, arguments = call.get("result"), call.get("arguments")
        views.append(ToolView(call_id=str(call.get("id") or ""), name=str(call.get("name") or "server tool"),
                              arguments=dict(arguments) if isinstance(arguments, Mapping) else {}, status="server",
                              result=None if result is None else json.dumps(result, ensure_ascii=False, default=str)))
    return views
