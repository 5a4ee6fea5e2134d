"""Hostile cases: lines (see the package docstring).

A session file or a map cache may come with a cloned repository, so any line in it may be hostile or damaged.
``case.data`` is a ``Line``: the raw bytes of one line (no newline), and, for an attachment that lies about its
bytes, what to plant under its hash name. Tags say what must hold:

- ``refused``: loading the file fails with an error naming ``file:line`` and the problem (never another
  exception, never a path outside read);
- ``loads``: the line is a message (maybe a strange one); the file loads, and what is sent from it is still a
  history the APIs accept (``sendable``);
- ``unsendable``: loads, but one of its attachments cannot be read back, and reading it is a clear
  ``AttachmentError``, never the bytes of another file;
- ``map``: a map cache line (``MapCache``), refused with ``file:line``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from tests.security.hostile.case import Case

PLANTED = b"\x89PNG\r\n\x1a\n" + b"planted, not the user's image"
CLAIMED = hashlib.sha256(b"\x89PNG\r\n\x1a\n" + b"the user's image").hexdigest()


@dataclass(frozen=True)
class Line:
    raw: bytes
    plant: dict[str, bytes] | None = None
    """Files to put in the session's attachments folder first (name -> bytes)."""


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _user(**extra: Any) -> bytes:
    return _json({"role": "user", "content": "look at this", **extra})


def _attached(media_type: Any, sha256: Any, **extra: Any) -> bytes:
    return _user(attachments=[{"media_type": media_type, "sha256": sha256, **extra}])


def _refused(id: str, raw: bytes, expect: str) -> Case:
    return Case(id, Line(raw), f"refused with file:line: {expect}", frozenset({"refused"}))


def _loads(id: str, raw: bytes, expect: str) -> Case:
    return Case(id, Line(raw), f"loads, and what is sent is valid: {expect}", frozenset({"loads"}))


def _map(id: str, record: Any, expect: str) -> Case:
    raw = record if isinstance(record, bytes) else _json(record)
    return Case(id, Line(raw), f"a map cache line refused with file:line: {expect}", frozenset({"map"}))


CALL = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "read", "arguments": {}}]}
RESULT = {"role": "tool", "content": "ok", "tool_call_id": "c1"}

