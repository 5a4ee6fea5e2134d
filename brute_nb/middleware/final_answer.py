"""FinalAnswer: a turn stopped by a guard (MaxIterations, Budget, DoomLoopDetection) still ends with the model's
answer, not on a tool result the user has to read for themselves.

Brute's ``MaxSteps`` reminder, made a step: it sits outside ``ToolResultLoop`` and, once the loop ended with
``should_exit`` set and no assistant text after the last tool result, makes one more model call with the
reminder appended and no tool allowed to run. The reminder goes only on that request (like a system reminder,
it is never written to the session); the answer is appended to the log, so SessionLog saves it and Budget counts
its tokens. Tools stay advertised on the request, since Anthropic refuses a history holding ``tool_use`` blocks
without them, and are disabled the way each API documents it: the call's env says ``tool_choice="none"``, which
the providers send as Anthropic's ``{"type": "none"}`` and the OpenAI APIs' ``"none"`` (``llm``, which has no
tool choice, by a prompt with no ``tools=``). Without it a model that keeps calling tools called one here too,
and the turn ended without a word. A call in the answer anyway (a provider that cannot disable tools: a user's
own handler) is never run: it is dropped and the text kept, so every call in the log still has its result. The
answer streams to the turn's views like any reply.

The call comes after the turn's tools ran (and were paid for), so a fault the SDK would retry (a 529 mid-stream, a
cut connection) must not end the turn there: it goes through ``RetryReply`` like every other model call of the
stack, with the same ``retries`` (the notebook passes its provider's), the same ``retry`` event and line, and the
same time budget (``env["metadata"]`` is the turn's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError
from brute_nb.log import Log
from brute_nb.maybe_async import call_maybe_async
from brute_nb.message import Message, Role, role_of
from brute_nb.middleware.retry import RetryReply
from brute_nb.sendable import sendable

REMINDER = """\
The step limit for this turn has been reached ({reason}), so tools are disabled: do not call any tool. Answer \
with text only: say that the limit was hit, summarise what was done so far, list what remains, and recommend \
the next steps."""

STOPPED_BY = ("max_iterations_reached", "budget_exhausted", "doom_loop_detected")
"""The ``should_exit`` reasons that end a turn before the model had its say (a turn that already answered is left
alone, whatever stopped it)."""


class FinalAnswer:
    """``FinalAnswer(app, model=handler, retries=0)``: ``model`` is the provider handler that makes the last call;
    ``retries`` as ``RetryReply``'s (give the same number as the stack's own ``RetryReply``)."""

    def __init__(self, app: App, model: Callable[[Env], Any], reminder: str = REMINDER, retries: int = 0) -> None:
        if not callable(model):
            raise MiddlewareError(f"FinalAnswer(model=...) takes a provider handler (a callable(env)), got {model!r}")
        self.app = app
        self.model = model
        self.reminder = reminder
        self.ask = RetryReply(self._call, retries=retries)  # checks retries now, when the stack is built

    async def __call__(self, env: Env) -> Any:
        result = await self.app(env)
        stop = env.get("should_exit") or {}
        if stop.get("reason") in STOPPED_BY and needs_answer(env["messages"]):
            await self._answer(env, stop)
        return result

    async def _answer(self, env: Env, stop: dict[str, Any]) -> None:
        messages: Log = env["messages"]
        sent, _ = sendable(list(messages))
        note = self.reminder.format(reason=stop.get("message") or stop.get("reason"))
        view = Log([*sent, Message(Role.USER, note)])
        await self.ask({**env, "messages": view, "schema": None, "tool_choice": "none"})
        replies = [m for m in view[len(sent) + 1:] if role_of(m) == "assistant"]
        if not replies:
            return
        reply = replies[-1]
        if reply.tool_calls:  # asked for a tool anyway: the calls never run, the text is the answer
            reply = reply.replace(tool_calls=None)
        if reply.content.strip():
            messages.append(reply.with_meta(final_answer=True))

    async def _call(self, env: Env) -> Any:
        return await call_maybe_async(self.model, env)


def needs_answer(messages: list[Any]) -> bool:
    """Whether the log ends without the model's word on what came last: a tool result, or a user message."""
    return bool(messages) and role_of(messages[-1]) in ("tool", "user")
