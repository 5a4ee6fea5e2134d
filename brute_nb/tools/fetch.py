"""``fetch``: an HTTP(S) GET whose result the model can read: ``HTTP <status> <content-type>`` then the body.

httpx2's async client, 30 s connect and read timeouts, up to 5 redirects followed, every status returned (a 404
is information, not a tool failure). HTML becomes Markdown (markdownify, scripts and styles dropped); the body is
capped at 50,000 characters. ``Fetch(transport=httpx2.MockTransport(...))`` lets tests answer without a network.
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import urlsplit

from brute_nb.tools.base import Tool

MAX_CHARS = 50_000
TIMEOUT = 30.0
MAX_REDIRECTS = 5
USER_AGENT = "brute_nb/0.1 (+fetch tool)"


def html_to_markdown(html: str) -> str:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for node in soup(["script", "style", "noscript", "template", "head"]):
        node.decompose()  # their text is code or metadata, not page content
    text: str = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # markdownify leaves runs of blank lines where block tags were
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


class Fetch(Tool):
    name = "fetch"
    description = (
        "Fetch a URL with an HTTP GET and return 'HTTP <status> <content-type>' followed by the body (HTML is "
        f"converted to Markdown; at most {MAX_CHARS:,} characters). Only http and https URLs."
    )
    params: ClassVar[dict[str, Any]] = {
        "url": {"type": "string", "desc": "The http:// or https:// URL to fetch", "required": True},
    }
    risk = "network"

    def __init__(self, *, transport: Any = None) -> None:
        self.transport = transport

    async def execute(self, url: str) -> str:
        import httpx2

        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise ValueError(f"Invalid URL scheme: {scheme or '(none)'}; only http and https URLs can be fetched")
        timeout = httpx2.Timeout(TIMEOUT, connect=TIMEOUT, read=TIMEOUT)
        async with httpx2.AsyncClient(timeout=timeout, follow_redirects=True, max_redirects=MAX_REDIRECTS,
                                      transport=self.transport, headers={"User-Agent": USER_AGENT}) as client:
            response = await client.get(url)
        content_type = response.headers.get("content-type", "")
        body = response.text
        if "html" in content_type.lower():
            body = html_to_markdown(body)
        if len(body) > MAX_CHARS:
            body = body[:MAX_CHARS] + "\n...(truncated)"
        head = f"HTTP {response.status_code} {content_type or '(no content type)'}"
        if str(response.url) != url:
            head += f"\nURL: {response.url}"
        return f"{head}\n\n{body}"
