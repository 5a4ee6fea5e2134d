"""``AnswerCalls``: a middleware that stands in for the tool pipeline in tests and benchmarks.

It advertises tools and answers every call of the model's reply with text it is given, running nothing, so a test
of a provider, of compaction or of caching decides exactly what each tool result holds (and a benchmark's tool
results cost nothing of their own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brute_nb.message import ToolCall


class AnswerCalls:
    """Advertise ``tools``; answer each call with ``answer`` (a fixed text, or a function of the call)."""

    def __init__(self, app: Any, tools: list[Any], answer: str | Callable[[ToolCall], str] = "result") -> None:
        self.app = app
        self.tools = tools
        self.answer = answer

    async def __call__(self, env: dict[str, Any]) -> Any:
        env["tools"] = self.tools
        await self.app(env)
        for c in env["messages"][-1].tool_calls or ():
            text = self.answer if isinstance(self.answer, str) else self.answer(c)
            env["messages"].tool(text, tool_call_id=c.id)
        return env
