"""Attachments in each API's wire form, and a clear refusal for a type an API cannot take.

What each API documents, kind by kind (the installed SDKs' param types name the fields):

- Anthropic (``ImageBlockParam``, ``DocumentBlockParam``): images are ``image`` blocks, PDFs ``document`` blocks with
  a base64 source and text files ``document`` blocks with a ``text/plain`` source, in user turns and inside a tool
  result's content (``ToolResultBlockParam``); images and PDFs may be URL sources.
- Chat Completions (``ChatCompletionContentPartParam``): images are ``image_url`` parts (a data URL or a URL) and
  PDFs ``file`` parts, in user messages only. Its ``file`` part takes PDFs alone and it has no file URL, so a text
  file goes as a text part, as its file-inputs guide says to ("read the file and send its contents as a text
  content part"), and a PDF by URL is fetched first. A ``tool`` message holds text only, so a tool's files follow
  the results in a user message (``OpenAI.dump_all``).
- Responses (``ResponseInputImageParam``, ``ResponseInputFileParam``): images are ``input_image`` parts, PDFs and
  text files ``input_file`` parts (as data, or by ``file_url``), in user messages and in a function call's output
  (``ResponseFunctionCallOutputItemParam``).

A file's name goes where the API has a field for one (a document's ``title``, a file's ``filename``) and is only ever
the name its user or tool gave it: a nameless file's ``label`` is its storage name (``<sha256>.<ext>``), which tells
the model nothing. No API has a name field for an image, so an image goes unnamed. Anything else raises
``AttachmentError`` saying which file, which type and which provider. Pure functions: bytes in, dicts out.

A ``UrlAttachment`` goes as a URL source where the API takes one (``URL_KINDS``); the provider fetches the others
before they reach a transport.
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
    "openai-responses": frozenset({"image", "pdf", "text"}),
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


def filename(item: Attachment) -> str:
    """The name an API that requires one (an ``input_file`` or a Chat ``file`` sent as data) gets: the file's own,
    or ``file.<ext>`` for a nameless one, whose extension still tells the API how to read it."""
    return item.name or "file" + item.filename[len(item.sha256):]


def _titled(block: dict[str, JSON], item: Attachment) -> dict[str, JSON]:
    """A document block with its ``title`` when the file has a name (the field is optional)."""
    return {"type": block["type"], "title": item.name, **block} if item.name else block


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
                block = _titled({"type": "document", "source": {"type": "url", "url": url}}, item)
            blocks.append(block)
        elif item.kind == "image":
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": item.media_type,
                                                       "data": _b64(item)}})
        elif item.kind == "pdf":
            blocks.append(_titled({"type": "document", "source": {"type": "base64", "media_type": item.media_type,
                                                                  "data": _b64(item)}}, item))
        elif item.kind == "text":
            # the plain-text source takes text/plain only: a CSV, Markdown or JSON file is read as the text it is
            blocks.append(_titled({"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                                                  "data": item.text()}}, item))
        else:
            raise refuse(item, "anthropic")
    return blocks


def _text_part(item: Attachment) -> dict[str, JSON]:
    """A text file as Chat's text part (it has no file part for text): headed by the file's name, if it has one."""
    return {"type": "text", "text": f"[{item.name}]\n{item.text()}" if item.name else item.text()}


def chat_parts(items: Iterable[Attachment]) -> list[JSON]:
    parts: list[JSON] = []
    for item in items:
        url = by_url(item, "openai")
        if url is not None:
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif item.kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": _data_url(item)}})
        elif item.kind == "pdf":
            parts.append({"type": "file", "file": {"filename": filename(item), "file_data": _data_url(item)}})
        elif item.kind == "text":
            parts.append(_text_part(item))
        else:
            raise refuse(item, "openai")
    return parts


def responses_parts(items: Iterable[Attachment]) -> list[JSON]:
    parts: list[JSON] = []
    for item in items:
        url = by_url(item, "openai-responses")
        if url is not None and item.kind != "image":
            parts.append({"type": "input_file", "file_url": url})
        elif url is not None:
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
        elif item.kind == "image":
            parts.append({"type": "input_image", "image_url": _data_url(item), "detail": "auto"})
        elif item.kind in ("pdf", "text"):
            parts.append({"type": "input_file", "filename": filename(item), "file_data": _data_url(item)})
        else:  # input_file reads some other types too (Office files), but an Attachment's "file" kind is any type
            raise refuse(item, "openai")
    return parts


def attachments_of(message: Any) -> tuple[Attachment, ...]:
    return tuple(getattr(message, "attachments", None) or ())
