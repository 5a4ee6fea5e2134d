"""Test doubles for the notebook layer while the real tool pipeline lives on another branch.

``FakeToolPipeline`` keeps the tool pipeline's contract that this branch relies on: it advertises tools, runs the
last reply's calls after asking ``env["approve"](call, adapter)`` (a string = denied, used as the result), and copies
``env["metadata"]["approvals"][call.id]`` into the result's ``meta["approval"]``.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, ClassVar

import anyio

from brute_nb.agent import Agent, App, Env
from brute_nb.events import emit
from brute_nb.message import Message, Role
from brute_nb.middleware import MaxIterations, SessionLog, ToolResultLoop
from brute_nb.middleware.budget import Budget
from brute_nb.notebook.approvals import Approvals


class FakeToolPipeline:
    def __init__(self, app: App, tools: list[Any]) -> None:
        self.app = app
        self.tools = {t.name: t for t in tools}

    async def __call__(self, env: Env) -> Any:
        env["tools"] = list(self.tools.values())
        await self.app(env)
        last = env["messages"][-1]
        for index, call in enumerate(last.tool_calls or ()):
            emit(env, "tool_call", {"call": call, "index": index})
            tool = self.tools[call.name]
            denial = None
            approve = env.get("approve")
            if approve is not None:
                denial = approve(call, tool)
                if inspect.isawaitable(denial):
                    denial = await denial
            if denial is not None:
                text = denial
            else:
                try:
                    text = await tool.execute(**call.arguments)
                except Exception as exc:
                    text = f"Error: {type(exc).__name__}: {exc}"
            meta = {"tool_name": call.name}
            decision = env.get("metadata", {}).get("approvals", {}).get(call.id)
            if decision is not None:
                meta["approval"] = decision
            message = Message(Role.TOOL, text, tool_call_id=call.id, meta=meta)
            env["messages"].append(message)
            emit(env, "tool_result", {"call": call, "message": message, "duration_ms": 1.0,
                                      "is_error": text.startswith("Error:"), "index": index})
        return env


class EchoTool:
    name = "echo"
    risk = "read"
    description = "echo"
    params: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"text": {"type": "string"}}}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.params}

    async def execute(self, text: str = "") -> str:
        return f"echo: {text}"


class ShellTool(EchoTool):
    name = "shell"
    risk = "shell"

    async def execute(self, text: str = "") -> str:
        return f"ran: {text}"


class HangTool(EchoTool):
    """Sets ``started`` then waits until cancelled (for Stop)."""

    name = "hang"

    def __init__(self) -> None:
        self.started = threading.Event()

    async def execute(self, text: str = "") -> str:
        self.started.set()
        await anyio.sleep_forever()
        return "never"


def build_test_agent(nb: Any, tools: list[Any]) -> Agent:
    """The default stack's order with the fake pipeline in place of the real one."""
    s = nb.settings
    agent = (Agent().use(SessionLog, path=nb.session_path).use(Approvals, policy=s.approve).use(ToolResultLoop)
             .use(MaxIterations, limit=s.max_iterations))
    if s.budget:
        agent.use(Budget, **s.budget)
    return agent.use(FakeToolPipeline, tools=tools).run(nb.provider)
