"""DefaultCompactionPipeline: decides *when* to compact; a compactor decides *what* goes.

It sits inside ToolResultLoop (so it runs before every model call: a long run of tool results can fill the
window without the turn ever ending) and inside SessionLog (so it works on the loaded history and SessionLog
persists what survives). When the conversation passes ``trigger`` of the window it asks the compactor to bring
it down to ``target``, then changes ``env["messages"]`` in place, which SessionLog sees as a rewrite: it archives
every message that left and rewrites the file atomically. The ``compacted`` event hands the removed and rewritten
originals to anyone else who wants them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from brute_nb.compaction.pipeline import Compaction, CompactionPipeline
from brute_nb.compaction.sliding_window import SlidingWindow
from brute_nb.compaction.summary import Summarize, Summary
from brute_nb.compaction.tokens import TokenCounter, Tokenizer, last_report
from brute_nb.compaction.tool_results import ToolResults
from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError
from brute_nb.events import emit
from brute_nb.maybe_async import call_maybe_async


class DefaultCompactionPipeline:
    """``.use(DefaultCompactionPipeline, window=200_000, summariser=model)``.

    Give at most one of ``compactor`` (a ``CompactionPipeline`` or any ``callable(ctx)``), ``compactors`` (a list
    of layers, run in order) or ``summariser`` (the ladder ToolResults -> SlidingWindow -> Summary with it). A
    summariser is a provider handler (an object like ``Scripted``/``OpenAIChat``, or a function whose first
    parameter is named ``env``) or a function ``messages -> str``. With none, the ladder has no summary rung.
    """

    def __init__(
        self,
        app: App,
        window: int = 200_000,
        trigger: float = 0.8,
        target: float = 0.5,
        compactor: Callable[[Compaction], Any] | None = None,
        compactors: list[Any] | None = None,
        summariser: Any = None,
        *,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        problems = _problems(window, trigger, target, compactor, compactors, summariser, tokenizer)
        if problems:
            raise MiddlewareError("DefaultCompactionPipeline: " + "; ".join(problems))
        self.app = app
        self.window = window
        self.trigger = trigger
        self.target = target
        self.compactor: Callable[[Compaction], Any] = compactor or _ladder(compactors, summariser)
        self.counter = TokenCounter(tokenizer)
        self._stale: Any = None
        self._overhead = 0

    async def __call__(self, env: Env) -> Any:
        await self.compact(env)
        return await self.app(env)

    async def compact(self, env: Env) -> Compaction | None:
        """Compact ``env["messages"]`` in place if it is past the trigger; the Compaction done, or None."""
        messages = env["messages"]
        measured = self.counter.measure(messages, stale=self._stale, overhead=self._overhead)
        self._overhead = measured.overhead
        if measured.tokens <= self.window * self.trigger:
            return None
        ctx = Compaction(messages, target=int(self.window * self.target), window=self.window, counter=self.counter,
                         overhead=measured.overhead, env=env)
        await call_maybe_async(self.compactor, ctx, thread=False)
        if not ctx.changed:
            return None
        # In place, so SessionLog (which observes this Log) archives what left and rewrites the file.
        messages[:] = ctx.messages
        report = last_report(messages)
        # That reply's input_tokens counted the history before compaction; until the next reply, estimate instead.
        self._stale = messages[report[0]] if report else None
        emit(env, "compacted", _payload(ctx, measured.tokens))
        return ctx


def _payload(ctx: Compaction, tokens_before: int) -> dict[str, Any]:
    return {
        "layer": ctx.layers[-1] if ctx.layers else "compactor",
        "layers": list(ctx.layers),
        "tokens_before": tokens_before,
        "tokens_after": ctx.tokens,
        "target": ctx.target,
        "window": ctx.window,
        "messages_before": len(ctx.original),
        "messages_after": len(ctx.messages),
        **ctx.outcome(),
    }


def _ladder(compactors: list[Any] | None, summariser: Any) -> CompactionPipeline:
    if compactors is not None:
        return CompactionPipeline(compactors)
    pipeline = CompactionPipeline().use(ToolResults).use(SlidingWindow)
    if summariser is None:
        return pipeline
    if isinstance(summariser, Summary):
        return pipeline.run(summariser)
    if _is_handler(summariser):
        return pipeline.run(Summarize(summariser))
    return pipeline.run(Summary(summarize=summariser))


def _is_handler(fn: Any) -> bool:
    """A provider handler takes env; a summarize function takes messages. Objects are handlers (providers)."""
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return True
    params = list(inspect.signature(fn).parameters)
    return bool(params) and params[0] == "env"


def _problems(
    window: Any, trigger: Any, target: Any, compactor: Any, compactors: Any, summariser: Any, tokenizer: Any
) -> list[str]:
    problems = []
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        problems.append(f"window must be a positive number of tokens, got {window!r}")
    fractions_ok = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (trigger, target))
    if not fractions_ok or not 0 < target < trigger <= 1:
        problems.append(f"need 0 < target < trigger <= 1 (fractions of the window), got trigger={trigger!r}, "
                        f"target={target!r}")
    given = [name for name, v in (("compactor", compactor), ("compactors", compactors), ("summariser", summariser))
             if v is not None]
    if len(given) > 1:
        problems.append(f"give one of compactor, compactors or summariser, not {' and '.join(given)}")
    if compactor is not None and not callable(compactor):
        problems.append(f"compactor must be a CompactionPipeline or a callable(ctx), got {compactor!r}")
    if compactors is not None and (not isinstance(compactors, list | tuple) or not compactors):
        problems.append(f"compactors must be a non-empty list such as [ToolResults(), SlidingWindow()], "
                        f"got {compactors!r}")
    elif compactors is not None:
        problems.extend(f"compactors[{i}]: {p}" for i, c in enumerate(compactors) if (p := _layer_problem(c)))
    if summariser is not None and not callable(summariser):
        problems.append(f"summariser must be a provider handler or a function messages -> str, got {summariser!r}")
    if tokenizer is not None and not callable(tokenizer):
        problems.append(f"tokenizer must be a function text -> int, got {tokenizer!r}")
    return problems


def _layer_problem(layer: Any) -> str | None:
    if isinstance(layer, type) or callable(getattr(layer, "bind", None)):
        return None
    return f"{layer!r} is not a compaction layer (ToolResults(), SlidingWindow(), Summary(summarize=fn), ...)"
