"""DoomLoopDetection (Brute's, threshold 3): an agent repeating the same tool calls is stopped and told why.

Before each model call it looks at the tool calls made since the last user message, as signatures
``(name, arguments as sorted JSON)``, and finds the shortest pattern at their end that repeats back to back at
least ``threshold`` times: ``A, A, A`` and ``A, B, A, B, A, B`` both count. On a match it appends Brute's
corrective notice as a user message (``meta["synthetic"]``, so the model reads why it was stopped and the log shows
it was not the user's), records the count in ``env["metadata"]["doom_loop_detected"]``, and sets ``should_exit``
(reason ``doom_loop_detected``), which the views show the user; it does not make the call, so no repeated call
runs again. ``FinalAnswer``, when in the stack, then asks the model for its answer without tools.

Two fixes to Brute, as the behavioural reference recommends: only the calls since the last user message count
(Brute looked at the whole history, so an old loop stopped every later turn at once), and arguments are compared as
sorted JSON (Brute's key depended on the order of the arguments' keys).
"""

from __future__ import annotations

import json
from typing import Any

from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError
from brute_nb.message import Message, Role, ToolCall, role_of
from brute_nb.middleware.tool_result_loop import should_exit

NOTICE = """\
Doom loop detected: the same tool calls were repeated {count} times in a row, so this turn was stopped: you are \
stuck. Stop and take a fundamentally different approach: re-read the files to confirm your edits were applied, try \
a different tool or strategy, break the work into smaller steps, and find out why a failing command fails before \
running it again."""

Signature = tuple[str, str]


def signatures(messages: list[Any]) -> list[Signature]:
    """The tool calls since the last user message, in order, as ``(name, sorted JSON of the arguments)``."""
    start = next((i + 1 for i in range(len(messages) - 1, -1, -1) if role_of(messages[i]) == "user"), 0)
    found: list[Signature] = []
    for m in messages[start:]:
        if role_of(m) != "assistant":
            continue
        for raw in m.tool_calls or ():
            call = raw if isinstance(raw, ToolCall) else ToolCall.coerce(raw)
            found.append((call.name, json.dumps(call.arguments, sort_keys=True, default=str)))
    return found


def repetitions(found: list[Signature], threshold: int) -> int:
    """How many times the shortest repeating pattern at the end repeats (Brute's rule), or 0 below ``threshold``."""
    n = len(found)
    for length in range(1, n // threshold + 1):
        pattern = found[n - length:]
        count, end = 1, n - length
        while end - length >= 0 and found[end - length:end] == pattern:
            count += 1
            end -= length
        if count >= threshold:
            return count
    return 0


class DoomLoopDetection:
    def __init__(self, app: App, threshold: int = 3) -> None:
        if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 2:
            raise MiddlewareError(
                f"DoomLoopDetection(threshold=...) must be an integer of at least 2, got {threshold!r}")
        self.app = app
        self.threshold = threshold

    async def __call__(self, env: Env) -> Any:
        count = repetitions(signatures(env["messages"]), self.threshold)
        if not count:
            return await self.app(env)
        env["messages"].append(Message(Role.USER, NOTICE.format(count=count),
                                        meta={"synthetic": True, "source": "DoomLoopDetection"}))
        env.setdefault("metadata", {})["doom_loop_detected"] = count
        should_exit(env, "doom_loop_detected",
                    f"Stopped: the agent was stuck repeating the same tool calls ({count} repetitions); it was told "
                    "to try a different approach", "DoomLoopDetection")
        return env
