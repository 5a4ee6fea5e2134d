"""Attachments by URL (issue 27 §4): sent as each API's URL source and never fetched by brute_nb when the API reads
the URL itself; fetched through the fetch tool's guard, for that request only, when it cannot; kept as the URL in
the log and the session file."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx2
import pytest

from brute_nb import agent
from brute_nb.attachments import Attachment, AttachmentError, UrlAttachment, store_all
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog
from brute_nb.testing import FakeProvider
from tests.providers.helpers import FACTORIES

pytestmark = pytest.mark.anyio

PNG = "https://example.org/img/cat.png"
PDF = "https://example.org/papers/paper.pdf"
TXT = "https://example.org/notes/notes.txt"
PDF_BYTES = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


class Web:
    """A MockTransport standing for the web: what was fetched, and the bytes each URL serves."""

    def __init__(self, pages: dict[str, tuple[int, bytes]] | None = None) -> None:
        self.pages = pages or {PDF: (200, PDF_BYTES), TXT: (200, b"remember the milk")}
        self.fetched: list[str] = []
        self.transport = httpx2.MockTransport(self.answer)

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        self.fetched.append(str(request.url))
        status, body = self.pages.get(str(request.url), (404, b"not found"))
        return httpx2.Response(status, content=body)


async def send(fake: FakeProvider, kind: str, urls: list[str], web: Web, path: Path | None = None) -> list[Any]:
    provider = FACTORIES[kind](fake)
    provider.fetch_transport = web.transport
    a = agent().use(SessionLog, path=path).run(provider) if path else agent().run(provider)
    await a.astart(Message(Role.USER, "Look.", attachments=[Attachment.url(u) for u in urls]))
    body = fake.requests[-1]["json"]
    if kind == "openai_responses":
        return list(body["input"][-1]["content"])
    content = body["messages"][-1]["content"]
    return list(content)


@pytest.mark.parametrize(("kind", "urls", "expected"), [
    ("anthropic", [PNG, PDF], [{"type": "image", "source": {"type": "url", "url": PNG}},
                               {"type": "document", "title": "paper.pdf", "source": {"type": "url", "url": PDF}}]),
    ("openai_chat", [PNG], [{"type": "image_url", "image_url": {"url": PNG}}]),
    ("openai_responses", [PNG, PDF], [{"type": "input_image", "image_url": PNG, "detail": "auto"},
                                      {"type": "input_file", "file_url": PDF}]),
])
async def test_an_api_that_reads_urls_gets_the_url_and_nothing_is_fetched(
        fake_provider: FakeProvider, kind: str, urls: list[str], expected: list[dict[str, Any]]) -> None:
    fake_provider.add("seen")
    web = Web()
    parts = await send(fake_provider, kind, urls, web)
    assert [p for p in parts if p.get("type") not in ("text", "input_text")] == expected
    assert web.fetched == []


async def test_a_pdf_url_for_chat_is_fetched_through_the_guard_and_the_log_keeps_the_url(
        fake_provider: FakeProvider, tmp_path: Path) -> None:
    fake_provider.add("read it")
    web = Web()
    parts = await send(fake_provider, "openai_chat", [PDF], web, tmp_path / "s.jsonl")
    (file,) = [p for p in parts if p["type"] == "file"]
    assert file["file"]["file_data"] == "data:application/pdf;base64," + base64.b64encode(PDF_BYTES).decode()
    assert web.fetched == [PDF]
    line = (tmp_path / "s.jsonl").read_text().splitlines()[0]
    (kept,) = Message.from_json(line).attachments
    assert isinstance(kept, UrlAttachment) and kept.link == PDF
    assert not (tmp_path / "attachments").exists()  # no bytes stored for a URL


async def test_a_text_url_for_anthropic_is_fetched_as_a_text_document(fake_provider: FakeProvider) -> None:
    fake_provider.add("noted")
    web = Web()
    parts = await send(fake_provider, "anthropic", [TXT], web)
    (doc,) = [p for p in parts if p["type"] == "document"]
    assert doc["source"] == {"type": "text", "media_type": "text/plain", "data": "remember the milk"}


@pytest.mark.parametrize(("url", "says"), [
    ("http://169.254.169.254/latest/meta-data/notes.txt", "Refused to fetch"),
    ("http://127.0.0.1:8000/secret.txt", "Refused to fetch"),
    ("http://metadata.google.internal/computeMetadata/notes.txt", "cloud metadata"),
    ("https://example.org/gone/notes.txt", "HTTP 404"),
])
async def test_a_url_the_fetch_guard_refuses_fails_before_the_model_is_asked(
        fake_provider: FakeProvider, url: str, says: str) -> None:
    web = Web()
    provider = FACTORIES["anthropic"](fake_provider)
    provider.fetch_transport = web.transport
    with pytest.raises(AttachmentError, match=says):
        await agent().run(provider).astart(Message(Role.USER, "x", attachments=[Attachment.url(url)]))
    assert fake_provider.received == 0


def test_a_url_attachment_is_a_value_that_round_trips(tmp_path: Path) -> None:
    a = Attachment.url(PDF)
    assert (a.media_type, a.name, a.kind) == ("application/pdf", "paper.pdf", "pdf")
    m = Message(Role.USER, "x", attachments=[a, "https://example.org/a.png?size=2"])
    back = Message.from_json(m.to_json())
    assert back == m and back.attachments[1].media_type == "image/png"
    store_all([m], tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(AttachmentError, match="pass media_type="):
        Attachment.url("https://example.org/download?id=3")
    with pytest.raises(AttachmentError, match="only http:// and https://"):
        Attachment.url("file:///etc/passwd", media_type="text/plain")
    assert Attachment.url("https://example.org/download?id=3", media_type="application/pdf").kind == "pdf"
