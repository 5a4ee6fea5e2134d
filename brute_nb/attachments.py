"""Attachment: a file sent with a message (an image, a plot, a PDF, a text file), as a value.

An attachment is its media type, the sha256 of its bytes, a name, and where the bytes live: in memory (``data``,
until a session stores them) or in a file (``path``). Two attachments with the same bytes are equal whatever
their name's spelling on disk, and the session line names an attachment by hash only, so sessions stay small and
greppable. The invariant ``store`` keeps: the bytes of an attachment are written once, atomically, into
``<folder>/<sha256>.<ext>`` before any session line names them; an existing file that holds them is never rewritten.

Paths go through ``confine``, since a session line may come from anyone (a cloned repository): a ``sha256`` is 64
hex digits or the line is refused (so it is never a path), the folder is never written or read through a link out
of the session's root, and bytes read back must hash to their name (a file planted under a hash is not sent). A
file the user attaches is refused before it is read when it is not a regular file (a FIFO never blocks the cell)
or larger than any API takes (``MAX_BYTES``; images ``MAX_IMAGE_BYTES``), and the error says whose limit it is.

``attachment(value)`` takes what a notebook user has at hand: a path, bytes, a PIL image or a matplotlib figure
(rendered to PNG). Pillow and matplotlib are only touched when such a value is given (never imported here).
"""

from __future__ import annotations

import base64
import hashlib
import io
import mimetypes
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from brute_nb import confine
from brute_nb.errors import BruteError
from brute_nb.providers import profiles

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF = "application/pdf"
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", PDF: ".pdf",
              "text/plain": ".txt", "text/csv": ".csv", "text/markdown": ".md", "application/json": ".json"}
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
              (b"%PDF-", PDF))
MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]*/[A-Za-z0-9][A-Za-z0-9.+_-]*")
_SIZED = [p for p in profiles.builtin() if p.request_bytes]
_IMAGES = [p for p in profiles.builtin() if p.image_bytes]
MAX_BYTES = max(p.request_bytes or 0 for p in _SIZED)
"""The most any supported API takes in one request, from the profiles: Anthropic's 32 MB request limit (PDFs,
text)."""
MAX_IMAGE_BYTES = max(p.image_bytes or 0 for p in _IMAGES)
"""The most an API takes for one image, from the profiles: OpenAI's 20 MB (Anthropic's is 5 MB; its 400 then says
so)."""
_OWNER = next(p.title for p in _SIZED if p.request_bytes == MAX_BYTES)
_IMAGE_OWNER = next(p.title for p in _IMAGES if p.image_bytes == MAX_IMAGE_BYTES)
_SMALLER = "".join(f"; {title}'s is {size >> 20} MB" for title, size in
                   dict.fromkeys((p.title, p.image_bytes or 0) for p in _IMAGES
                                 if (p.image_bytes or 0) < MAX_IMAGE_BYTES))
LIMIT_WHY = f"the model APIs take at most {MAX_BYTES >> 20} MB in one request ({_OWNER}'s limit; PDFs and text files)"
IMAGE_WHY = f"the model APIs take images of at most {MAX_IMAGE_BYTES >> 20} MB ({_IMAGE_OWNER}'s limit{_SMALLER})"


