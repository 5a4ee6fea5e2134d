"""A text file goes to the Responses API as the ``input_file`` part it documents (issue 42 §3), not pasted into the
prompt under brute_nb's own label: in a user message and in a function's output, through the real SDK."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.attachments import from_bytes
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.testing import FakeProvider
from brute_nb.testing.script import call, reply
from tests.parity.helpers import READ, RunTools
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio


def text_file(part: dict[str, Any]) -> str:
    head, _, data = str(part["file_data"]).partition(",")
    assert head == "data:text/plain;base64"
    return base64.b64decode(data).decode()


async def test_a_text_file_is_an_input_file(fake_provider: FakeProvider, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line one\nline two\n")
    fake_provider.add("Two lines.")
    await agent().use(ToolResultLoop).use(RunTools, tools=[]).run(FACTORIES["openai_responses"](fake_provider)).astart(
        "what is in it?", attachments=[tmp_path / "notes.txt"])
    (message,) = fake_provider.requests[0]["json"]["input"]
    question, part = message["content"]
    assert question == {"type": "input_text", "text": "what is in it?"}
    assert part["type"] == "input_file" and part["filename"] == "notes.txt"
    assert text_file(part) == "line one\nline two\n"


class FileResult(RunTools):
    """Answers each call with a text file."""

    async def __call__(self, env: dict[str, Any]) -> Any:
        env["tools"] = self.tools
        await self.app(env)
        for c in env["messages"][-1].tool_calls or ():
            log = from_bytes(b"ok\n", "text/plain", "run.log")
            env["messages"].tool("the log", tool_call_id=c.id, attachments=[log])
        return env


async def test_a_text_file_in_a_function_output_is_an_input_file(fake_provider: FakeProvider) -> None:
    fake_provider.add(reply("", call("read", {"file_path": "run.log"})), "It says ok.")
    await agent().use(ToolResultLoop).use(FileResult, tools=[READ]).run(
        FACTORIES["openai_responses"](fake_provider)).astart("read the log")
    output = next(i for i in fake_provider.requests[1]["json"]["input"] if i["type"] == "function_call_output")
    text, part = output["output"]
    assert text == {"type": "input_text", "text": "the log"}
    assert part["type"] == "input_file" and part["filename"] == "run.log" and text_file(part) == "ok\n"
