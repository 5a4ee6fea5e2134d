"""Hostile cases: URLs (see the package docstring).

A URL attachment (``Attachment.url(...)``, ``--attach https://...``, a session line) names a place on the network the
way a path names one on disk. ``case.data["url"]`` is the URL (``{port}`` stands for a live local server's port,
``{key}`` for the user's API key). Tags say what must hold:

- ``refused``: not a URL brute_nb sends at all; ``Attachment.url`` and ``--attach`` say why, and a session line
  holding it is refused with ``file:line``;
- ``guard``: a file the API cannot read by URL (text), so brute_nb would fetch it: the fetch tool's guard
  (``tools.builtin.fetch_guard``) refuses the destination, on the first hop or a redirect, before a byte is sent,
  and the model is never asked (``data["via"]``: ``literal`` refused from the URL alone, ``live`` only once the
  connection shows where it goes, ``redirect`` on the second hop);
- ``key``: the URL holds the user's key: it never reaches the URL's host, the API or the session file;
- ``shown``: the attachment's name holds markup (``data["name"]``): every view of the turn is inert.
"""

from __future__ import annotations

from tests.security.hostile.case import Case

REFUSED = frozenset({"refused"})
GUARD = frozenset({"guard"})
KEY = frozenset({"key"})
SHOWN = frozenset({"shown"})


def _refused(id: str, url: str, expect: str) -> Case:
    return Case(id, {"url": url}, f"refused before anything is sent: {expect}", REFUSED)


def _guard(id: str, url: str, via: str, expect: str) -> Case:
    return Case(id, {"url": url, "via": via}, f"the fetch guard refuses it, nothing is fetched: {expect}", GUARD)


URLS: tuple[Case, ...] = (
    _refused("file-scheme", "file:///etc/passwd", "a local file is a path, attached as one (confined), never a URL"),
    _refused("ftp-scheme", "ftp://example.org/notes.txt", "only http and https"),
    _refused("javascript-scheme", "javascript:alert(1)//x.png", "a script is not a URL to send"),
    _refused("data-scheme", "data:text/plain;base64,aGk=", "bytes are attached as bytes"),
    _refused("no-host", "https:///etc/passwd", "a URL that names no host"),
    _refused("crlf-in-url", "https://example.org/a.png\r\nX-Injected: 1", "CR LF (a header injection) in a URL"),
    _refused("space-in-url", "https://example.org/my notes.txt", "an unquoted space"),
    _refused("bad-ipv6-host", "http://[::1/notes.txt", "a malformed [IPv6] host"),
    _guard("loopback-literal", "http://127.0.0.1:{port}/notes.txt", "literal", "loopback by address"),
    _guard("metadata-literal", "http://169.254.169.254/latest/meta-data/notes.txt", "literal",
           "the cloud metadata address"),
    _guard("metadata-name", "http://metadata.google.internal/computeMetadata/notes.txt", "literal",
           "a cloud metadata name"),
    _guard("ipv6-loopback", "http://[::1]:{port}/notes.txt", "literal", "IPv6 loopback"),
    _guard("decimal-loopback", "http://2130706433:{port}/notes.txt", "literal", "loopback written as one number"),
    _guard("private-literal", "http://10.0.0.7/notes.txt", "literal", "a private network address"),
    _guard("localhost-name", "http://localhost:{port}/notes.txt", "live",
           "a name that resolves to loopback: refused at the connection, before the request is written"),
    _guard("redirect-to-loopback", "https://example.org/moved/notes.txt", "redirect",
           "a public URL that redirects to 127.0.0.1: the second hop is checked too"),
    Case("key-in-an-image-query", {"url": "https://example.org/cat.png?token={key}"},
         "an image URL the API reads itself: sent with the key redacted, and the session file holds no key", KEY),
    Case("key-in-a-text-path", {"url": "https://example.org/{key}/notes.txt"},
         "a text URL brute_nb fetches: only with the key redacted out of it (the fetch refuses a URL that still holds "
         "one), so that host never sees the key", KEY),
    Case("key-as-userinfo", {"url": "https://user:{key}@example.org/paper.pdf"},
         "a key as the URL's password is redacted before any API sees it", KEY),
    Case("markup-in-the-name", {"url": "https://example.org/cat.png", "name": "<img src=x onerror=alert(1)>"},
         "an attachment named with markup (``name=``): shown as text in the cell and the transcript", SHOWN),
)
