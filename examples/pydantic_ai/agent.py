"""A tool-using agent on pydantic-ai's models, offline: its OpenAI chat model pointed at a local fake.

Run with ``python examples/pydantic_ai/agent.py``. Every example in ``examples/<library>/`` builds the same agent;
only the handler (the one model call) differs. The log goes to pydantic-ai as its own message history
(``ModelRequest``/``ModelResponse``), so any pydantic-ai model (``"anthropic:claude-..."``, ``"google-gla:..."``)
fits here.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.direct import model_request
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

import brute_nb
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, SystemPrompt, ToolResultLoop
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.transports import PydanticAI


@brute_nb.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def handler(model: Any) -> Any:
    async def run(env: dict[str, Any]) -> None:
        tools = [ToolDefinition(name=t.name, description=t.description, parameters_json_schema=t.schema)
                 for t in env["tools"]]
        response = await model_request(model, PydanticAI.dump_all(env["messages"]),
                                       model_request_parameters=ModelRequestParameters(function_tools=tools))
        env["messages"].extend(PydanticAI.wrap_each([response]))

    return run


with FakeProvider([reply("", call("add", {"a": 2, "b": 40})), "2 + 40 = 42."]) as fake:
    model = OpenAIChatModel("gpt-x", provider=OpenAIProvider(base_url=fake.openai_base_url, api_key=fake.api_key))
    agent = (
        brute_nb.agent()
        .use(SystemPrompt, text="You are a careful calculator. Use the add tool.")
        .use(ToolResultLoop)
        .use(MaxIterations, limit=5)
        .use(DefaultToolPipeline, tools=[add])
        .run(handler(model))
    )
    env = agent.start("What is 2 + 40?")

for message in env["messages"]:
    print(f"{message.role.value:>9}: {message.content or message.tool_calls}")
