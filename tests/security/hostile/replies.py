"""Hostile cases: replies (see the package docstring).

What a model API, a proxy in front of it, or an OpenAI-compatible local server may answer. ``ids`` cases are
replies whose tool-call ids are empty or repeated (``data["ids"]``: the ids of the calls of the first reply, then
of the second): every later request must still be one the API accepts, each result with its own call. ``refused``
cases are a 400 or 413 about the request (``data``: ``status``, ``message`` as the API words it, ``attach``: send
an attachment with the prompt, ``marked``: whether the turn's input is the cause): the input is marked and never
sent again, the error says what and why, and the next turn succeeds.

``blocks`` cases are replies in the API's own blocks (``data``: ``api``, ``blocks``, ``error`` when the reply must
be refused): what they show in every view is inert (markup, ``javascript:`` links), what the next request sends
back is the blocks as received, a key they quote is redacted from the log and from what is sent back, and a block
kind no API documents is a clear error that leaves the session able to go on.

``batch`` cases are a batch's results file as a hostile server may serve it (``data["tamper"]``: the honest lines
in, the raw bytes served out; ``data["rows"]``: what each of the two rows must end as). One bad line loses only its
own row, which gets an error a re-run submits again; a line for no row of ours, or a second answer, is ignored; a
key in an answer or an error is redacted before the frame, the cache or the session file holds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from brute_nb.testing.hostile import FLAG, HTML_PAYLOADS
from tests.security.hostile.case import Case

IDS = frozenset({"ids"})
REFUSED = frozenset({"refused"})
PNG_HEAD = b"\x89PNG\r\n\x1a\n"

REPLIES: tuple[Case, ...] = (
    Case("two-empty-ids", {"ids": [["", ""]]},
         "two calls with empty ids are renamed apart and each keeps its own result (item 2)", IDS),
    Case("two-calls-one-id", {"ids": [["dup", "dup"]]},
         "two calls sharing one id are renamed apart and each keeps its own result (item 2)", IDS),
    Case("an-id-used-again-next-reply", {"ids": [["call_0"], ["call_0"]]},
         "a local server that numbers calls from 0 every reply: the later call is renamed", IDS),
    Case("empty-and-repeated-mixed", {"ids": [["", "x"], ["x", ""]]},
         "empty and repeated ids over two replies", IDS),
    Case("an-image-the-api-cannot-read",
         {"status": 400, "attach": PNG_HEAD + b"not really an image",
          "message": "messages.0.content.0.image.source.base64.data: Could not process image", "marked": True},
         "the prompt with its attachment is marked refused and never sent again (item 3)", REFUSED),
    Case("a-prompt-too-long",
         {"status": 400, "attach": None, "marked": True,
          "message": "prompt is too long: 212345 tokens > 200000 maximum"},
         "an oversized prompt is marked refused and never sent again", REFUSED),
    Case("a-request-too-large",
         {"status": 413, "attach": None, "marked": True,
          "message": "Request exceeds the maximum allowed number of bytes."},
         "a 413 marks the turn's input", REFUSED),
    Case("a-bad-parameter",
         {"status": 400, "attach": None, "marked": False,
          "message": "Invalid value for 'temperature': expected a number at most 2."},
         "a 400 about a parameter marks nothing: the prompt is sent again next turn", REFUSED),
)


BLOCKS = frozenset({"blocks"})
MARKUP = HTML_PAYLOADS[0]
JS_LINK = f"javascript:window.{FLAG}='link'"
KEY_HERE = "KEY-GOES-HERE"
"""Where a test puts the user's key in a case's data."""

ANTHROPIC_SEARCH = (
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": MARKUP}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
        {"type": "web_search_result", "url": JS_LINK, "title": MARKUP, "encrypted_content": "EqgfCioIARgBIiQ3",
         "page_age": "April 30, 2025"}]},
    {"type": "text", "text": "It says " + MARKUP, "citations": [
        {"type": "web_search_result_location", "url": JS_LINK, "title": MARKUP, "cited_text": MARKUP,
         "encrypted_index": "Eo8BCioIAhgBIiQy"}]},
)
ANTHROPIC_CODE = (
    {"type": "server_tool_use", "id": "srvtoolu_02", "name": "code_execution", "input": {"code": "print('<b>')"}},
    {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_02", "content": {
        "type": "code_execution_result", "stdout": MARKUP, "stderr": f"<script>window.{FLAG}='err'</script>",
        "return_code": 0, "content": []}},
    {"type": "text", "text": "Ran it."},
)
RESPONSES_SEARCH = (
    {"type": "web_search_call", "id": "ws_01", "status": "completed",
     "action": {"type": "search", "query": MARKUP, "sources": [{"type": "url", "url": JS_LINK}]}},
    {"type": "message", "id": "msg_01", "role": "assistant", "status": "completed", "content": [
        {"type": "output_text", "text": "It says " + MARKUP, "annotations": [
            {"type": "url_citation", "url": JS_LINK, "title": MARKUP, "start_index": 0, "end_index": 7}]}]},
)


def _blocks(id: str, api: str, blocks: tuple[dict[str, Any], ...], expect: str, error: str | None = None) -> Case:
    return Case(id, {"api": api, "blocks": blocks, "error": error}, expect, BLOCKS)


REPLIES += (
    _blocks("anthropic-search-with-markup", "anthropic", ANTHROPIC_SEARCH,
            "a search whose query, result titles and citations are markup and javascript: links: inert in every "
            "view, and sent back block for block"),
    _blocks("anthropic-code-execution-with-markup", "anthropic", ANTHROPIC_CODE,
            "code execution whose output is markup: inert, and sent back block for block"),
    _blocks("responses-search-with-markup", "openai_responses", RESPONSES_SEARCH,
            "a web_search_call and a cited message with markup: inert, and sent back item for item"),
    _blocks("anthropic-search-quoting-the-key", "anthropic", (
        ANTHROPIC_SEARCH[0],
        {**ANTHROPIC_SEARCH[1], "content": [{**ANTHROPIC_SEARCH[1]["content"][0], "title": f"token {KEY_HERE}"}]},
        {"type": "text", "text": f"The token is {KEY_HERE}."}),
        "a search result and a text quoting the key: redacted in the log, the file and what is sent back, which "
        "still goes back as blocks"),
    _blocks("anthropic-unknown-block-kind", "anthropic",
            ({"type": "holographic_projection", "payload": MARKUP}, {"type": "text", "text": "hi"}),
            "a block kind no API documents yet: the paid turn is kept, the block whole (shown as its kind, inert) "
            "and sent back as received"),
    _blocks("responses-unknown-item-kind", "openai_responses",
            ({"type": "holographic_projection", "id": "hp_1", "payload": MARKUP},),
            "an output item kind no API documents yet: kept whole, shown as its kind, inert, sent back"),
    _blocks("anthropic-hostile-block-kind", "anthropic",
            ({"type": MARKUP, "payload": MARKUP}, {"type": "text", "text": "hi"}),
            "a block whose kind is markup: its one row shows the kind as text, never as HTML"),
)

BATCH = frozenset({"batch"})
Lines = list[dict[str, Any]]


def _jsonl(lines: Lines) -> bytes:
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def _body_of(line: dict[str, Any]) -> dict[str, Any]:
    """The reply inside a results line, Anthropic's or OpenAI's (mutable: the line is a copy)."""
    if "result" in line:
        body: dict[str, Any] = line["result"]["message"]
    else:
        body = line["response"]["body"]
    return body


def _copy(line: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(line))
    return copied


def _first(change: Callable[[dict[str, Any]], Any]) -> Callable[[str, Lines], bytes]:
    """A tamper that changes the first row's line (``change`` edits a copy, or returns raw bytes for it)."""
    def tamper(api: str, lines: Lines) -> bytes:
        first = _copy(lines[0])
        out = change(first)
        head = out if isinstance(out, bytes) else json.dumps(first).encode()
        return head + b"\n" + _jsonl(lines[1:])
    return tamper


