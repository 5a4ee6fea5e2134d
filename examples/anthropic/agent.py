"""A tool-using agent on the ``anthropic`` SDK, offline: ``AsyncAnthropic`` pointed at a local fake.

Run with ``python examples/anthropic/agent.py``. Every example in ``examples/<library>/`` builds the same agent;
only the handler (the one model call) differs: here the system prompt goes in ``system=`` and tool results ride in
user turns, which the transport does.
"""

from __future__ import annotations

from typing import Any

import anthropic

import brute_nb
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, SystemPrompt, ToolResultLoop
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.transports import Anthropic


@brute_nb.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def handler(client: Any) -> Any:
    async def run(env: dict[str, Any]) -> None:
        tools = [{"name": t.name, "description": t.description, "input_schema": t.schema} for t in env["tools"]]
        message = await client.messages.create(
            model="claude-x", max_tokens=1024, system=Anthropic.system_text(env["messages"]) or anthropic.omit,
            messages=Anthropic.dump_all(env["messages"]), tools=tools)
        env["messages"].append(Anthropic.wrap_one(message))

    return run


with FakeProvider([reply("", call("add", {"a": 2, "b": 40})), "2 + 40 = 42."]) as fake:
    client = anthropic.AsyncAnthropic(base_url=fake.base_url, api_key=fake.api_key)
    agent = (
        brute_nb.agent()
        .use(SystemPrompt, text="You are a careful calculator. Use the add tool.")
        .use(ToolResultLoop)
        .use(MaxIterations, limit=5)
        .use(DefaultToolPipeline, tools=[add])
        .run(handler(client))
    )
    env = agent.start("What is 2 + 40?")

for message in env["messages"]:
    print(f"{message.role.value:>9}: {message.content or message.tool_calls}")
