"""Attachments from every source, through each provider's transport and real SDK against the strict fake server
(which checks the block shapes as the APIs do), and into a session file with its attachments folder."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure
from PIL import Image

from brute_nb import agent
from brute_nb.attachments import Attachment, AttachmentError, attachment
from brute_nb.fill import expand
from brute_nb.frames import frame, log_from_frame
from brute_nb.message import Log, Message
from brute_nb.middleware import SessionLog, ToolResultLoop
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.testing.rules import request_problems

from .helpers import FACTORIES, KINDS, READ, RunTools, tool_agent

pytestmark = pytest.mark.anyio


def png_bytes(color: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), color).save(buffer, format="PNG")
    return buffer.getvalue()


def figure() -> Figure:
    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([1, 2, 3])
    return fig


PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def sources(tmp_path: Path) -> dict[str, tuple[Any, str]]:
    (tmp_path / "plot.png").write_bytes(png_bytes("blue"))
    (tmp_path / "report.pdf").write_bytes(PDF)
    (tmp_path / "notes.txt").write_text("line one\nline two\n")
    return {"path_png": (tmp_path / "plot.png", "image"), "path_pdf": (str(tmp_path / "report.pdf"), "pdf"),
            "bytes": (png_bytes(), "image"), "pil": (Image.new("RGB", (2, 2), "green"), "image"),
            "figure": (figure(), "image"), "text": (tmp_path / "notes.txt", "text")}


def sent_parts(kind: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    first = body["messages"][0] if kind != "openai_responses" else body["input"][0]
    if kind == "openai_chat" and first["role"] == "system":
        first = body["messages"][1]
    return list(first["content"])


def decoded(kind: str, part: dict[str, Any]) -> bytes | str:
    if kind == "anthropic":
        source = part["source"]
        return source["data"] if source["type"] == "text" else base64.b64decode(source["data"])
    if part["type"] in ("text", "input_text"):
        return str(part["text"])
    url = (part.get("image_url") or {}).get("url") if kind == "openai_chat" else part.get("image_url")
    url = url or (part.get("file") or {}).get("file_data") or part.get("file_data")
    return base64.b64decode(str(url).split(",", 1)[1])


@pytest.mark.parametrize("kind", KINDS)
async def test_every_source_reaches_each_api_in_its_shape(fake_provider: FakeProvider, kind: str,
                                                          tmp_path: Path) -> None:
    values = sources(tmp_path)
    fake_provider.add("I see them.")
    items = [attachment(v) for v, _ in values.values()]
    env = await tool_agent(FACTORIES[kind](fake_provider), tools=[]).astart(
        "what is in these?", attachments=[v for v, _ in values.values()])
    assert env["messages"][0].attachments == tuple(items)
    parts = sent_parts(kind, fake_provider.requests[0]["json"])
    files = [p for p in parts if p.get("type") not in ("text", "input_text") or "[" in str(p.get("text", ""))[:1]]
    assert len(files) == len(items)
    expected = {"anthropic": {"image": "image", "pdf": "document", "text": "document"},
                "openai_chat": {"image": "image_url", "pdf": "file", "text": "text"},
                "openai_responses": {"image": "input_image", "pdf": "input_file", "text": "input_file"}}[kind]
    for part, item, (_, what) in zip(files, items, values.values(), strict=True):
        assert part["type"] == expected[what]
        got = decoded(kind, part)
        if what == "text":
            assert "line one" in str(got)
        else:
            assert got == item.read_bytes() and hashlib.sha256(got).hexdigest() == item.sha256  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_type_the_api_cannot_take_is_refused_clearly(fake_provider: FakeProvider, kind: str) -> None:
    odd = Attachment("application/zip", hashlib.sha256(b"PK").hexdigest(), "data.zip", data=b"PK")
    with pytest.raises(AttachmentError, match=r"cannot take the attachment data.zip \(application/zip\)"):
        await tool_agent(FACTORIES[kind](fake_provider), tools=[]).astart("x", attachments=[odd])
    assert fake_provider.requests == []


class ChartTool(RunTools):
    """A tool that renders a chart: its result carries the PNG."""

    async def __call__(self, env: dict[str, Any]) -> Any:
        env["tools"] = self.tools
        await self.app(env)
        for c in env["messages"][-1].tool_calls or ():
            env["messages"].tool("here is the chart", tool_call_id=c.id, attachments=[figure()])
        return env


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
async def test_tool_results_may_carry_images(fake_provider: FakeProvider, kind: str, stream: bool) -> None:
    fake_provider.add(reply("", call("read", {"file_path": "a"})), "A rising line.")
    a = agent().use(ToolResultLoop).use(ChartTool, tools=[READ]).run(FACTORIES[kind](fake_provider, stream=stream))
    env = await a.astart("plot it")
    assert env["messages"][-1].content == "A rising line."
    body = fake_provider.requests[1]["json"]
    text = json.dumps(body)
    assert {"anthropic": '"type": "image"', "openai_chat": '"type": "image_url"',
            "openai_responses": '"type": "input_image"'}[kind] in text
    if kind == "openai_chat":  # a tool message holds text only: the image follows in a user message
        assert [m["role"] for m in body["messages"]][-2:] == ["tool", "user"]


async def test_session_names_attachments_by_hash_and_stores_bytes_once(fake_provider: FakeProvider,
                                                                      tmp_path: Path) -> None:
    session = tmp_path / "nb.brute" / "chat.jsonl"
    image = png_bytes()
    fake_provider.add("one", "two", "three")

    def bot() -> Any:
        return (agent().use(SessionLog, path=session).use(RunTools, tools=[])
                .run(FACTORIES["anthropic"](fake_provider)))

    await bot().astart("first look", attachments=[image])
    await bot().astart("same picture again", attachments=[image])
    lines = session.read_text().splitlines()
    sha = hashlib.sha256(image).hexdigest()
    assert json.loads(lines[0])["attachments"] == [{"media_type": "image/png", "sha256": sha}]
    assert base64.b64encode(image).decode()[:40] not in session.read_text()  # small and greppable
    stored = list((tmp_path / "nb.brute" / "attachments").iterdir())
    assert [p.name for p in stored] == [f"{sha}.png"] and stored[0].read_bytes() == image
    # After a restart: the history is read from the file, and its image is sent again from the folder.
    reloaded = read_session(session)
    assert reloaded[0].attachments[0].read_bytes() == image
    await bot().astart("and now?")
    third = fake_provider.requests[2]["json"]["messages"][0]["content"]
    assert base64.b64decode(third[0]["source"]["data"]) == image


def test_a_frame_keeps_attachments_and_gives_them_a_column() -> None:
    log = Log()
    log.user("look", attachments=[png_bytes()])
    log.assistant("a red square")
    df = frame(log)
    assert len(df.loc[0, "attachments"]) == 1 and df.loc[1, "attachments"] is None
    back = log_from_frame(df)
    assert back[0].attachments == log[0].attachments and back[0].attachments[0].read_bytes() == png_bytes()
    assert Message.from_json(log[0].to_json()) == log[0]


def test_fig_in_a_prompt_becomes_an_attachment() -> None:
    fig = figure()
    found: list[Any] = []
    text = expand("what is wrong with {fig}? n={n}", {"fig": fig, "n": 3}, found)
    assert text == "what is wrong with [attached image: fig]? n=3"
    assert [a.media_type for a in found] == ["image/png"] and found[0].read_bytes().startswith(b"\x89PNG")
    assert "Figure" in expand("{fig}", {"fig": fig})  # without a list to collect into, the old text


def test_the_fake_checks_attachment_shapes_as_the_apis_do() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AAAA"}}]}]}
    assert any("Invalid MIME type 'image/bmp'" in p for p in request_problems("openai_chat", chat))
    anthropic = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "not base64!"}}]}]}
    assert any("not valid base64" in p for p in request_problems("anthropic", anthropic))
    responses = {"model": "m", "input": [{"type": "message", "role": "user", "content": [
        {"type": "input_file", "file_data": "data:application/pdf;base64,AAAA"}]}]}
    assert any("filename" in p for p in request_problems("openai_responses", responses))


def test_bad_sources_say_what_to_give() -> None:
    with pytest.raises(AttachmentError, match=r"cannot attach 'nope\.png'"):
        attachment("nope.png")
    with pytest.raises(AttachmentError, match="cannot tell what"):
        attachment(b"just some bytes")
    with pytest.raises(AttachmentError, match="cannot attach a int"):
        attachment(3)


def test_thumbnails_escape_names_and_embed_only_small_images() -> None:
    from brute_nb.notebook.views.thumbnails import thumbnails_bundle, thumbnails_html

    small = attachment(png_bytes(), name="<b>plot</b>.png")
    html = thumbnails_html([small])
    assert html.count("<img ") == 1 and "&lt;b&gt;plot&lt;/b&gt;.png" in html and "<b>plot" not in html
    big = Attachment("image/png", "0" * 64, "huge.png", data=b"\x89PNG" + b"0" * 300_000)
    gone = Attachment("application/pdf", "1" * 64, "gone.pdf", path="/nonexistent/gone.pdf")
    html = thumbnails_html([big, gone])
    assert "<img" not in html and html.count("brute-attachment\"") == 2
    bundle = thumbnails_bundle([small, gone])
    assert bundle is not None and bundle["text/plain"].startswith("attached: ")
    assert thumbnails_bundle([]) is None


def test_an_ipython_image_out_value_is_attachable() -> None:
    from IPython.display import Image as DisplayImage

    found: list[Any] = []
    text = expand("look at {Out[7]}", {"Out": {7: DisplayImage(data=png_bytes())}}, found)
    assert text == "look at [attached image: Out[7]]"
    assert found[0].read_bytes() == png_bytes()


@pytest.mark.parametrize("kind", KINDS)
async def test_a_real_tool_returning_a_figure_sends_it_with_its_result(fake_provider: FakeProvider,
                                                                       kind: str) -> None:
    from brute_nb import tool
    from brute_nb.middleware import DefaultToolPipeline

    @tool
    def chart(values: list[float]) -> Any:
        """Plot the values as a line chart.

        Args:
            values: the points to plot
        """
        fig = Figure(figsize=(1, 1))
        fig.add_subplot().plot(values)
        return ["a line through the points", fig]

    fake_provider.add(reply("", call("chart", {"values": [1, 3, 2]})), "It peaks in the middle.")
    a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[chart]).run(FACTORIES[kind](fake_provider))
    env = await a.astart("chart 1 3 2")
    result = next(m for m in env["messages"] if m.role == "tool")
    assert result.content == "a line through the points"  # "figure.png" is no name the tool gave (issue 42 §6)
    assert [x.media_type for x in result.attachments] == ["image/png"]
    assert base64.b64encode(result.attachments[0].read_bytes()).decode()[:60] in json.dumps(
        fake_provider.requests[1]["json"])
