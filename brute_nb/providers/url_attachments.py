"""URL attachments an API cannot read from their URL, fetched for one request through the fetch tool's guard.

The APIs read images (and Anthropic and Responses PDFs, and Responses text files) from a URL themselves, so brute_nb
sends those as URL sources and never touches them. A text file by URL for Chat or Anthropic, or a PDF for Chat
Completions, has no URL source: the bytes are fetched here, with the ``fetch`` tool's guard (public addresses only,
every connection checked, redirects included) and a size cap, and sent in that request alone; the log and the session
file keep the URL. Invariant: brute_nb fetches nothing an API could have read itself, nothing the fetch tool would
refuse, and no URL that holds a known key (``brute_nb.redact``): a key goes to its provider's host only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from brute_nb.attachments import Attachment, AttachmentError, UrlAttachment, from_bytes
from brute_nb.prefix_memo import keep, resume
from brute_nb.redact import redact
from brute_nb.transports.attachment_blocks import URL_KINDS

MAX_BYTES = 32 * 1024 * 1024
"""The largest file fetched for a request (Anthropic's whole request may be 32 MB)."""
TIMEOUT = 60.0


def unreadable(messages: Sequence[Any], api: str) -> list[UrlAttachment]:
    """The URL attachments in ``messages`` that ``api`` cannot read from their URL, each once.

    Every model call asks, so on a ``Log`` only the leading system messages and the messages added since the last
    call are looked at (the URL attachments of the earlier ones are kept: ``prefix_memo.resume``).
    """
    kinds = URL_KINDS.get(api, frozenset())
    lead, at, kept = resume(messages, "url_attachments")
    links: tuple[UrlAttachment, ...] = kept if kept is not None else ()
    new = [item for i in range(at, len(messages)) for item in getattr(messages[i], "attachments", None) or ()
           if isinstance(item, UrlAttachment)]
    if new:
        links = (*links, *new)
    keep(messages, "url_attachments", lead, links)
    head = [item for i in range(lead) for item in getattr(messages[i], "attachments", None) or ()
            if isinstance(item, UrlAttachment)]
    found: dict[str, UrlAttachment] = {}
    for item in (*head, *links) if head else links:
        if item.kind not in kinds:
            found.setdefault(item.link, item)
    return list(found.values())


async def fetched(messages: Sequence[Any], api: str, *, transport: Any = None) -> list[Any] | None:
    """``messages`` with every attachment ``api`` cannot read by URL replaced by its fetched bytes; None when
    there is none (the common case: nothing is copied)."""
    wanted = unreadable(messages, api)
    if not wanted:
        return None
    got = {item.link: await fetch(item, transport=transport) for item in wanted}
    out = []
    for m in messages:
        items = getattr(m, "attachments", None) or ()
        if any(isinstance(a, UrlAttachment) and a.link in got for a in items):
            m = m.replace(attachments=tuple(got.get(a.link, a) if isinstance(a, UrlAttachment) else a
                                            for a in items))
        out.append(m)
    return out


async def fetch(item: UrlAttachment, *, transport: Any = None) -> Attachment:
    """The file at ``item``'s URL, through the fetch guard; an AttachmentError says why it could not be had."""
    import httpx2

    from brute_nb.tools.builtin.fetch import USER_AGENT, guarded_transport, read_capped
    from brute_nb.tools.builtin.fetch_guard import BlockedDestinationError, Guard

    if redact(item.link) != item.link:  # the host is not the key's provider: it never gets the key
        raise AttachmentError(f"cannot attach {redact(item.link)}: the URL holds an API key, and brute_nb sends a key "
                              "to its provider's host only; attach a URL without it")
    guard = Guard()
    parts = urlsplit(item.link)
    try:
        guard.check_url(parts.scheme.lower(), parts.hostname or "", parts.port)
        client = httpx2.AsyncClient(timeout=httpx2.Timeout(TIMEOUT), follow_redirects=True, max_redirects=5,
                                    transport=guarded_transport(guard, transport), headers={"User-Agent": USER_AGENT})
        async with client, client.stream("GET", item.link) as response:
            if response.status_code != 200:
                raise AttachmentError(f"cannot attach {item.link}: the server answered HTTP {response.status_code}")
            data, cut = await read_capped(response, MAX_BYTES)
    except AttachmentError:
        raise
    except (BlockedDestinationError, ValueError, httpx2.HTTPError) as exc:
        raise AttachmentError(f"cannot attach {item.link}: {exc}") from None
    if cut:
        raise AttachmentError(f"cannot attach {item.link}: it is larger than {MAX_BYTES // 2**20} MB")
    return from_bytes(data, item.media_type, item.label)
