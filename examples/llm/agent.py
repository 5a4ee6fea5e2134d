"""A tool-using agent on simonw's ``llm``, offline: the model is ``llm``'s OpenAI plugin pointed at a local fake.

Run with ``python examples/llm/agent.py``. Every example in ``examples/<library>/`` builds the same agent; only
the handler (the one model call) differs. With a real key, use ``llm.get_model("gpt-4.1-mini")`` (or any model an
installed ``llm`` plugin offers) instead of the fake.
"""

from __future__ import annotations

from typing import Any

import llm
from llm.default_plugins.openai_models import Chat

import brute_nb
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, SystemPrompt, ToolResultLoop
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.transports import LLM


@brute_nb.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def handler(model: Any, key: str) -> Any:
    def run(env: dict[str, Any]) -> None:
        request = LLM.dump_all(env["messages"])
        tools = [llm.Tool(name=t.name, description=t.description, input_schema=t.schema) for t in env["tools"]]
        response = model.prompt(request.prompt, messages=request.history, tool_results=request.tool_results,
                                tools=tools, key=key)
        env["messages"].extend(LLM.wrap_each(response))

    return run


with FakeProvider([reply("", call("add", {"a": 2, "b": 40})), "2 + 40 = 42."]) as fake:
    model = Chat("fake-gpt", model_name="gpt-x", api_base=fake.openai_base_url, supports_tools=True)
    agent = (
        brute_nb.agent()
        .use(SystemPrompt, text="You are a careful calculator. Use the add tool.")
        .use(ToolResultLoop)
        .use(MaxIterations, limit=5)
        .use(DefaultToolPipeline, tools=[add])
        .run(handler(model, fake.api_key))
    )
    env = agent.start("What is 2 + 40?")

for message in env["messages"]:
    print(f"{message.role.value:>9}: {message.content or message.tool_calls}")
