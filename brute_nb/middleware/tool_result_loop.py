"""The tool-result loop (Brute's ``Loop::ToolResult``) and its iteration guard.

``ToolResultLoop`` re-invokes the inner stack while the last message is a tool result and no guard has set
``should_exit``. ``MaxIterations`` is such a guard: past its limit it sets ``should_exit`` and does not make the
call, so the turn always ends after a complete step, never with an unanswered tool call.
"""

from __future__ import annotations

from typing import Any

from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError
from brute_nb.events import emit
from brute_nb.message import role_of


class ToolResultLoop:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, env: Env) -> Any:
        env.setdefault("iteration", 1)
        while True:
            await self.app(env)
            if env.get("should_exit"):
                break
            messages = env["messages"]
            if not messages or role_of(messages[-1]) != "tool":
                break
            env["iteration"] += 1
        return env


def should_exit(env: Env, reason: str, message: str, source: str) -> None:
    """Ask the loop to stop (first writer wins, as in Brute) and tell the views why."""
    if env.get("should_exit"):
        return
    env["should_exit"] = {"reason": reason, "message": message, "source": source}
    emit(env, "should_exit", env["should_exit"])


class MaxIterations:
    """Stops the turn once ``limit`` model calls have been made in it (Brute's default: 100)."""

    def __init__(self, app: App, limit: int = 100) -> None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise MiddlewareError(f"MaxIterations(limit=...) must be a positive integer, got {limit!r}")
        self.app = app
        self.limit = limit

    async def __call__(self, env: Env) -> Any:
        if env.get("iteration", 1) > self.limit:
            should_exit(
                env,
                "max_iterations_reached",
                f"Stopped after {self.limit} model calls (MaxIterations limit={self.limit}).",
                "MaxIterations",
            )
            return env
        return await self.app(env)