LINES: tuple[Case, ...] = (
    _refused("attachment-sha-traversal", _attached("text/plain", "../../../outside/secret"),
             "a sha256 that is a path is never joined onto the attachments folder"),
    _refused("attachment-sha-absolute", _attached("image/png", "/etc/passwd"), "an absolute path as a hash"),
    _refused("attachment-sha-nul", _attached("image/png", "ab\x00" + "0" * 61), "a NUL in a hash"),
    _refused("attachment-sha-upper", _attached("image/png", CLAIMED.upper()), "a hash in the wrong case"),
    _refused("attachment-sha-short", _attached("image/png", CLAIMED[:40]), "a hash of the wrong length"),
    _refused("attachment-sha-number", _attached("image/png", 12345), "a hash that is not text"),
    _refused("attachment-media-type-path", _attached("image/png/../../../x", CLAIMED), "a media type with a path"),
    _refused("attachment-extra-path", _attached("image/png", CLAIMED, path="/etc/passwd"),
             "an attachment naming its own path"),
    _refused("attachment-name-object", _attached("image/png", CLAIMED, name={"x": 1}), "a name that is not text"),
    _refused("url-attachment-file-scheme", _user(attachments=[{"url": "file:///etc/passwd", "media_type": "text/plain",
                                                                 "sha256": CLAIMED, "name": "passwd"}]),
             "a URL attachment naming a local file (a path is attached as a path, confined)"),
    _refused("url-attachment-crlf", _user(attachments=[{"url": "https://example.org/a.png\r\nX-Injected: 1",
                                                         "media_type": "image/png", "sha256": CLAIMED, "name": "a"}]),
             "a URL attachment with CR LF in it"),
    _refused("url-attachment-no-host", _user(attachments=[{"url": "https:///etc/passwd", "media_type": "text/plain",
                                                            "sha256": CLAIMED, "name": "passwd"}]),
             "a URL attachment that names no host"),
    _refused("url-attachment-extra-field", _user(attachments=[{"url": "https://example.org/a.png",
                                                                "media_type": "image/png", "sha256": CLAIMED,
                                                                "path": "/etc/passwd"}]),
             "a URL attachment naming a path too"),
    Case("attachment-planted", Line(_attached("image/png", CLAIMED), {f"{CLAIMED}.png": PLANTED}),
         "bytes planted under a real hash name are never sent: reading them back is a clear error",
         frozenset({"unsendable"})),
    Case("attachment-missing", Line(_attached("image/png", CLAIMED)),
         "an attachment whose bytes are not there is a clear error when read", frozenset({"unsendable"})),
    _refused("not-json", b'{"role": "user", "content": ', "a line that is not JSON (mid-file)"),
    _refused("not-utf8", b'{"role": "user", "content": "\xff\xfe"}', "a line that is not UTF-8"),
    _refused("bom", "\ufeff".encode() + _user(), "a byte-order mark before the JSON"),
    _refused("json-array", b'["user", "hi"]', "JSON that is not an object"),
    _refused("json-string", b'"hello"', "a bare string"),
    _refused("deep-nesting", b'{"role": "user", "content": "x", "meta": {"a": ' + b"[" * 100_000 + b"]" * 100_000
             + b"}}", "JSON nested deeper than the parser's recursion limit"),
    _refused("huge-integer", b'{"role": "user", "content": "x", "meta": {"n": ' + b"9" * 5000 + b"}}",
             "an integer longer than Python converts"),
    _refused("unknown-role", _json({"role": "admin", "content": "x"}), "a role no API has"),
    _refused("unknown-field", _user(sudo=True), "a field a message does not have"),
    _refused("content-number", _json({"role": "user", "content": 42}), "content that is not text"),
    _refused("meta-list", _user(meta=[1, 2]), "meta that is not an object"),
    _refused("tool-calls-object", _json({"role": "assistant", "content": "", "tool_calls": {"id": "c"}}),
             "tool_calls that is not a list"),
    _refused("tool-call-no-name", _json({"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]}),
             "a tool call without a name"),
    _loads("orphan-result", _json({"role": "tool", "content": "ok", "tool_call_id": "nobody-called"}),
           "a result with no call before it is left out of what is sent"),
    _loads("unanswered-call", _json(CALL), "a call with no result gets an error result in what is sent"),
    _loads("arguments-not-object", _json({**CALL, "tool_calls": [{"id": "c1", "name": "read",
                                                                  "arguments": "[1, 2]"}]}),
           "arguments that are not an object are kept as text, never a crash"),
    _loads("nul-in-content", _user(content="before\x00after"), "a NUL inside text is just text"),
    _loads("escapes-in-content", _user(content="\x1b[31mred\x1b[0m <script>x</script>"),
           "terminal escapes and HTML are just text in a session"),
    _loads("blank-content", _json({"role": "user", "content": ""}), "an empty user turn"),
    _map("map-not-object", b"[1, 2, 3]", "a line that is not a record"),
    _map("map-no-key", {"reply": "x"}, "a record without its key"),
    _map("map-tokens-text", {"key": "k", "reply": "x", "input_tokens": "many"}, "token counts that are text"),
    _map("map-cost-text", {"key": "k", "reply": "x", "cost": "free"}, "a cost that is text"),
    _map("map-reply-number", {"key": "k", "reply": 7}, "a reply that is not text"),
    _map("map-fields-list", {"key": "k", "reply": "x", "fields": [1]}, "fields that are not an object"),
    _map("map-session-path", {"key": "k", "reply": "x", "session": "../../../outside/secret"},
         "a session that is a path, not the row's own file name"),
    _map("map-deep-nesting", b'{"key": "k", "reply": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
         "JSON nested deeper than the parser's recursion limit"),
)
