"""``fetch``: an HTTP(S) GET whose result the model can read: ``HTTP <status> <content-type>`` then the body.

httpx2's async client, 30 s connect and read timeouts and 120 s in all, up to 5 redirects followed, every status
returned (a 404 is information, not a tool failure). Destinations are checked by ``fetch_guard`` on every hop and
every new connection: public addresses only unless ``Fetch(allow=[...])`` names a local server. Environment proxies
are not used, since the check needs the address actually connected to. The body is streamed and reading stops at
``MAX_BODY_BYTES`` of decoded bytes (a multi-gigabyte answer never reaches memory, and httpx2 inflates a
compressed body in bounded pieces, so a gzip bomb stops there too); HTML becomes Markdown (markdownify, scripts and
styles dropped); the text is capped at 50,000 characters. ``Fetch(transport=httpx2.MockTransport(...))`` lets
tests answer without a network (the URL checks still apply).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from brute_nb.tools.base import Tool
from brute_nb.tools.builtin.fetch_guard import Guard

if TYPE_CHECKING:
    import httpx2

MAX_CHARS = 50_000
MAX_BODY_BYTES = 5 * 1024 * 1024
TIMEOUT = 30.0
TOTAL_TIMEOUT = 120.0
MAX_REDIRECTS = 5
USER_AGENT = "brute_nb/0.1 (+fetch tool)"


def html_to_markdown(html: str) -> str:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for node in soup(["script", "style", "noscript", "template", "head"]):
        node.decompose()  # their text is code or metadata, not page content
    # escape_misc=False as markdownify 1.x has it by default: 0.13 (the declared minimum) put a backslash before
    # every &, #, + and the like, so the same page read differently with the release installed.
    text: str = MarkdownConverter(heading_style="ATX", escape_misc=False).convert_soup(soup)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # markdownify leaves runs of blank lines where block tags were
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def guarded_transport(guard: Guard, inner: Any = None) -> httpx2.AsyncBaseTransport:
    """A transport that checks each request's URL and each new connection's peer address with ``guard``."""
    import httpx2

    class GuardedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            # trust_env=False: no proxy from the environment, whose peer would hide the real destination.
            self.inner = inner if inner is not None else httpx2.AsyncHTTPTransport(trust_env=False)

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            url = request.url
            guard.check_url(url.scheme, url.host, url.port)
            earlier = request.extensions.get("trace")

            async def trace(event: str, info: dict[str, Any]) -> None:
                if earlier is not None:
                    await earlier(event, info)
                await guard.on_trace(event, info, url.host, url.port or (443 if url.scheme == "https" else 80))

            request.extensions = {**request.extensions, "trace": trace}
            response: httpx2.Response = await self.inner.handle_async_request(request)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return GuardedTransport()


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

    def __init__(self, *, transport: Any = None, allow: Iterable[str] = ()) -> None:
        """``allow``: addresses or networks (optionally ``:port``) that may be fetched although not public."""
        self.transport = transport
        self.guard = Guard(allow)

    async def execute(self, url: str) -> str:
        import anyio
        import httpx2

        parts = urlsplit(url)
        self.guard.check_url(parts.scheme.lower(), parts.hostname or "", parts.port)
        timeout = httpx2.Timeout(TIMEOUT, connect=TIMEOUT, read=TIMEOUT)
        headers = {"User-Agent": USER_AGENT}
        with anyio.fail_after(TOTAL_TIMEOUT):
            client = httpx2.AsyncClient(timeout=timeout, follow_redirects=True, max_redirects=MAX_REDIRECTS,
                                        transport=guarded_transport(self.guard, self.transport), headers=headers)
            async with client, client.stream("GET", url) as response:
                raw, cut = await read_capped(response, MAX_BODY_BYTES)
        content_type = response.headers.get("content-type", "")
        body = raw.decode(response.encoding or "utf-8", errors="replace")
        if "html" in content_type.lower():
            body = html_to_markdown(body)
        if len(body) > MAX_CHARS or cut:
            body = body[:MAX_CHARS] + "\n...(truncated)"
        head = f"HTTP {response.status_code} {content_type or '(no content type)'}"
        if str(response.url) != url:
            head += f"\nURL: {response.url}"
        return f"{head}\n\n{body}"


async def read_capped(response: httpx2.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body, and whether more was left unread (the connection is then dropped)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False
