"""The hostile URLs table (``hostile.urls``) against every entry point that takes a URL attachment: ``Attachment.url``,
``--attach`` on the magic, and a turn through each provider's real SDK against the strict fake (which reads an image or
PDF by URL itself, and, on Chat and Anthropic, gets a text file's bytes that brute_nb fetched through the fetch tool's
guard; the Responses API reads a text file from its URL itself). The web is a MockTransport under the guard, or, for a
name that resolves to loopback, a real connection to a local server, which the guard must refuse before a byte of the
request is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from IPython.core.error import UsageError

from brute_nb import agent
from brute_nb.attachments import Attachment, AttachmentError
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog
from brute_nb.notebook.views.transcript_html import log_html
from brute_nb.redact import KEY_VARIABLES
from brute_nb.testing import FakeProvider
from brute_nb.testing.hostile import live_parts
from tests.ipython_shell import loaded_shell
from tests.providers.helpers import FACTORIES
from tests.security.hostile import URLS, Case
from tests.security.test_html_output import published_bundles, rendered

APIS = sorted(FACTORIES)
FETCHING = ["anthropic", "openai_chat"]
"""The APIs for which brute_nb fetches a text file by URL: the Responses API reads it itself (``file_url``)."""
KEY = "sk-hostile-url-5f1e9a77c0"


def cases(tag: str) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in URLS if tag in c.tags]


class Web:
    """The web as a MockTransport: what was asked for (with its headers), a page for every URL, and a redirect."""

    def __init__(self) -> None:
        self.asked: list[httpx2.Request] = []
        self.transport = httpx2.MockTransport(self.answer)

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        self.asked.append(request)
        if request.url.path.startswith("/moved/"):
            return httpx2.Response(302, headers={"location": "http://127.0.0.1/notes.txt"})
        return httpx2.Response(200, content=b"the page")


@pytest.fixture(autouse=True)
def the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def url_of(case: Case, port: int = 9) -> str:
    return str(case.data["url"]).replace("{port}", str(port)).replace("{key}", KEY)


async def turn(fake: FakeProvider, api: str, url: str, web: Web | None, path: Path | None = None,
               name: str = "") -> dict[str, Any]:
    provider = FACTORIES[api](fake)
    if web is not None:
        provider.fetch_transport = web.transport
    bot = agent().use(SessionLog, path=path).run(provider) if path else agent().run(provider)
    env: dict[str, Any] = await bot.astart(Message(Role.USER, "Look.", attachments=[Attachment.url(url, name=name)]))
    return env


@pytest.mark.parametrize("case", cases("refused"))
def test_a_url_that_is_not_one_to_send_is_refused_by_every_entry_point(case: Case, tmp_path: Path) -> None:
    url = url_of(case)
    with pytest.raises(AttachmentError, match="cannot attach"):
        Attachment.url(url, media_type="text/plain")
    with FakeProvider(["never"]) as fake, loaded_shell(tmp_path) as shell:
        with pytest.raises(UsageError, match="--attach"):
            shell.run_cell_magic("brute", f"-m openai:gpt-fake --base-url {fake.openai_base_url} "
                                          f"-o api_key={fake.api_key} --attach '{url}'", "look")
        assert fake.received == 0


@pytest.fixture
def local() -> Iterator[FakeProvider]:
    """A live server on this machine: the place a loopback URL would reach."""
    with FakeProvider(["never"]) as server:
        yield server


@pytest.mark.anyio
@pytest.mark.parametrize("api", FETCHING)
@pytest.mark.parametrize("case", cases("guard"))
async def test_a_url_the_guard_refuses_is_never_fetched_and_the_model_never_asked(
        case: Case, api: str, fake_provider: FakeProvider, local: FakeProvider) -> None:
    url = url_of(case, urlsplit(local.base_url).port or 9)
    web = None if case.data["via"] == "live" else Web()
    with pytest.raises(AttachmentError, match="cannot attach") as info:
        await turn(fake_provider, api, url, web)
    assert "Refused" in str(info.value) or "metadata" in str(info.value), case.expect
    assert fake_provider.received == 0 and local.received == 0  # neither the model nor the local server was asked
    if web is not None:
        assert [str(r.url) for r in web.asked] == ([url] if case.data["via"] == "redirect" else []), case.expect


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("case", cases("key"))
async def test_a_key_inside_a_url_goes_nowhere(case: Case, api: str, fake_provider: FakeProvider,
                                               tmp_path: Path) -> None:
    fake_provider.add("seen")
    web, url = Web(), url_of(case)
    path = tmp_path / "s.jsonl"
    await turn(fake_provider, api, url, web, path)
    sent = json.dumps([r["json"] for r in fake_provider.requests])
    assert KEY not in sent, case.expect  # the API got the URL, or the page fetched, never the key
    assert "REDACTED" in sent or web.asked, case.expect
    # A text file is fetched by brute_nb from the URL as sent, the key redacted out of it: its host never sees it.
    assert all(KEY not in str(r.url) and KEY not in json.dumps(dict(r.headers)) for r in web.asked), case.expect
    assert KEY not in path.read_text()


@pytest.mark.anyio
async def test_the_fetch_itself_refuses_a_url_holding_a_key() -> None:
    """Below the agent (whose history is already redacted), the fetch refuses a URL with a key in it outright."""
    from brute_nb.attachments import UrlAttachment
    from brute_nb.providers.url_attachments import fetch

    web = Web()
    with pytest.raises(AttachmentError, match="holds an API key") as info:
        await fetch(UrlAttachment.of(f"https://example.org/{KEY}/notes.txt"), transport=web.transport)
    assert KEY not in str(info.value) and web.asked == []


@pytest.mark.anyio
@pytest.mark.parametrize("case", cases("guard"))
async def test_an_api_that_reads_the_url_gets_it_and_nothing_here_connects(
        case: Case, fake_provider: FakeProvider, local: FakeProvider) -> None:
    """The Responses API reads a text file by URL on its own servers: brute_nb connects to no address, and the
    guard's addresses (this machine's, a private network's) are the API's to refuse, as for an image by URL."""
    fake_provider.add("seen")
    url = url_of(case, urlsplit(local.base_url).port or 9)
    web = None if case.data["via"] == "live" else Web()
    await turn(fake_provider, "openai_responses", url, web)
    assert fake_provider.requests[-1]["json"]["input"][-1]["content"][-1] == {"type": "input_file", "file_url": url}
    assert local.received == 0 and (web is None or web.asked == []), case.expect


@pytest.mark.anyio
@pytest.mark.parametrize("api", FETCHING)
async def test_a_fetched_url_never_carries_a_key_header(api: str, fake_provider: FakeProvider) -> None:
    fake_provider.add("read it")
    web = Web()
    await turn(fake_provider, api, "https://example.org/notes/notes.txt", web)
    (request,) = web.asked
    assert not {"authorization", "x-api-key", "api-key"} & {k.lower() for k in request.headers}
    assert KEY not in json.dumps(dict(request.headers)) and KEY not in str(request.url)


@pytest.mark.anyio
@pytest.mark.parametrize("case", cases("shown"))
async def test_a_url_name_with_markup_is_inert_in_every_view(case: Case, fake_provider: FakeProvider) -> None:
    fake_provider.add("a cat")
    env = await turn(fake_provider, "anthropic", url_of(case), Web(), name=case.data["name"])
    messages = [m for m in env["messages"] if m.role != Role.SYSTEM]
    html = "".join(rendered(b) for b in published_bundles(messages)) + log_html(messages)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # the name is shown, as text
    assert live_parts(html) == [], case.expect
