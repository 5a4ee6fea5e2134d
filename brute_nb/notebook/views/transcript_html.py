"""A chat's messages as the widget's transcript shows them: sanitised HTML a turn at a time, and plain text.

Pure functions of the messages (no widget, no kernel), so the live panel, its static fallback and the terminal read
one rendering: a turn's texts and tool blocks come from its ``TurnModel.final_segments``, exactly as a ``%%brute``
cell shows them, and every piece of model text goes through ``render``'s sanitiser.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from typing import Any

from brute_nb.cost import total as cost_total
from brute_nb.message import role_of
from brute_nb.notebook.views import render
from brute_nb.notebook.views.thumbnails import thumbnails_html
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.tool_text import tool_line
from brute_nb.notebook.views.transcript import proposal_html
from brute_nb.notebook.views.turn_model import NOTICE, TurnModel
from brute_nb.usage import Usage


def markdown_html(text: str) -> str:
    """Assistant text as the cell shows it: inert, sanitised HTML (``render.markdown_html``)."""
    return render.markdown_html(text)


def user_html(text: str) -> str:
    return ('<div class="brute-user" style="margin:.5em 0;padding:.3em .6em;'
            'border-left:3px solid var(--jp-brand-color1,#0969da)">'
            f'<b>you</b><div style="white-space:pre-wrap;line-height:1.45">{escape(render.plain(text))}</div></div>')


def segments_html(items: list[Any]) -> str:
    """A finished turn's texts and tool blocks (from ``TurnModel.final_segments``); a ``propose_cell`` call's code
    follows its block as a code block, with its "Insert as cell" button in the browser."""
    return "".join(tool_html(i) + proposal_html(i) if isinstance(i, ToolView) else
                   render.notice_bundle(i[0], i[1][NOTICE])["text/html"] if NOTICE in i[1] else markdown_html(i[0])
                   for i in items)


def turns(messages: list[Any]) -> Iterator[tuple[Any, list[Any]]]:
    """The transcript's pieces in order: ``(prompt, [])`` for each user message, ``(None, segments)`` for the turn
    that follows it (its texts and tool blocks, from ``TurnModel.final_segments``). System messages are left out."""
    for prompt, items, _ in turn_views(messages):
        yield prompt, items


def turn_views(messages: list[Any]) -> Iterator[tuple[Any, list[Any], TurnModel | None]]:
    """``turns`` with each turn's ``TurnModel`` (None beside a prompt), for what a turn's footer says."""
    turn: list[Any] = []

    def view() -> TurnModel:
        shown = TurnModel.of(turn)
        turn.clear()
        return shown

    for m in messages:
        role = role_of(m)
        if role == "user":
            if turn:
                done = view()
                yield None, done.final_segments(), done
            yield m, [], None
        elif role != "system":
            turn.append(m)
    if turn:
        done = view()
        yield None, done.final_segments(), done


def log_html(messages: list[Any], *, replayed: bool = False) -> str:
    """Messages (history, or turns run from cells) as the transcript shows them: one block a turn, each turn with
    the footer it had in its cell (its time is the model's, from the replies' ``duration_ms``, where recorded)."""
    out: list[str] = []
    for prompt, items, view in turn_views(messages):
        if view is None:
            out.append(user_html(str(prompt.content)) + thumbnails_html(getattr(prompt, "attachments", None) or ()))
            continue
        out.append(segments_html(items))
        if any(role_of(m) == "assistant" for m in view.messages):
            out.append(render.footer_bundle(history_stats(view, items, replayed))["text/html"])
    return "".join(out)


def history_stats(view: TurnModel, items: list[Any], replayed: bool) -> dict[str, Any]:
    """A past turn's footer numbers: as the cell counted them, with the model's time instead of a stopwatch."""
    stats = view.stats(sum(isinstance(i, ToolView) for i in items))
    times = [m.meta.get("duration_ms") for m in view.messages if role_of(m) == "assistant"]
    known = all(isinstance(t, int | float) for t in times)
    stats["elapsed_s"] = sum(times) / 1000 if times and known else None
    stats["replayed"] = replayed
    return stats


def error_details_html(exc: BaseException) -> str:
    """The full traceback one click away, folded under the error's one line (the widget has no ``%tb``)."""
    from brute_nb.notebook.views.short_errors import full_text

    return (f'<details class="brute-traceback" style="opacity:.75"><summary><small>full traceback</small></summary>'
            f'<pre style="{render.WRAP}">{escape(full_text(exc))}</pre></details>')


def totals(messages: list[Any]) -> tuple[int, int, int, float | None]:
    """(input tokens, output tokens, tool calls, cost in USD or None) of the given messages.

    Calls are counted as the model makes them (as the cell's footer counts them), so one still running shows.
    """
    replies = [m for m in messages if m.role == "assistant"]
    usage = Usage.total(replies) or Usage()  # input counts cache reads and writes, as the price and budget do
    tools = sum(len(m.tool_calls or ()) for m in replies)
    return usage.input_tokens, usage.output_tokens, tools, cost_total(replies)


def log_text(messages: list[Any]) -> str:
    """The transcript as plain text (terminals, ``text/plain``): prompts, replies, one line per tool call."""
    out: list[str] = []
    for prompt, items in turns(messages):
        if prompt is not None:
            out.append("you: " + render.plain(str(prompt.content)))
        out.extend(tool_line(item) if isinstance(item, ToolView) else render.plain(item[0])
                   for item in items)
    return "\n\n".join(out)


