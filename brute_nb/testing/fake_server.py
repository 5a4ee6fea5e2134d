"""FakeProvider: a loopback server speaking OpenAI Chat Completions, OpenAI Responses and Anthropic Messages.

It lets the real ``openai`` and ``anthropic`` SDK clients run for real, offline. Like the real APIs it refuses a
request that breaks their rules (see ``rules``) with HTTP 400 and a readable error, so a test that passes here
sends requests a real provider would accept. Replies come from a script, one item per request, in order; faults
(429 with retry-after, 500, a stalled stream, malformed JSON, a truncated stream, a 200 stream ending in the API's
error event) are script items too, and
``slow(reply, delay)`` streams a reply one event every ``delay`` seconds.

    with FakeProvider(["hello", reply("", call("read", {"file_path": "a"}))]) as fake:
        OpenAIChat("gpt-x", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
        AnthropicMessages("claude-x", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)

The server is a ``ThreadingHTTPServer`` (``server.LoopbackServer``: a client's hang-up is no error) on 127.0.0.1:0
with Nagle disabled (streamed deltas go out at once). Like the real APIs it speaks HTTP/1.1 with keep-alive: JSON
bodies carry a content-length, streams use chunked transfer encoding, and the connection stays open for the
client's next request, so a client that pools connections across event loops fails here as it would against the
real service. ``FakeProvider(keep_alive=False)`` is the old HTTP/1.0 server that closes the connection after every
reply. Every HTTP request read is counted (``fake.received``), whatever its answer, and so is every connection
accepted (``fake.connections``): one turn that sent its request twice shows up as a count, never as a silently
passing test.
``fake.handler`` serves the same answers to an ``httpx2.MockTransport`` without a socket.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

from brute_nb.message import ToolCall
from brute_nb.testing import body_fields, fake_count_tokens, rules, rules_tools, wire, wire_responses
from brute_nb.testing.cache_model import Bill, PromptCache
from brute_nb.testing.fake_batches import Batches
from brute_nb.testing.outcome import Outcome, error_body
from brute_nb.testing.outcome import json_outcome as _json
from brute_nb.testing.script import Fault, Reply, as_reply
from brute_nb.testing.server import LoopbackServer

API_KEY = "sk-fake-0123456789abcdef"
"""The key tests give the SDKs; recorded cassettes are checked never to contain it."""

APIS = {"/chat/completions": "openai_chat", "/responses": "openai_responses", "/messages": "anthropic"}
ID_PREFIX = {"openai_chat": "call_", "openai_responses": "call_", "anthropic": "toolu_"}


class FakeProvider:
    """A scripted fake of the three APIs; a context manager that runs the loopback server."""

    def __init__(self, script: Iterable[Any] = (), *, api_key: str | None = API_KEY, enforce_rules: bool = True,
                 rate_limit: float | None = None, responder: Callable[[dict[str, Any]], Any] | None = None,
                 keep_alive: bool = True, first_token: float = 0.0):
        self.script: list[Reply | Fault] = [as_reply(item) for item in script]
        self.rate_limit = RateLimit(rate_limit) if rate_limit else None
        """Requests per minute; past it a request gets the provider's real 429 (see ``RateLimit``)."""
        self.responder = responder
        """``fn(request_json) -> reply`` answers when the script is empty: a reply that depends on the request,
        for concurrent clients whose request order is not fixed."""
        self.requests: list[dict[str, Any]] = []
        self.prompt_cache = PromptCache()
        """What the fake has cached (see ``cache_model``): replies report cache reads and writes from it."""
        """The API requests answered (parsed JSON bodies), in order."""
        self.received = 0
        """Every HTTP request read, including refused and unknown ones."""
        self.counted: list[dict[str, Any]] = []
        """Bodies sent to Anthropic's token-count endpoint (``fake_count_tokens``): free, so never in ``requests``."""
        self.batches = Batches(self)
        """The batch APIs (Anthropic Message Batches, OpenAI Files + Batches), see ``fake_batches``."""
        self.connections = 0
        """TCP connections accepted; with keep-alive, a client that reuses its connection opens one."""
        self.api_key = api_key
        self.enforce_rules = enforce_rules
        self.sent_kinds: frozenset[str] = frozenset()
        """The kinds of the blocks, items and parts of the recorded-shape replies sent so far: an API takes back
        every kind it sends, a kind added after the fake's own lists too."""
        self.keep_alive = keep_alive
        self.first_token = first_token
        """Seconds a model's answer waits before it starts, as a real model's time to first token (0.3-2 s);
        0 answers at once, kinder than any real API to code that does work before or after its request."""
        self._lock = threading.Lock()
        self._sockets: set[Any] = set()
        self._closing = threading.Event()
        self._server: LoopbackServer | None = None
        self._thread: threading.Thread | None = None

    def add(self, *items: Any) -> FakeProvider:
        with self._lock:
            self.script.extend(as_reply(item) for item in items)
        return self

    @property
    def base_url(self) -> str:
        """The server's root: Anthropic's ``base_url`` (the SDK adds ``/v1/messages``)."""
        if self._server is None:
            raise RuntimeError("the fake provider is not running; use it as a context manager (with FakeProvider())")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """OpenAI's ``base_url`` (ends in ``/v1``; the SDK adds ``/chat/completions`` or ``/responses``)."""
        return self.base_url + "/v1"

    def __enter__(self) -> FakeProvider:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> FakeProvider:
        self._closing.clear()
        self._server = LoopbackServer(("127.0.0.1", 0), _handler_class(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-provider",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # releases stalled streams
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self._server = None
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:  # kept-alive connections would otherwise go on being served by a closed fake
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Outcome:
        """Answer one request (the server and ``handler`` both come here)."""
        with self._lock:
            self.received += 1
        if self.batches.handles(path):
            return self.batches.respond(method, path, headers, raw)
        if fake_count_tokens.handles(path):
            return fake_count_tokens.respond(method, raw, lambda body: self._counted(headers, body), headers)
        api = next((name for suffix, name in APIS.items() if path.split("?")[0].endswith(suffix)), None)
        if method != "POST" or api is None:
            return _json(404, error_body(api or "openai_chat", 404, f"Unknown request URL: {method} {path}"))
        try:
            body = json.loads(raw or b"null")
        except ValueError as exc:
            return _json(400, error_body(api, 400, f"We could not parse the JSON body of your request: {exc}"))
        with self._lock:
            self.requests.append({"method": method, "path": path, "api": api, "headers": headers, "json": body})
            n = len(self.requests)
            problem = self._refusal(api, headers, body)
            if problem is None and self.rate_limit is not None:
                problem = self.rate_limit.check(api, body)
                self.requests[-1]["limited"] = problem is not None
            item = self.script.pop(0) if problem is None and self.script else None
            if isinstance(item, Reply) and not item.cached_tokens:  # a scripted count wins over the cache model
                item = _billed(api, self.prompt_cache.bill(api, body), item)
        if problem is not None:
            return problem
        if item is None and self.responder is not None:
            item = as_reply(self.responder(body))
            if isinstance(item, Reply) and not item.cached_tokens:  # billed like a scripted reply, by one rule
                with self._lock:
                    item = _billed(api, self.prompt_cache.bill(api, body), item)
        if item is None:
            return _json(500, error_body(api, 500, f"the fake provider's script has no reply for request {n}; "
                                                   "add one with FakeProvider.add(...)"))
        if isinstance(item, Fault):
            return _fault(api, body, item, n)
        if item.calls and rules_tools.tools_off(api, body):  # asked for no tool, a real model calls none
            item = dataclasses.replace(item, calls=())
        with self._lock:
            self.sent_kinds |= _kinds(item.blocks)
        return dataclasses.replace(_answer(api, body, _with_ids(api, item, n), n), wait=self.first_token)

    def _unauthorized(self, api: str, headers: dict[str, str]) -> Outcome | None:
        sent = headers.get("authorization", "").removeprefix("Bearer ") or headers.get("x-api-key", "")
        if not sent or (self.api_key is not None and sent != self.api_key):
            return _json(401, error_body(api, 401, "Incorrect API key provided."))
        return None

    def _counted(self, headers: dict[str, str], body: dict[str, Any]) -> Outcome | None:
        """The token-count endpoint's key check, and its beta check (a beta feature needs its header there too);
        the body is logged in ``counted`` whatever the answer."""
        with self._lock:
            self.counted.append(body)
        problems = rules_tools.anthropic_beta(body, headers.get("anthropic-beta", "")) if self.enforce_rules else []
        if problems:
            return self._unauthorized("anthropic", headers) or _json(400, error_body("anthropic", 400,
                                                                                     "; ".join(problems)))
        return self._unauthorized("anthropic", headers)

    def _refusal(self, api: str, headers: dict[str, str], body: Any) -> Outcome | None:
        unauthorized = self._unauthorized(api, headers)
        if unauthorized is not None:
            return unauthorized
        if not isinstance(body, dict):
            return _json(400, error_body(api, 400, "the request body must be a JSON object"))
        if not self.enforce_rules:
            return None
        beta = headers.get("anthropic-beta", "")
        # a beta feature without its header is anthropic_beta's to name (it says which header it needs)
        unknown = [k for k in body_fields.unknown_fields(api, body, beta=bool(beta.strip()))
                   if api != "anthropic" or k not in rules_tools.BETA_ONLY]
        if unknown and api != "anthropic":  # OpenAI names the first unknown argument and looks no further
            return _json(400, error_body(api, 400, body_fields.unknown_message(api, unknown[0])))
        problems = [body_fields.unknown_message(api, k) for k in unknown]
        problems += rules.request_problems(api, body, also=self.sent_kinds)
        if api == "anthropic":
            problems += rules_tools.anthropic_beta(body, beta)
        if problems:
            return _json(400, error_body(api, 400, "; ".join(problems)))
        return None

    def handler(self, request: Any) -> Any:
        """``httpx2.MockTransport(fake.handler)``: the same answers without a socket (a stall raises ReadTimeout)."""
        import httpx2

        outcome = self.respond(request.method, request.url.raw_path.decode(), dict(request.headers), request.read())
        return httpx2.Response(outcome.status, headers=outcome.headers, stream=_mock_stream(outcome, request))


class RateLimit:
    """A token bucket of ``per_minute`` requests (refilled continuously, holding one second's worth), as the real
    APIs enforce theirs. A request past it is answered as they answer it: 429, the API's own error body, and
    ``retry-after`` (whole seconds, rounded up, as Anthropic sends it) plus ``retry-after-ms`` (as OpenAI sends it)
    saying when the next request will be let in. A refused request takes no token.
    """

    def __init__(self, per_minute: float) -> None:
        if per_minute <= 0:
            raise ValueError(f"rate_limit is requests per minute and must be positive, got {per_minute!r}")
        self.per_second = per_minute / 60
        self.capacity = max(1.0, self.per_second)
        self.tokens = self.capacity
        self.at = time.monotonic()

    def check(self, api: str, body: dict[str, Any]) -> Outcome | None:
        """Take a token, or the 429 to send (the caller holds the provider's lock)."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.per_second)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return None
        wait = (1 - self.tokens) / self.per_second
        limit = round(self.per_second * 60)
        if api == "anthropic":
            message = (f"This request would exceed the rate limit for your organization of {limit} requests per "
                       "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.")
            headers = {"anthropic-ratelimit-requests-limit": str(limit), "anthropic-ratelimit-requests-remaining": "0"}
        else:
            message = (f"Rate limit reached for {body.get('model')} on requests per min (RPM): Limit {limit}, "
                       f"Used {limit}, Requested 1. Please try again in {wait * 1000:.0f}ms.")
            headers = {"x-ratelimit-limit-requests": str(limit), "x-ratelimit-remaining-requests": "0"}
        headers |= {"retry-after": str(math.ceil(wait)), "retry-after-ms": str(math.ceil(wait * 1000))}
        return _json(429, error_body(api, 429, message), headers)


def _billed(api: str, bill: Bill, reply: Reply) -> Reply:
    # Anthropic's input_tokens leave out cache reads and writes; OpenAI's include the cached part.
    billed = bill.total - bill.read - bill.written if api == "anthropic" else bill.total
    return dataclasses.replace(reply, prompt_tokens=max(billed, 1), cached_tokens=bill.read,
                               cache_write_tokens=bill.written)


def _with_ids(api: str, reply: Reply, n: int) -> Reply:
    if reply.keep_ids:
        return reply
    calls = tuple(c if c.id else ToolCall(f"{ID_PREFIX[api]}{n}_{i}", c.name, c.arguments)
                  for i, c in enumerate(reply.calls))
    return dataclasses.replace(reply, calls=calls)


def _events(api: str, body: dict[str, Any], reply: Reply, n: int) -> list[str]:
    if api == "anthropic":
        return wire.anthropic_sse(body, reply, n)
    if api == "openai_responses":
        return wire_responses.responses_sse(body, reply, n)
    return wire.openai_chat_sse(body, reply, n)


def _kinds(blocks: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The ``type`` of each block or item, and of each part of an item's content."""
    kinds = set()
    for block in blocks:
        kinds.add(str(block.get("type")))
        content = block.get("content")
        if isinstance(content, list):
            kinds.update(str(p.get("type")) for p in content if isinstance(p, Mapping))
    return frozenset(kinds)


def _answer(api: str, body: dict[str, Any], reply: Reply, n: int) -> Outcome:
    headers = {"x-request-id": f"req_{n}", "request-id": f"req_{n}"}
    if body.get("stream"):
        chunks = [e.encode() for e in _events(api, body, reply, n)]
        return Outcome(200, {"content-type": "text/event-stream", **headers}, chunks, delay=reply.delay)
    if api == "anthropic":
        return _json(200, wire.anthropic_json(body, reply, n), headers)
    if api == "openai_responses":
        return _json(200, wire_responses.final_json(body, reply, n), headers)
    return _json(200, wire.openai_chat_json(body, reply, n), headers)


def _fault(api: str, body: dict[str, Any], fault: Fault, n: int) -> Outcome:
    if fault.kind == "redirect":
        return Outcome(fault.status, {"location": fault.message, "content-type": "text/plain"}, [b""])
    if fault.kind in ("rate_limit", "server_error") or (fault.kind in MID_STREAM and not body.get("stream")):
        headers = dict(fault.headers)
        if fault.retry_after is not None:
            headers["retry-after"] = f"{fault.retry_after:g}"
            headers["retry-after-ms"] = str(int(fault.retry_after * 1000))
        return _json(fault.status, error_body(api, fault.status, fault.message, fault.param), headers)
    answer = _answer(api, body, Reply(text="This reply never arrives whole.", calls=(
        ToolCall(f"{ID_PREFIX[api]}{n}_0", "never_finished", {"x": 1}),)), n)
    if fault.kind == "malformed_json":
        if body.get("stream"):
            answer.chunks = [*answer.chunks[:1], b'data: {"choices": [{"index": 0, "delta": {"content": "x"\n\n']
            if api != "openai_chat":
                answer.chunks[-1] = b"event: content_block_delta\n" + answer.chunks[-1]
        else:
            answer.chunks = [answer.chunks[0][: len(answer.chunks[0]) // 2]]
    elif fault.kind == "stall":
        answer.stall_after = min(fault.after, len(answer.chunks) - 1) if body.get("stream") else 0
    elif fault.kind in MID_STREAM:  # the stream stays open and well formed: the error is its last event
        answer.chunks = [*answer.chunks[: fault.after], _error_event(api, body, fault, n).encode()]
    elif fault.kind == "truncated":
        answer.cut = True
        if body.get("stream"):
            answer.chunks = answer.chunks[: fault.after]
        else:
            answer.length = len(answer.chunks[0])
            answer.chunks = [answer.chunks[0][:20]]
    if "content-length" in answer.headers:
        del answer.headers["content-length"]
    return answer


MID_STREAM = ("stream_error", "response_failed")
"""Faults sent as a 200 stream's last event (a request that does not stream gets their HTTP status instead)."""


def _error_event(api: str, body: dict[str, Any], fault: Fault, n: int) -> str:
    """The event a stream ends in when the API fails part-way through a reply, in the shape it documents (the SDKs'
    types: Anthropic's ``ErrorResponse`` in an ``error`` event, Responses' ``ResponseErrorEvent`` and
    ``ResponseFailedEvent``); Chat Completions has no event names, its error is a data line holding the error
    body, which the SDK raises on."""
    envelope = error_body(api, fault.status, fault.message, fault.param)
    if api == "anthropic":
        return wire.event_line("error", envelope)
    if api == "openai_chat":
        return wire.data_line(envelope)
    error = envelope["error"]
    if fault.kind == "response_failed":
        code = {429: "rate_limit_exceeded"}.get(fault.status, "server_error" if fault.status >= 500 else
                                                "invalid_prompt")
        failed = {**wire_responses.response_json(body, Reply(), n, "failed"), "usage": None,
                  "error": {"code": code, "message": fault.message}}
        return wire.event_line("response.failed", {"type": "response.failed", "sequence_number": fault.after,
                                                   "response": failed})
    return wire.event_line("error", {"type": "error", "code": error["code"] or error["type"],
                                     "message": fault.message, "param": fault.param,
                                     "sequence_number": fault.after})


def _mock_stream(outcome: Outcome, request: Any) -> Any:
    """A response body for MockTransport that can stall (raising ReadTimeout, as the client's timeout would)."""
    import httpx2

    class Stream(_MockStream, httpx2.SyncByteStream, httpx2.AsyncByteStream):
        pass

    return Stream(outcome, request)


class _MockStream:

    def __init__(self, outcome: Outcome, request: Any) -> None:
        self.outcome = outcome
        self.request = request

    def _chunks(self) -> Iterator[bytes]:
        import httpx2

        for i, chunk in enumerate(self.outcome.chunks):
            if self.outcome.stall_after is not None and i >= self.outcome.stall_after:
                raise httpx2.ReadTimeout("the fake provider stalled", request=self.request)
            yield chunk

    def _pause(self, i: int) -> float:
        """Seconds before chunk ``i``: the model's time to first token (the headers are out already, which only
        a stream shows), then the stream's delay."""
        return self.outcome.wait if i == 0 else self.outcome.delay

    def __iter__(self) -> Iterator[bytes]:
        for i, chunk in enumerate(self._chunks()):
            if self._pause(i):
                time.sleep(self._pause(i))
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        import anyio

        for i, chunk in enumerate(self._chunks()):
            if self._pause(i):
                await anyio.sleep(self._pause(i))
            yield chunk

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def _handler_class(fake: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1 keeps the connection for the next request (the real APIs do); HTTP/1.0 closes it after each
        # reply, so there a streamed body ends when the connection closes.
        protocol_version = "HTTP/1.1" if fake.keep_alive else "HTTP/1.0"
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            with fake._lock:
                fake.connections += 1
                fake._sockets.add(self.connection)

        def finish(self) -> None:
            with fake._lock:
                fake._sockets.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            outcome = fake.respond(self.command, self.path, headers, raw)
            if outcome.wait and fake._closing.wait(outcome.wait):
                self.close_connection = True
                return  # the server is closing: no answer
            chunked = fake.keep_alive and outcome.headers.get("content-type") == "text/event-stream"
            self.send_response(outcome.status)
            for key, value in outcome.headers.items():
                self.send_header(key, value)
            if chunked:
                self.send_header("transfer-encoding", "chunked")
            elif fake.keep_alive:  # a stalled or cut body promises bytes that never come, as a dying server does
                self.send_header("content-length", str(outcome.length or sum(len(c) for c in outcome.chunks)))
            elif outcome.headers.get("content-type") == "application/json" and outcome.stall_after is None:
                self.send_header("content-length", str(sum(len(c) for c in outcome.chunks)))
            self.end_headers()
            # The client may hang up mid-stream (an interrupted turn): not the server's error.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(outcome, chunked)

        def _send(self, outcome: Outcome, chunked: bool) -> None:
            for i, chunk in enumerate(outcome.chunks):
                if outcome.stall_after is not None and i >= outcome.stall_after:
                    fake._closing.wait()
                    self.close_connection = True
                    return
                if i and outcome.delay and fake._closing.wait(outcome.delay):
                    self.close_connection = True
                    return  # the server is closing: stop a slow stream at once
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                self.wfile.flush()
            if outcome.cut:
                self.close_connection = True  # a dropped connection: no terminating chunk
            elif chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the per-request stderr log (tests read ``fake.requests`` instead)."""

    return Handler

