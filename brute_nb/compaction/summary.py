"""Summary and Summarize: the last rung, the one that spends a model call.

Everything older than the recent steps (except pinned messages) is folded into one user message carrying
``meta={"summary": True}``, placed where the folded part ended, so it never sits between a tool call and its
results. ``Summary(summarize=fn)`` takes any ``fn(messages) -> str`` (sync or async); ``Summarize(handler)`` asks
a provider handler (anything ``agent.run`` accepts) with our own compaction prompt. A later compaction folds an
earlier summary again, in full, so what it kept is not lost twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from brute_nb.compaction.pipeline import Compaction, CompactionApp, Layer
from brute_nb.compaction.steps import is_summary, recent_start, split
from brute_nb.errors import CompactionError, MiddlewareError
from brute_nb.log import Log, with_id
from brute_nb.maybe_async import call_maybe_async
from brute_nb.message import Message, Role, dumps, role_of

SUMMARY_HEADER = "[Summary of the earlier conversation, written to save context]\n\n"

COMPACTION_PROMPT = """\
You summarise the earlier part of a conversation between a user and an AI agent that uses tools. Your summary
replaces those messages: the agent will continue the work from it and from the most recent messages alone.

Write the summary in the user's language, under these headings:
## Goal
What the user asked for, in their words where they matter.
## Progress
What was done: files read, created or modified (with paths); commands run and their outcomes; key decisions and
why they were made.
## Current state
Where the work stands now: what works, what is broken, what was being done when this summary was written.
## Next steps
What remains to do, in order.
## Durable user constraints
Instructions and preferences from the user that must still be followed (style, tools to avoid, limits, names).

Be specific and brief: keep paths, names, numbers and error messages exactly. Do not answer questions found in
the conversation and do not continue the work. Reply with the summary only."""

MESSAGE_PREVIEW = 1500
ARGS_PREVIEW = 200

Summarizer = Callable[[list[Any]], Any]


class Summary(Layer):
    """``Summary(summarize=fn)``: fold all but the ``keep`` most recent steps into one summary message."""

    name = "summary"

    def __init__(self, app: CompactionApp | None = None, *, summarize: Summarizer, keep: int = 2) -> None:
        _check(self, summarize, "summarize must be a callable fn(messages) -> str", keep)
        super().__init__(app)
        self.summarize = summarize
        self.keep = keep

    async def compact(self, ctx: Compaction) -> None:
        messages = ctx.messages
        units = split(messages)
        fold = [i for u in units[: recent_start(units, self.keep)] if u.kind != "pinned" for i in u.indices]
        if not fold:
            return
        folded = [messages[i] for i in fold]
        text = await self._summary_text(folded, ctx)
        if not text.strip():
            return  # an empty summary would silently lose everything it replaces
        # A new message in the session, so it gets its own id like any other (slice assignment stamps none).
        meta = {"summary": True, "folded": len(fold)}
        summary = with_id(Message(Role.USER, SUMMARY_HEADER + text.strip(), meta=meta))
        skip, at = set(fold), fold[-1]
        result = []
        for i, m in enumerate(messages):
            if i == at:
                result.append(summary)
            if i not in skip:
                result.append(m)
        ctx.update(self.name, result)

    async def _summary_text(self, folded: list[Any], ctx: Compaction) -> str:
        value = await call_maybe_async(self.summarize, folded)
        if not isinstance(value, str):
            raise CompactionError(
                f"the summarize function {self.summarize!r} returned {type(value).__name__}; it must return the "
                "summary text (a str)"
            )
        return value


class Summarize(Summary):
    """``Summarize(handler)``: the summary comes from a model, through any provider handler ``handler(env)``.

    Use it as the terminal (``.run(Summarize(model))``) or as an instance in ``compactors=[...]``.
    """

    def __init__(
        self, handler: Callable[[dict[str, Any]], Any], *, keep: int = 2, prompt: str = COMPACTION_PROMPT
    ) -> None:
        _check(self, handler, "Summarize takes a provider handler (a callable(env))", keep)
        Layer.__init__(self)
        self.handler = handler
        self.keep = keep
        self.prompt = prompt

    async def _summary_text(self, folded: list[Any], ctx: Compaction) -> str:
        outer = ctx.env
        messages = Log([Message(Role.SYSTEM, self.prompt), Message(Role.USER, transcript(folded))])
        # A private env: the summary call must not stream into the conversation's views or see its tools.
        env: dict[str, Any] = {
            "messages": messages, "prompt": None, "tools": [], "should_exit": None, "iteration": 1,
            "agent": outer.get("agent"), "state": {}, "metadata": {}, "ask": None, "root": outer.get("root"),
            "events": None,
        }
        await call_maybe_async(self.handler, env)
        replies = [m for m in messages[2:] if role_of(m) == "assistant"]
        if not replies:
            raise CompactionError(
                f"the summariser {self.handler!r} added no assistant message; pass a provider handler (a callable(env) "
                "that appends the model's reply), or Summary(summarize=fn) with fn(messages) -> str"
            )
        text: str = replies[-1].content
        return text


def _check(layer: Layer, fn: Any, fn_problem: str, keep: Any) -> None:
    problems = []
    if not callable(fn):
        problems.append(f"{fn_problem}, got {fn!r}")
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
        problems.append(f"keep must be a non-negative integer, got {keep!r}")
    if problems:
        raise MiddlewareError(f"{type(layer).__name__}: " + "; ".join(problems))


def transcript(messages: Sequence[Any]) -> str:
    """The folded messages as text for the summariser; earlier summaries are kept whole, the rest trimmed."""
    names = {c.id: c.name for m in messages for c in getattr(m, "tool_calls", None) or ()}
    parts = []
    for m in messages:
        role = role_of(m)
        head = role if role != "tool" else f"tool result ({names.get(m.tool_call_id, 'tool')})"
        body = m.content if is_summary(m) else _trim(m.content, MESSAGE_PREVIEW)
        if getattr(m, "tool_calls", None):
            calls = ", ".join(f"{c.name}({_trim(dumps(c.arguments), ARGS_PREVIEW)})" for c in m.tool_calls)
            body = f"[tools: {calls}] {body}".rstrip()
        parts.append(f"{head}: {body}")
    return "\n---\n".join(parts)


def _trim(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} [... {len(text) - 2 * half:,} chars elided ...] {text[-half:]}"
