"""A tool-using agent on mozilla-ai's ``any-llm``, offline: ``any_llm.acompletion`` against a local fake.

Run with ``python examples/any_llm/agent.py``. Every example in ``examples/<library>/`` builds the same agent; only
the handler (the one model call) differs. With a real key, drop ``api_base`` and name any provider any-llm
supports (``"mistral:mistral-small-latest"``, ``"gemini:gemini-2.5-flash"``...).
"""

from __future__ import annotations

from typing import Any

import any_llm

import brute_nb
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, SystemPrompt, ToolResultLoop
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.transports import AnyLLM


@brute_nb.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def handler(client: dict[str, str]) -> Any:
    async def run(env: dict[str, Any]) -> None:
        tools = [{"type": "function", "function": t.to_dict()} for t in env["tools"]]
        completion = await any_llm.acompletion("openai:gpt-x", AnyLLM.dump_all(env["messages"]), tools=tools,
                                               **client)
        env["messages"].append(AnyLLM.wrap_one(completion))

    return run


with FakeProvider([reply("", call("add", {"a": 2, "b": 40})), "2 + 40 = 42."]) as fake:
    client = {"api_base": fake.openai_base_url, "api_key": fake.api_key}
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