def _set_body(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(line: dict[str, Any]) -> None:
        if "result" in line:
            line["result"]["message"] = value
        else:
            line["response"]["body"] = value
    return change


def _set_text(text: str) -> Callable[[dict[str, Any]], None]:
    def change(line: dict[str, Any]) -> None:
        raw = json.dumps(_body_of(line)).replace("echo: Say one", text.replace('"', '\\"'))
        _set_body(json.loads(raw))(line)
    return change


def _errored(message: str) -> Callable[[dict[str, Any]], None]:
    def change(line: dict[str, Any]) -> None:
        if "result" in line:
            line["result"] = {"type": "errored", "error": {"type": "error", "error": {
                "type": "invalid_request_error", "message": message}}}
        else:
            line["response"] = {"status_code": 400, "request_id": "req_x", "body": {"error": {
                "message": message, "type": "invalid_request_error", "param": None, "code": None}}}
    return change


def _forged_second(api: str, lines: Lines) -> bytes:
    forged = _copy(lines[0])
    _set_text("FORGED")(forged)
    return _jsonl([*lines, forged])


def _batch(id: str, tamper: Callable[[str, Lines], bytes], rows: tuple[str, str], expect: str) -> Case:
    return Case(id, {"tamper": tamper, "rows": rows}, expect, BATCH)


ANSWERED, LOST, UNREADABLE = "answered", "no answer", "unreadable"

REPLIES += (
    _batch("batch-line-not-json", _first(lambda line: b'{"custom_id": "'), (LOST, ANSWERED),
           "a torn line: its row gets an error to submit again, the next line is still read"),
    _batch("batch-line-not-an-object", _first(lambda line: b"[1, 2, 3]"), (LOST, ANSWERED), "a JSON array"),
    _batch("batch-line-not-utf8", _first(lambda line: b'{"custom_id": "\xff\xfe"}'), (LOST, ANSWERED),
           "bytes that are not UTF-8"),
    _batch("batch-line-deep-nesting", _first(lambda line: b'{"custom_id": "x", "result": ' + b"[" * 100_000
                                              + b"]" * 100_000 + b"}"), (LOST, ANSWERED),
           "JSON nested deeper than the parser's recursion limit"),
    _batch("batch-line-huge", _first(lambda line: line.update(pad="x" * 20_000)), (LOST, ANSWERED),
           "a line longer than the limit (the test lowers it) is dropped as it streams past"),
    _batch("batch-no-custom-id", _first(lambda line: line.pop("custom_id")), (LOST, ANSWERED), "no custom_id"),
    _batch("batch-custom-id-not-text", _first(lambda line: line.update(custom_id=7)), (LOST, ANSWERED),
           "a custom_id that is a number"),
    _batch("batch-custom-id-of-no-row", _first(lambda line: line.update(custom_id="not-one-of-yours")),
           (LOST, ANSWERED), "an answer for a row this run never sent: ignored"),
    _batch("batch-second-answer-forged", _forged_second, (ANSWERED, ANSWERED),
           "a second line for a row already answered: the first answer stands"),
    _batch("batch-reply-unreadable", _first(_set_body({"content": 5, "choices": 5, "output": 5})),
           (UNREADABLE, ANSWERED), "a reply the transport cannot read is that row's error, not a crash"),
    _batch("batch-reply-not-an-object", _first(_set_body(MARKUP)), (UNREADABLE, ANSWERED),
           "a reply that is a string"),
    _batch("batch-reply-with-markup-and-key", _first(_set_text(f"{MARKUP} {KEY_HERE}")), ("redacted", ANSWERED),
           "a reply quoting the key: redacted in the frame, the cache and the session; markup inert"),
    _batch("batch-error-with-markup-and-key", _first(_errored(f"{MARKUP} {KEY_HERE}")), ("error", ANSWERED),
           "a provider error quoting the key: redacted; markup inert"),
    _batch("batch-empty-file", lambda api, lines: b"", (LOST, LOST), "an empty results file: every row to submit"),
    _batch("batch-crlf-lines", lambda api, lines: _jsonl(lines).replace(b"\n", b"\r\n"), (ANSWERED, ANSWERED),
           "CR LF line ends are still lines"),
)
