"""A tool-using agent on the ``openai`` SDK, offline: ``AsyncOpenAI`` pointed at a local fake.

Run with ``python examples/openai/agent.py``. Every example in ``examples/<library>/`` builds the same agent; only
the handler (the one model call) differs. ``brute_nb.providers.OpenAIChat`` is this handler with streaming,
record/replay and error translation added.
"""

from __future__ import annotations

from typing import Any

import openai

import brute_nb
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, SystemPrompt, ToolResultLoop
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.transports import OpenAI


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
        tools = [{"type": "function", "function": t.to_dict()} for t in env["tools"]]
        completion = await client.chat.completions.create(model="gpt-x", messages=OpenAI.dump_all(env["messages"]),
                                                          tools=tools)
        env["messages"].append(OpenAI.wrap_one(completion))

    return run


with FakeProvider([reply("", call("add", {"a": 2, "b": 40})), "2 + 40 = 42."]) as fake:
    client = openai.AsyncOpenAI(base_url=fake.openai_base_url, api_key=fake.api_key)
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
