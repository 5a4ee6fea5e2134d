"""The default stack: every layer brute_nb builds an agent from, in one order, written once.

Outermost first (the first ``use`` wraps all the others, as in Brute's pipeline):

1. SessionLog: history in, every new message out (the file is the conversation)
2. SystemPrompt: the system message first, never persisted
3. Approvals: the approval policy in ``env["approve"]``, and the person asked for ``ask``
4. FinalAnswer: a turn stopped by a limit ends with one tool-free call for the model's answer
5. ToolResultLoop: repeats while the last message is a tool result and nothing set ``should_exit``
6. MaxIterations: sets ``should_exit`` after ``limit`` model calls
7. Budget: sets ``should_exit`` when the turn's tokens, cost or time run out
8. DoomLoopDetection: sets ``should_exit`` when the model repeats the same calls
9. DefaultCompactionPipeline: before every model call, Brute's ladder (ToolResults, SlidingWindow, Summary)
10. DefaultToolPipeline: advertises the tools on the way in, runs the reply's calls on the way out
11. PartialReply: a stopped or failed call keeps its streamed text
12. RetryReply: a reply cut by a fault the SDK retries is asked again
13. TurnContext: the turn's context (``--context`` cells) on the request only, never in the log

then the model call. The notebook's session agent (``notebook/stack.py``) and a map row's agent (``map/row.py``)
both start here, each leaving out what it has no use for, so the order cannot drift between them;
docs/architecture.md draws the same list (``tests/core/test_default_stack.py`` compares the three).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from brute_nb.agent import Agent, Handler
from brute_nb.middleware.approvals import Approvals, Asker
from brute_nb.middleware.budget import Budget
from brute_nb.middleware.compaction import DefaultCompactionPipeline
from brute_nb.middleware.doom_loop import DoomLoopDetection
from brute_nb.middleware.final_answer import FinalAnswer
from brute_nb.middleware.partial_reply import PartialReply
from brute_nb.middleware.retry import RetryReply, retries_of
from brute_nb.middleware.session_log import SessionLog
from brute_nb.middleware.system_prompt import PromptSource, SystemPrompt
from brute_nb.middleware.tool_pipeline import DefaultToolPipeline
from brute_nb.middleware.tool_result_loop import MaxIterations, ToolResultLoop
from brute_nb.middleware.turn_context import TurnContext

PathLike = str | os.PathLike[str]


def default_stack(model: Handler, *, session: PathLike | None = None, session_root: PathLike | None = None,
                  system: PromptSource | None = None, approve: Mapping[str, str] | None = None,
                  ask: Callable[[], Asker | None] | None = None, final_answer: bool = True,
                  max_iterations: int = 100, budget: Mapping[str, float] | None = None, doom_loop: bool = True,
                  compaction: bool = True, window: int = 200_000, summarize: bool = True,
                  tools: Sequence[Any] = (), partial_reply: bool = True, retry: bool = True,
                  turn_context: bool = True) -> Agent:
    """The stack above, calling ``model``. A layer whose value is missing (``session``, ``system``, ``approve``,
    ``budget``) or switched off is left out; the rest keep their place.

    ``ask`` gives the person to ask when the policy says ``ask`` (None: no one, so ``ask`` is ``deny``);
    ``summarize`` lets compaction's last rung ask ``model`` for a summary; ``FinalAnswer`` and ``RetryReply`` ask
    again as often as ``model``'s SDK would retry (``retries_of``)."""
    retries = retries_of(model)
    layers: tuple[tuple[Any, bool, dict[str, Any]], ...] = (
        (SessionLog, session is not None, {"path": session, "root": session_root}),
        (SystemPrompt, system is not None, {"text": system}),
        (Approvals, approve is not None, {"policy": approve, "fallback": ask}),
        (FinalAnswer, final_answer, {"model": model, "retries": retries}),  # asked again like any model call
        (ToolResultLoop, True, {}),
        (MaxIterations, True, {"limit": max_iterations}),
        (Budget, bool(budget), {"model": model, **(budget or {})}),  # a cost ceiling needs a priced model
        (DoomLoopDetection, doom_loop, {}),
        (DefaultCompactionPipeline, compaction, {"window": window, "summariser": model if summarize else None}),
        (DefaultToolPipeline, True, {"tools": list(tools)}),
        (PartialReply, partial_reply, {}),  # around the model call only: the text of a stopped reply is kept
        (RetryReply, retry, {"retries": retries}),  # inside PartialReply: a failed try's text is dropped
        (TurnContext, turn_context, {}),  # innermost: the turn's context reaches each request, never the log
    )
    agent = Agent()
    for middleware, wanted, options in layers:
        if wanted:
            agent.use(middleware, **options)
    return agent.run(model)
