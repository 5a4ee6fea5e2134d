"""DefaultToolPipeline: advertises the tools on the way in, runs the model's tool calls on the way out.

Guarantees (Brute's, with its bugs fixed):

* every call of the last assistant message gets exactly one ``tool`` result, appended in call order, even when
  the tool raises, is unknown, got invalid arguments, is denied, or the turn is cancelled mid-tool (then the
  result is ``Error: interrupted before this tool finished``);
* interactive calls (``question``) run first, one at a time; the rest run concurrently in one task group;
* each result is rendered as text and passes the universal truncation (unless self-truncated);
* calls of a reply cut off by the output token limit (``finish_reason == "max_tokens"``) never run: their
  arguments may be incomplete yet parse (a file's content cut in half), so each result says it was cut off; the
  same cut call twice in a turn stops the turn (a model or server repeating it would loop to the limit);
* events: ``tool_call`` when a call starts, ``tool_result`` when it finishes (completion order; ``index`` is its
  place in the call order); result messages carry ``meta`` ``tool_name``, ``duration_ms`` (without the time an
  approval question waited, kept as ``approval_wait_ms``), ``is_error``.

Seams: tools reach the turn's env through ``brute_nb.tools.context.current_env()`` and the call they run for
through ``current_call()``, both set here around each call;
``env["approve"]`` (``approve(call, adapter) -> str | None``, sync or async) may deny a call before it runs,
its string becoming the error result.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import anyio

from brute_nb import tracing
from brute_nb.env import App, Env
from brute_nb.events import emit
from brute_nb.maybe_async import call_maybe_async
from brute_nb.message import Message, Role, ToolCall, dumps, role_of
from brute_nb.middleware.tool_result_loop import should_exit
from brute_nb.redact import redact
from brute_nb.redact_messages import redacted_call
from brute_nb.sendable import INTERRUPTED_RESULT
from brute_nb.tools.adapter import Adapter, wrap_all
from brute_nb.tools.context import in_call, use_env
from brute_nb.tools.results import error_text, finish
from brute_nb.tools.truncation import ToolOutput

RAW_PREVIEW = 500
CUT_OFF = ("Error: your reply was cut off by the output token limit (max_tokens) while this call to '{name}' was "
           "being written, so it did not run (its arguments may be incomplete). Make the call again with less in "
           "it, e.g. split long content over several smaller calls.")


def pending_calls(messages: list[Any]) -> list[ToolCall]:
    """The tool calls of the last message, when it is an assistant message with calls."""
    if not messages:
        return []
    last = messages[-1]
    if role_of(last) != "assistant" or not last.tool_calls:
        return []
    # Keys out of the arguments before any tool, approval or view sees them (a handler's reply may echo one).
    return [redacted_call(ToolCall.coerce(c)) for c in last.tool_calls]


class DefaultToolPipeline:
    def __init__(self, app: App, tools: Iterable[Any] = ()) -> None:
        self.app = app
        self.adapters: dict[str, Adapter] = wrap_all(tools)

    async def __call__(self, env: Env) -> Any:
        env["tools"] = list(self.adapters.values())
        result = await self.app(env)
        calls = pending_calls(env["messages"])
        if calls and (getattr(env["messages"][-1], "meta", None) or {}).get("finish_reason") == "max_tokens":
            self._refuse_cut(env, calls)
        elif calls:
            await self.run_calls(env, calls)
        return result

    def _refuse_cut(self, env: Env, calls: list[ToolCall]) -> None:
        """Answer every call of a cut-off reply without running it; stop the turn when the same cut repeats."""
        for i, call in enumerate(calls):
            emit(env, "tool_call", {"call": call, "index": i})
            env["messages"].append(self._message(env, i, call, ToolOutput(CUT_OFF.format(name=call.name),
                                                                          is_error=True), 0.0))
        cut = [(c.name, dumps(c.arguments)) for c in calls]
        seen = env.setdefault("metadata", {}).setdefault("cut_calls", [])
        if cut in seen:
            should_exit(env, "max_tokens_repeated",
                        "Stopped: the model's reply was cut off by its output token limit (max_tokens) twice in the "
                        "same tool call. Raise max_tokens, or ask for the work in smaller steps.",
                        "DefaultToolPipeline")
        seen.append(cut)

    async def run_calls(self, env: Env, calls: list[ToolCall]) -> list[Message]:
        results: list[Message | None] = [None] * len(calls)
        started: dict[int, float] = {}  # an interrupted call's block shows how long it ran before the stop

        async def run_into(index: int, call: ToolCall) -> None:
            started[index] = time.perf_counter()
            results[index] = await self.run_call(env, index, call)

        interactive = [i for i, c in enumerate(calls) if self._interactive(c)]
        together = [i for i in range(len(calls)) if i not in interactive]
        try:
            for i in interactive:
                await run_into(i, calls[i])
            if len(together) == 1:
                # One call (most replies of a tool loop) has nothing to run beside: awaited here, as an interactive
                # call is, it skips a task group, which costs a task, a cancel scope and two turns of the event loop
                # (~0.15-0.25 ms a model call here, a sixth of what the stack adds to one).
                await run_into(together[0], calls[together[0]])
            elif together:
                async with anyio.create_task_group() as group:
                    for i in together:
                        group.start_soon(run_into, i, calls[i])
        finally:
            # No await here, so a cancellation cannot stop it: every call gets its one result, in call order.
            for i, call in enumerate(calls):
                message = results[i]
                if message is None:
                    ran_ms = (time.perf_counter() - started[i]) * 1000 if i in started else 0.0
                    message = self._message(env, i, call, ToolOutput(INTERRUPTED_RESULT, is_error=True), ran_ms)
                    results[i] = message
                env["messages"].append(message)
        return [m for m in results if m is not None]

    def _interactive(self, call: ToolCall) -> bool:
        adapter = self.adapters.get(call.name)
        return adapter.interactive if adapter is not None else False

    async def run_call(self, env: Env, index: int, call: ToolCall) -> Message:
        emit(env, "tool_call", {"call": call, "index": index})
        start = time.perf_counter()
        adapter = self.adapters.get(call.name)
        description = getattr(adapter, "description", None)
        with use_env(env), in_call(call.id, call.name), tracing.tool_call(env, call, description) as traced:
            output = await self._output(env, call)
            traced(output.text, output.is_error, output.error_type)
        # The time a person took to answer an approval question is not the tool's (the approver records it).
        waited = env.get("metadata", {}).get("approval_waits", {}).get(call.id, 0.0)
        return self._message(env, index, call, output, max(0.0, (time.perf_counter() - start) * 1000 - waited))

    def _message(self, env: Env, index: int, call: ToolCall, output: ToolOutput, duration_ms: float) -> Message:
        meta: dict[str, Any] = {"tool_name": call.name, "duration_ms": round(duration_ms, 3),
                                "is_error": output.is_error}
        if output.overflow_path:
            meta["overflow_path"] = output.overflow_path
        approval = env.get("metadata", {}).get("approvals", {}).get(call.id)
        if approval is not None:
            meta["approval"] = approval  # recorded by the approvals hook, shown in the tool block
        waited = env.get("metadata", {}).get("approval_waits", {}).get(call.id)
        if waited:
            meta["approval_wait_ms"] = round(waited, 3)
        # Redacted before the model, the log, the session file or a display sees it (a tool may read a .env).
        message = Message(Role.TOOL, redact(output.text), tool_call_id=call.id, meta=meta,
                          attachments=output.attachments)
        emit(env, "tool_result", {"call": call, "message": message, "duration_ms": meta["duration_ms"],
                                  "is_error": output.is_error, "index": index})
        return message

    async def _output(self, env: Env, call: ToolCall) -> ToolOutput:
        adapter = self.adapters.get(call.name)
        if adapter is None:
            names = ", ".join(self.adapters) or "none"
            return ToolOutput(f"Error: unknown tool '{call.name}'. Available tools: {names}", is_error=True)
        if not call.arguments_valid:
            return ToolOutput(invalid_json_text(call), is_error=True)
        try:
            denied = await self._approve(env, call, adapter)
            if denied is not None:
                return ToolOutput(denied, is_error=True)
            value = await adapter.call(call.arguments)
            output = finish(value, env.get("overflow_dir"))
        except Exception as exc:
            output = finish(ToolOutput(error_text(exc), is_error=True, error_type=type(exc).__qualname__),
                            env.get("overflow_dir"))
        return output

    @staticmethod
    async def _approve(env: Env, call: ToolCall, adapter: Adapter) -> str | None:
        approve = env.get("approve")
        if approve is None:
            return None
        decision = await call_maybe_async(approve, call, adapter, thread=False)
        return decision if isinstance(decision, str) else None


def invalid_json_text(call: ToolCall) -> str:
    from brute_nb.message import INVALID_ARGUMENTS_KEY

    raw = str(call.arguments.get(INVALID_ARGUMENTS_KEY, ""))
    shown = raw if len(raw) <= RAW_PREVIEW else raw[:RAW_PREVIEW] + f"... ({len(raw)} chars)"
    return (f"Error: the arguments for tool '{call.name}' were not valid JSON, so it did not run. Send the "
            f"arguments as one JSON object. What was received: {shown}")
