"""Each attachment kind goes to each API in the form that API documents (issue 42 §3, §6), through the real SDKs
against the fake, in a user message and in a tool's result:

- a file's name is the one its user or tool gave it, in the field the API has for one (Anthropic's document
  ``title``, an ``input_file``'s or a Chat ``file``'s ``filename``), never brute_nb's storage name
  (``<sha256>.<ext>``), and never a line brute_nb appends to the tool's own text;
- the Responses API reads a text file from its URL (``input_file.file_url``), as it reads PDFs;
- a tool's files go inside its result where the API takes them there (Anthropic ``tool_result`` content, Responses
  ``function_call_output`` parts), and in a user message after the results on Chat Completions, whose ``tool``
  messages take text only;
- a session read back from its file sends the same.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from brute_nb import agent, tool
from brute_nb.attachments import Attachment, attachment, from_bytes
from brute_nb.message import Message, Role
from brute_nb.middleware import DefaultToolPipeline, SessionLog
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.testing import FakeProvider
from brute_nb.testing.rules import request_problems
from brute_nb.testing.script import call, reply
from tests.providers.helpers import FACTORIES
from tests.transports.test_url_attachments import TXT, Web

pytestmark = pytest.mark.anyio

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
NOTES = "line one\nline two\n"


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(buffer, format="PNG")
    return buffer.getvalue()


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def ask(fake: FakeProvider, kind: str, files: list[Attachment]) -> Any:
    fake.add("seen")
    await agent().run(FACTORIES[kind](fake)).astart(Message(Role.USER, "Look.", attachments=files))
    return fake.requests[-1]["json"]


NAMELESS = {
    "anthropic": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": NOTES}},
                  {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}},
                  {"type": "text", "text": "Look."}],
    "openai_chat": [{"type": "text", "text": "Look."}, {"type": "text", "text": NOTES},
                    {"type": "file", "file": {"filename": "file.pdf", "file_data": data_url("application/pdf", PDF)}}],
    "openai_responses": [
        {"type": "input_text", "text": "Look."},
        {"type": "input_file", "filename": "file.txt", "file_data": data_url("text/plain", NOTES.encode())},
        {"type": "input_file", "filename": "file.pdf", "file_data": data_url("application/pdf", PDF)}],
}
"""A nameless text file and a nameless PDF, as each API gets them: Anthropic's ``title`` is optional and left out;
an ``input_file`` or a Chat ``file`` with ``file_data`` needs a ``filename``, so it is a plain ``file.<ext>`` (the
extension tells the API how to read it); Chat's text part is the file's text alone."""


@pytest.mark.parametrize("kind", sorted(NAMELESS))
async def test_a_nameless_file_is_not_named_by_its_storage_name(fake_provider: FakeProvider, kind: str) -> None:
    files = [from_bytes(NOTES.encode(), "text/plain"), from_bytes(PDF)]
    body = await ask(fake_provider, kind, files)
    for item in files:
        assert item.sha256 not in json.dumps(body)
    turn = body["input"][-1] if kind == "openai_responses" else body["messages"][-1]
    content = [{k: v for k, v in p.items() if k != "cache_control"} for p in turn["content"]]
    assert content == NAMELESS[kind]


async def test_a_text_file_by_url_is_read_by_the_responses_api(fake_provider: FakeProvider) -> None:
    """The Responses API documents ``file_url`` for every file type it reads, text included: brute_nb fetches
    nothing."""
    fake_provider.add("seen")
    web = Web()
    provider = FACTORIES["openai_responses"](fake_provider)
    provider.fetch_transport = web.transport
    await agent().run(provider).astart(Message(Role.USER, "Look.", attachments=[Attachment.url(TXT)]))
    assert fake_provider.requests[-1]["json"]["input"][-1]["content"][-1] == {"type": "input_file", "file_url": TXT}
    assert web.fetched == []


def tool_files(tmp_path: Path) -> list[Any]:
    """What the tool returns: its text, a PDF from its file, a text file it named, and an image it did not."""
    (tmp_path / "report.pdf").write_bytes(PDF)
    return ["the report", attachment(tmp_path / "report.pdf"), from_bytes(b"ok\n", "text/plain", "run.log"),
            attachment(png())]


def in_result(kind: str, body: dict[str, Any]) -> Any:
    """Where the tool's files went: the tool_result's content, the function output, or the Chat user message
    after the tool message (with the tool message itself)."""
    if kind == "anthropic":
        turn = next(m for m in body["messages"] if isinstance(m["content"], list)
                    and any(b.get("type") == "tool_result" for b in m["content"]))
        (result,) = [b for b in turn["content"] if b["type"] == "tool_result"]
        return result["content"]
    if kind == "openai_responses":
        return next(i for i in body["input"] if i.get("type") == "function_call_output")["output"]
    at = next(i for i, m in enumerate(body["messages"]) if m["role"] == "tool")
    return body["messages"][at:at + 2]


RESULTS = {
    "anthropic": [
        {"type": "text", "text": "the report"},
        {"type": "document", "title": "report.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}},
        {"type": "document", "title": "run.log",
         "source": {"type": "text", "media_type": "text/plain", "data": "ok\n"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(png())}}],
    "openai_responses": [
        {"type": "input_text", "text": "the report"},
        {"type": "input_file", "filename": "report.pdf", "file_data": data_url("application/pdf", PDF)},
        {"type": "input_file", "filename": "run.log", "file_data": data_url("text/plain", b"ok\n")},
        {"type": "input_image", "image_url": data_url("image/png", png()), "detail": "auto"}],
    "openai_chat": [
        {"role": "tool", "tool_call_id": "call_1", "content": "the report"},
        {"role": "user", "content": [
            {"type": "text", "text": "Files returned by the tool calls above:"},
            {"type": "file", "file": {"filename": "report.pdf", "file_data": data_url("application/pdf", PDF)}},
            {"type": "text", "text": "[run.log]\nok\n"},
            {"type": "image_url", "image_url": {"url": data_url("image/png", png())}}]}],
}


def snap_agent(fake: FakeProvider, kind: str, returned: list[Any], path: Path) -> Any:
    @tool
    def snap() -> Any:
        """Write the report."""
        return returned

    return (agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[snap])
            .run(FACTORIES[kind](fake)))


@pytest.mark.parametrize("kind", sorted(RESULTS))
async def test_a_tools_files_go_in_the_documented_form_under_their_own_names(
        fake_provider: FakeProvider, kind: str, tmp_path: Path) -> None:
    fake_provider.add(reply("", call("snap", {}, id="call_1")), "Read.", "Again.")
    path = tmp_path / "s.jsonl"
    env = await snap_agent(fake_provider, kind, tool_files(tmp_path), path).astart("report")
    result = next(m for m in env["messages"] if m.role == "tool")
    assert result.content == "the report"  # the tool's own text: no line of brute_nb's appended
    sent = fake_provider.requests[1]["json"]
    assert in_result(kind, sent) == RESULTS[kind]
    digests = [a.sha256 for a in result.attachments]
    assert len(digests) == 3 and not any(d in json.dumps(sent) for d in digests)
    # read back from the session file (a new agent, the bytes from the attachments folder): the same result goes
    await snap_agent(fake_provider, kind, [], path).astart("again")
    assert in_result(kind, fake_provider.requests[-1]["json"]) == RESULTS[kind]


def test_the_fake_checks_the_parts_of_a_function_output() -> None:
    """As the Responses API: a function's output parts are input_text, input_image or input_file, and a file sent
    as data has a filename."""
    def body(*parts: dict[str, Any]) -> dict[str, Any]:
        return {"model": "m", "input": [
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "c1", "name": "snap", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": list(parts)}]}

    good = {"type": "input_file", "filename": "a.txt", "file_data": data_url("text/plain", b"a")}
    assert request_problems("openai_responses", body({"type": "input_text", "text": "x"}, good)) == []
    assert any("filename" in p for p in request_problems("openai_responses", body(
        {"type": "input_file", "file_data": data_url("text/plain", b"a")})))
    assert any("'text'" in p for p in request_problems("openai_responses", body({"type": "text", "text": "x"})))
    assert any("image" in p.lower() for p in request_problems("openai_responses", body(
        {"type": "input_image", "image_url": "data:text/plain;base64,YQ==", "detail": "auto"})))


def test_the_fake_checks_the_blocks_of_a_tool_result() -> None:
    """As the Messages API: a tool_result's content holds text, image, document, search_result or tool_reference
    blocks, not another API's parts."""
    def body(*blocks: dict[str, Any]) -> dict[str, Any]:
        return {"model": "m", "max_tokens": 10, "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "snap", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": list(blocks)}]}]}

    assert request_problems("anthropic", body(*RESULTS["anthropic"])) == []
    assert any("'input_file'" in p for p in request_problems("anthropic", body(RESULTS["openai_responses"][1])))