class AttachmentError(BruteError, ValueError):
    """An attachment that cannot be made, found or sent (the message says which, and what to do)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    media_type: str
    sha256: str
    name: str = ""
    path: str | None = field(default=None, compare=False)
    """Where the bytes are on disk (the user's file, or the session's attachments folder); not saved."""
    data: bytes | None = field(default=None, compare=False, repr=False)
    """The bytes while they live only in memory (a figure, a pasted image)."""
    root: str | None = field(default=None, compare=False, repr=False)
    """The folder ``path`` must stay inside when the bytes are read back (the session's root); not saved."""

    def __post_init__(self) -> None:
        # Checked on every construction (a session line, a frame, a caller): the hash becomes a file name.
        if not isinstance(self.sha256, str) or not confine.DIGEST.fullmatch(self.sha256):
            raise AttachmentError(f"an attachment's sha256 must be 64 lowercase hex digits, got {self.sha256!r:.80}")
        if not isinstance(self.media_type, str) or not MEDIA_TYPE.fullmatch(self.media_type):
            raise AttachmentError(f"an attachment's media_type must look like 'image/png', got "
                                  f"{self.media_type!r:.80}")

    @property
    def kind(self) -> str:
        """image, pdf, text or file: what the transports decide on."""
        if self.media_type in IMAGE_TYPES:
            return "image"
        if self.media_type == PDF:
            return "pdf"
        if self.media_type.startswith("text/") or self.media_type == "application/json":
            return "text"
        return "file"

    @property
    def filename(self) -> str:
        """The file name the bytes are stored under: ``<sha256>.<ext>``."""
        return self.sha256 + EXTENSIONS.get(self.media_type, mimetypes.guess_extension(self.media_type) or ".bin")

    @property
    def label(self) -> str:
        return self.name or self.filename

    def read_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.path is None:
            raise AttachmentError(f"attachment {self.label} ({self.media_type}) has no bytes: it was loaded from a "
                                  "session without its attachments folder")
        try:
            return confine.read_hashed(self.path, self.sha256, root=self.root or os.path.dirname(self.path),
                                       limit=MAX_BYTES, why=LIMIT_WHY)
        except (OSError, ValueError) as exc:
            raise AttachmentError(f"attachment {self.label}: cannot read {self.path}: "
                                  f"{exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}") from None

    def text(self) -> str:
        return self.read_bytes().decode("utf-8", errors="replace")

    def to_dict(self) -> dict[str, Any]:
        out = {"media_type": self.media_type, "sha256": self.sha256}
        if self.name:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attachment:
        if "url" in data:
            return UrlAttachment.from_dict(data)
        unknown = set(data) - {"media_type", "sha256", "name"}
        if unknown or not isinstance(data.get("media_type"), str) or not isinstance(data.get("sha256"), str) \
                or not isinstance(data.get("name", ""), str):
            raise ValueError(f"an attachment is {{media_type, sha256, name}} (strings), got {dict(data)!r:.200}")
        return cls(data["media_type"], data["sha256"], data.get("name") or "")

    @staticmethod
    def url(url: str, media_type: str | None = None, name: str = "") -> UrlAttachment:
        """A file the API reads from its URL (``Attachment.url("https://.../a.pdf")``); see ``UrlAttachment``."""
        return UrlAttachment.of(url, media_type, name)

    @classmethod
    def coerce(cls, value: Any) -> Attachment:
        return value if isinstance(value, Attachment) else cls.from_dict(value) if isinstance(value, Mapping) \
            else attachment(value)


def from_bytes(data: bytes, media_type: str | None = None, name: str = "") -> Attachment:
    kind = media_type or sniff(data) or (mimetypes.guess_type(name)[0] if name else None)
    if kind is None:
        raise AttachmentError(f"cannot tell what {name or 'these bytes'} are (not PNG, JPEG, GIF, WebP or PDF); "
                              "pass a file path with an extension, or Attachment bytes with media_type=")
    image = kind in IMAGE_TYPES
    limit = MAX_IMAGE_BYTES if image else MAX_BYTES
    if len(data) > limit:
        raise AttachmentError(f"cannot attach {name or 'these bytes'}: {confine.size_text(len(data))} is more than "
                              f"{confine.size_text(limit)}; {IMAGE_WHY if image else LIMIT_WHY}. Make it smaller "
                              "(a lower resolution, fewer pages) or leave it out")
    return Attachment(kind, confine.digest_of(data), name, data=bytes(data))


def sniff(data: bytes) -> str | None:
    for magic, kind in SIGNATURES:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def attachment(value: Any, name: str | None = None) -> Attachment:
    """An Attachment from a path, bytes, a PIL image or a matplotlib figure (PNG)."""
    if isinstance(value, Attachment):
        return value
    if isinstance(value, str) and value.lower().startswith(("http://", "https://")):
        return UrlAttachment.of(value, name=name or "")
    if isinstance(value, str | os.PathLike):
        path = Path(value).expanduser()
        try:
            data = confine.read_file(path, limit=MAX_BYTES, why=LIMIT_WHY)
        except OSError as exc:
            raise AttachmentError(f"cannot attach {str(value)!r}: {exc.strerror or exc}") from None
        found = from_bytes(data, sniff(data) or mimetypes.guess_type(path.name)[0], name or path.name)
        return replace(found, path=str(path.resolve()))
    if isinstance(value, bytes | bytearray | memoryview):
        return from_bytes(bytes(value), name=name or "")
    if hasattr(value, "savefig"):  # a matplotlib Figure
        buffer = io.BytesIO()
        # no "Software" text chunk: it names the matplotlib release, so the same figure would be other bytes on
        # another release (a replayed cassette would no longer match it) and the model learns nothing from it.
        value.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
        return from_bytes(buffer.getvalue(), "image/png", name or "figure.png")
    if hasattr(value, "save") and hasattr(value, "mode") and hasattr(value, "size"):  # a PIL Image
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return from_bytes(buffer.getvalue(), "image/png", name or "image.png")
    for method, kind in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg")):  # IPython.display.Image
        rendered = getattr(value, method, None)
        image = _as_bytes(rendered() if callable(rendered) else None)
        if image:
            return from_bytes(image, kind, name or f"image{EXTENSIONS[kind]}")
    raise AttachmentError(f"cannot attach a {type(value).__name__}: give a file path, bytes, a PIL image or a "
                          "matplotlib figure")


def _as_bytes(rendered: Any) -> bytes | None:
    """What a ``_repr_png_`` gives: bytes, base64 text (IPython's Image), or (data, metadata)."""
    if isinstance(rendered, tuple) and rendered:
        rendered = rendered[0]
    if isinstance(rendered, bytes):
        return rendered
    if isinstance(rendered, str):
        try:
            return base64.b64decode(rendered, validate=True)
        except ValueError:
            return None
    return None


def attachments(values: Iterable[Any] | None) -> tuple[Attachment, ...]:
    return tuple(Attachment.coerce(v) for v in values or ())


def is_attachable(value: Any) -> bool:
    """A value a prompt's ``{expr}`` turns into an attachment rather than text (a figure or an image)."""
    if isinstance(value, type):
        return False
    return (hasattr(value, "savefig") or (hasattr(value, "save") and hasattr(value, "mode") and hasattr(value, "size"))
            or callable(getattr(value, "_repr_png_", None)) or callable(getattr(value, "_repr_jpeg_", None)))


def folder_of(session: Path) -> Path:
    """Where a session's attachments live: ``<stem>.brute/attachments`` beside its JSONL files."""
    return session.parent / "attachments"


def store(item: Attachment, folder: Path, root: str | os.PathLike[str] | None = None) -> Attachment:
    """The attachment with its bytes in ``folder`` (written once, atomically): a file already there that holds
    them is kept, one that does not (planted, or cut short) is replaced. ``root`` (default: ``folder``'s parent,
    the session's folder) is what the folder may not leave through a link."""
    base = os.fspath(root if root is not None else folder.parent)
    target = folder / item.filename
    stored = replace(item, path=str(target), data=None, root=confine.real(base))
    try:
        stored.read_bytes()
        return stored
    except AttachmentError:
        pass
    data = item.read_bytes()
    try:
        confine.write_atomic(target, data, root=base)
    except OSError as exc:
        raise AttachmentError(f"cannot store the attachment {item.label} in {folder}: {exc}") from None
    return stored


def store_all(messages: Iterable[Any], folder: Path, root: str | os.PathLike[str] | None = None) -> None:
    """Write the bytes of every attachment the messages carry (before their lines are written); a URL attachment
    has none here (its line holds the URL)."""
    for m in messages:
        for item in getattr(m, "attachments", None) or ():
            if not isinstance(item, UrlAttachment):
                store(item, folder, root)


def located(message: Any, folder: Path, root: str | os.PathLike[str] | None = None) -> Any:
    """A message read from a session, its attachments pointing at the bytes in ``folder``, to be read back only
    from inside ``root`` (default: ``folder``'s parent, the session's folder)."""
    items = getattr(message, "attachments", None)
    if not items:
        return message
    base = confine.real(root if root is not None else folder.parent)
    return message.replace(attachments=tuple(replace(a, path=str(folder / a.filename), root=base) for a in items))


@dataclass(frozen=True, slots=True)
class UrlAttachment(Attachment):
    """A file sent by its URL: the API fetches it (an image or PDF on the web), brute_nb does not.

    Its ``sha256`` is the URL's (it names the attachment, not bytes no one has read), and its session line holds
    the URL. A provider whose API cannot take a URL for this kind of file fetches it through the fetch tool's guard
    (public addresses only) for that request alone (``providers.url_attachments``); nothing is stored.
    """

    link: str = ""

    @classmethod
    def of(cls, url: str, media_type: str | None = None, name: str = "") -> UrlAttachment:
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise AttachmentError(f"cannot attach {url!r} by URL: only http:// and https:// URLs can be sent")
        try:
            host = urlsplit(url).hostname
        except ValueError:  # a malformed [IPv6] host
            host = None
        if not host or any(c <= " " or c == "\x7f" for c in url):  # whitespace or a control character (CR LF)
            raise AttachmentError(f"cannot attach {url!r} by URL: it names no host, or holds spaces or control "
                                  "characters; quote them (%20) or attach another URL")
        path = url.split("?", 1)[0].split("#", 1)[0]
        kind = media_type or mimetypes.guess_type(path)[0]
        if kind is None:
            raise AttachmentError(f"cannot tell what {url} is from its name; pass media_type= (e.g. "
                                  "Attachment.url(url, media_type='application/pdf'))")
        label = name or path.rstrip("/").rsplit("/", 1)[-1]
        return cls(kind, hashlib.sha256(url.encode()).hexdigest(), label, link=url)

    def read_bytes(self) -> bytes:
        raise AttachmentError(f"attachment {self.label} is the URL {self.link}; brute_nb does not fetch it (the API "
                              "reads it, or the provider fetches it through the fetch guard)")

    def to_dict(self) -> dict[str, Any]:
        return {**Attachment.to_dict(self), "url": self.link}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UrlAttachment:
        unknown = set(data) - {"media_type", "sha256", "name", "url"}
        if unknown or not isinstance(data.get("url"), str) or not isinstance(data.get("media_type"), str):
            raise ValueError(f"a URL attachment is {{url, media_type, sha256, name}}, got {dict(data)!r}")
        return cls.of(data["url"], data["media_type"], str(data.get("name") or ""))

