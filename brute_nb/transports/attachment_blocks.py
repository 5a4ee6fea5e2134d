"""Attachments in each API's wire form, and a clear refusal for a type an API cannot take.

Anthropic takes images (``image`` blocks) and PDFs and plain text (``document`` blocks), in user turns and inside
tool results. OpenAI Chat takes images (``image_url`` with a data URL) and PDFs (``file`` parts) in user messages;
the Responses API takes ``input_image`` and ``input_file`` parts (PDFs and text files alike), in user messages and
in a function call's output. Text files go to Chat Completions as a text part headed by their name (its ``file``
part takes PDFs only). Anything else
raises ``AttachmentError`` saying which file, which type and which provider. Pure functions: bytes in, dicts out.

A ``UrlAttachment`` goes as a URL source where the API takes one (``URL_KINDS``: Anthropic images and PDFs,
Chat images, Responses images and PDFs); the provider fetches the others before they reach a transport.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from brute_nb.attachments import Attachment, AttachmentError, UrlAttachment
from brute_nb.message import JSON

URL_KINDS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"image", "pdf"}),
    "openai": frozenset({"image"}),
    "openai-responses": frozenset({"image", "pdf"}),
}
"""The kinds of file each API reads from a URL itself (its URL image/document sources)."""


def by_url(item: Attachment, api: str) -> str | None:
    """The URL to send for ``item`` on ``api``; None for a file with bytes. A URL the API cannot read is refused:
    the provider fetches those (``providers.url_attachments``) before the transport sees them."""
    if not isinstance(item, UrlAttachment):
        return None
    if item.kind not in URL_KINDS.get(api, frozenset()):
        raise AttachmentError(f"{api} cannot read {item.label} ({item.media_type}) from its URL {item.link}; send "
                              "it through a provider (which fetches it) or attach the downloaded file")
    return item.link

TAKES = {
    "anthropic": "images (PNG, JPEG, GIF, WebP), PDF and text files",
    "openai": "images (PNG, JPEG, GIF, WebP), PDF and text files",
}


def _b64(item: Attachment) -> str:
    return base64.b64encode(item.read_bytes()).decode("ascii")


def _data_url(item: Attachment) -> str:
    return f"data:{item.media_type};base64,{_b64(item)}"


def refuse(item: Attachment, provider: str, where: str = "") -> AttachmentError:
    return AttachmentError(f"{provider} cannot take the attachment {item.label} ({item.media_type}){where}; it "
                           f"takes {TAKES.get(provider, 'images')}. Convert it (e.g. to PDF or text) or leave it out")


def anthropic_blocks(items: Iterable[Attachment]) -> list[JSON]:
    blocks: list[JSON] = []
    for item in items:
        url = by_url(item, "anthropic")
        if url is not None:
            block: dict[str, JSON] = {"type": "image", "source": {"type": "url", "url": url}}
            if item.kind == "pdf":
                block = {"type": "document", "title": item.label, "source": {"type": "url", "url": url}}
            blocks.append(block)
        elif item.kind == "image":
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": item.media_type,
                                                       "data": _b64(item)}})
        elif item.kind == "pdf":
            blocks.append({"type": "document", "title": item.label,
                           "source": {"type": "base64", "media_type": item.media_type, "data": _b64(item)}})
        elif item.kind == "text":
            blocks.append({"type": "document", "title": item.label,
                           "source": {"type": "text", "media_type": "text/plain", "data": item.text()}})
        else:
            raise refuse(item, "anthropic")
    return blocks


def _text_part(item: Attachment, kind: str) -> dict[str, JSON]:
    return {"type": kind, "text": f"[{item.label}]\n{item.text()}"}


def chat_parts(items: Iterable[Attachment]) -> list[JSON]:
    parts: list[JSON] = []
    for item in items:
        url = by_url(item, "openai")
        if url is not None:
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif item.kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": _data_url(item)}})
        elif item.kind == "pdf":
            parts.append({"type": "file", "file": {"filename": item.label, "file_data": _data_url(item)}})
        elif item.kind == "text":
            parts.append(_text_part(item, "text"))
        else:
            raise refuse(item, "openai")
    return parts


def responses_parts(items: Iterable[Attachment]) -> list[JSON]:
    parts: list[JSON] = []
    for item in items:
        url = by_url(item, "openai-responses")
        if url is not None and item.kind == "pdf":
            parts.append({"type": "input_file", "file_url": url})
        elif url is not None:
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
        elif item.kind == "image":
            parts.append({"type": "input_image", "image_url": _data_url(item), "detail": "auto"})
        elif item.kind in ("pdf", "text"):  # the API's file input reads text files too: no label of ours
            parts.append({"type": "input_file", "filename": item.label, "file_data": _data_url(item)})
        else:
            raise refuse(item, "openai")
    return parts


def attachments_of(message: Any) -> tuple[Attachment, ...]:
    return tuple(getattr(message, "attachments", None) or ())
