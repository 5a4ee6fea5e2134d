"""Record and replay: cassettes of real HTTP exchanges, served back to the same real SDK client.

``Recorder`` is an httpx2 transport that wraps the real one and appends every exchange to a cassette (JSONL, one
exchange a line): method, path, request JSON, status, the headers that matter, and the response body (raw SSE
text for a stream). ``Replay`` is an httpx2 transport that serves a cassette: the SDK parses the recorded bytes
exactly as it parsed the live ones, streaming included, so a replayed turn runs the code a live turn runs.

Invariants: a cassette never holds a secret (request headers are not stored at all, only a few response headers
are, and every key ``brute_nb.redact`` knows of is redacted from the line); a replayed request must match the
recorded one in order (method, path, model, messages/input, system, tools) or ``CassetteMismatchError`` says so in
one line (with how to reach a real model instead) and carries the diff for ``%tb``.

Branches: where a turn depends on a person's answer (an approval asked with ``input()``), a cassette may hold one
continuation per answer. A branch's lines carry ``"branch": name`` and ``"from": n`` (the 0-based exchange where
it leaves the main line), in order, after the main line; a request that matches no main exchange at ``n`` but
matches a branch's first line continues on that branch. ``merge_branch`` adds a recording made with another answer.
A request that is not the next one recorded but is the first one starts the replay over: a notebook run again
(Run All twice in one kernel) starts its conversation over too.
"""

from __future__ import annotations

import base64
import difflib
import itertools
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx2

from brute_nb import confine
from brute_nb.errors import CassetteMismatchError, CassetteNotFoundError
from brute_nb.event_loop import loop_local
from brute_nb.message import JSON, dumps
from brute_nb.prompt_cache import without_marks
from brute_nb.redact import redact, redact_fragments, redact_value

KEPT_HEADERS = ("content-type", "content-encoding", "retry-after", "retry-after-ms", "x-request-id", "request-id")
CHECKED_FIELDS = ("model", "messages", "input", "system", "instructions", "tools")


CWD_MARK = "{cwd}"
"""Recorded requests hold the recording folder as ``{cwd}``, so a cassette made in one checkout replays in
another (file tools put absolute paths into tool results and the system prompt names the workspace)."""


def portable(value: JSON, cwd: str | None = None) -> JSON:
    """``value`` with the current folder's absolute path replaced by ``{cwd}``."""
    folder = cwd or os.getcwd()
    if len(folder) < 2:
        return value
    return json.loads(json.dumps(value, ensure_ascii=False).replace(json.dumps(folder)[1:-1], CWD_MARK))


def _request_json(request: Any) -> JSON:
    raw = request.content
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


class Recorder(httpx2.AsyncBaseTransport):
    """``httpx2.AsyncClient(transport=Recorder("s.cassette.jsonl"))``: record every exchange as it happens."""

    def __init__(self, path: str | Path, inner: Any = None, secrets: Iterable[str | None] = ()) -> None:
        self.path = Path(path)
        self._given_inner = inner
        self._inners: dict[Any, Any] = {}
        self.secrets = [s for s in secrets if s and len(s) >= 4]
        self._lock = threading.Lock()
        self._started = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        # Ask for an unencoded body so the cassette holds readable text (SSE, JSON).
        request.headers["accept-encoding"] = "identity"
        response = await self.inner.handle_async_request(request)
        entry = {"method": request.method, "path": request.url.raw_path.decode(),
                 "request": portable(_request_json(request)),
                 "status": response.status_code,
                 "headers": {k: v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS}}
        stream = _Tee(response.stream, lambda body: self._write(entry, body))
        return httpx2.Response(response.status_code, headers=response.headers, stream=stream,
                               extensions=response.extensions)

    def _write(self, entry: dict[str, Any], body: bytes) -> None:
        try:
            entry["body"] = redact_stream_body(body.decode(), self.secrets)
        except UnicodeDecodeError:
            entry["body_b64"] = base64.b64encode(body).decode()
        line = redact(dumps(entry), self.secrets)
        with self._lock:
            if not self._started:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._keep_previous()
            self._started = True
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")

    def _keep_previous(self) -> None:
        """A new recording starts a new cassette, but an earlier one (paid-for traffic) is never lost: it is moved
        aside as ``<name>.replaced-<UTC time>.jsonl`` beside it."""
        try:
            if self.path.stat().st_size == 0:
                return
        except FileNotFoundError:
            return
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.path.replace(self.path.with_name(f"{self.path.stem}.replaced-{stamp}{self.path.suffix}"))

    @property
    def inner(self) -> Any:
        """The transport that really sends: the given one, or one of the running loop (its pool is bound to it)."""
        if self._given_inner is not None:
            return self._given_inner
        return loop_local(self._inners, httpx2.AsyncHTTPTransport, close=_aclose)

    async def aclose(self) -> None:
        await self.inner.aclose()


STREAMED_TEXT_FIELDS = frozenset({"content", "text", "partial_json", "arguments", "thinking", "delta",
                                  "reasoning_content", "reasoning", "refusal"})
"""Fields whose strings are one text cut across SSE events (a delta each), in all three APIs' streams."""


def redact_stream_body(body: str, extra: Iterable[str | None] = ()) -> str:
    """An SSE body with any key redacted, also one the stream cut across events (``"sk-f"``, ``"ake-..."``).

    Redacting each event alone misses a key a model echoes token by token; the streamed text fields are read as
    one text, redacted as a whole, and written back into the events that carried them (the rest stays byte-exact).
    """
    events = body.split("\n\n")
    found: list[tuple[int, int, Any, Any, str]] = []  # event, line, container, key, text
    parsed: dict[tuple[int, int], Any] = {}
    for e, event in enumerate(events):
        for n, line in enumerate(event.split("\n")):
            if not line.startswith("data:"):
                continue
            try:
                data = json.loads(line[5:])
            except ValueError:
                continue
            parsed[(e, n)] = data
            for box, key, text in _text_fields(data):
                found.append((e, n, box, key, text))
    new = redact_fragments([f[4] for f in found], extra)
    changed = set()
    for (e, n, box, key, old), text in zip(found, new, strict=True):
        if text != old:
            box[key] = text
            changed.add((e, n))
    if changed:
        for e, n in changed:
            lines = events[e].split("\n")
            lines[n] = "data: " + json.dumps(parsed[(e, n)], ensure_ascii=False, separators=(",", ":"))
            events[e] = "\n".join(lines)
        body = "\n\n".join(events)
    return body


def _text_fields(value: Any) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(container, key, text) of every streamed text field in a parsed event, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and key in STREAMED_TEXT_FIELDS:
                yield value, key, item
            else:
                yield from _text_fields(item)
    elif isinstance(value, list):
        for item in value:
            yield from _text_fields(item)


async def _aclose(transport: Any) -> None:
    await transport.aclose()


class _Tee(httpx2.AsyncByteStream):
    """Passes a response body through while keeping a copy; hands the copy over when the body ends."""

    def __init__(self, stream: Any, done: Callable[[bytes], None]) -> None:
        self.stream = stream
        self.done = done
        self.parts: list[bytes] = []
        self.finished = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.stream:
                self.parts.append(chunk)
                yield chunk
        finally:
            self._finish()

    def _finish(self) -> None:
        if not self.finished:
            self.finished = True
            self.done(b"".join(self.parts))

    async def aclose(self) -> None:
        self._finish()
        await self.stream.aclose()


def load_cassette(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise CassetteNotFoundError(
            f"no cassette at {p}: record one first by running the provider with record={str(p)!r}")
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


LEAD = "this notebook replays a recording; your prompt is not in it"
"""What a replay that has no reply says first, in plain words: no exception name, no path (issue 41)."""
GO_LIVE = ("To go live: %brute live (it asks for a key if none is set; from Python, build the provider without "
           "replay=).")


class Replay(httpx2.AsyncBaseTransport):
    """An httpx2 transport serving a cassette's exchanges in order, checking each request against the recording."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        lines = load_cassette(path)
        self.main = [line for line in lines if "branch" not in line]
        self.exchanges = list(self.main)
        self.branches: dict[int, list[list[dict[str, Any]]]] = {}
        for _, group in itertools.groupby((line for line in lines if "branch" in line),
                                          key=lambda line: (line["branch"], line.get("from"))):
            branch = list(group)
            self.branches.setdefault(int(branch[0].get("from", 0)), []).append(branch)
        self.position = 0
        self.sent: list[JSON] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        sent = redact_value(portable(_request_json(request)))  # as the recorder wrote it
        path = request.url.raw_path.decode()
        recorded = self.exchanges[self.position] if self.position < len(self.exchanges) else None
        problem = "" if recorded is None else mismatch(recorded, request.method, path, sent)
        if recorded is None or problem:
            branch = next((b for b in self.branches.get(self.position, ())
                           if not mismatch(b[0], request.method, path, sent)), None)
            if branch is not None:  # the answer this run gave was recorded too: go on along its branch
                self.exchanges = self.exchanges[:self.position] + branch
                recorded, problem = branch[0], ""
            elif self.position and self.main and not mismatch(self.main[0], request.method, path, sent):
                # The conversation started over (a notebook run again in the same kernel): so does the replay.
                self.exchanges, self.position = list(self.main), 0
                recorded, problem = self.main[0], ""
        if recorded is None:
            raise CassetteMismatchError(
                f"{LEAD} (the recording, {self.path.name}, ends after {_requests(len(self.exchanges))}). {GO_LIVE}")
        if problem:
            error = CassetteMismatchError(
                f"{LEAD} (request {self.position + 1} differs from the recording, {self.path.name}: %tb shows how). "
                f"{GO_LIVE}")
            error.diff = problem
            error.add_note(f"what differs from the recording ({self.path}):\n{problem}\n"
                           "Re-record the cassette with record=... if the change is intended.")
            raise error
        self.position += 1
        self.sent.append(sent)
        body = base64.b64decode(recorded["body_b64"]) if "body_b64" in recorded else recorded["body"].encode()
        return httpx2.Response(recorded["status"], headers=recorded.get("headers") or {},
                               stream=_ReplayStream(body), request=request)

    async def aclose(self) -> None:
        pass


def _requests(count: int) -> str:
    return f"{count} request" + ("" if count == 1 else "s")


class _ReplayStream(httpx2.AsyncByteStream):
    """The recorded body, cut at SSE event boundaries so the SDK sees the stream arrive event by event."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        events = self.body.split(b"\n\n")
        for i, event in enumerate(events):
            chunk = event + (b"\n\n" if i < len(events) - 1 else b"")
            if chunk:
                yield chunk

    async def aclose(self) -> None:
        pass


ENV_BLOCK = re.compile(r"<env>.*?</env>")


def without_env(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with every ``<env>...</env>`` block of the system prompt emptied
    (``notebook.kernel_tools.environment``)."""
    text = json.dumps(request, ensure_ascii=False)
    if "<env>" not in text:
        return request
    cleaned: dict[str, Any] = json.loads(ENV_BLOCK.sub("<env></env>", text))
    return cleaned


CELL_NUMBER = re.compile(r"\b(In|Out|Error in) ?\[\d+\]")
"""A kernel's cell label (``In [3]``, ``In[7]``, ``Out [3]``, ``Error in [3]``): the number is the execution count,
which grows with every cell the kernel runs, so a notebook run again in the same kernel labels the same cells
with other numbers (``%brute fix``'s report, ``--context``, the notebook tool's list)."""


def each_text(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (a request) with ``change`` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: each_text(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [each_text(v, change) for v in value]
    return value


def without_cell_numbers(text: str) -> str:
    """``text`` with every cell label's number replaced by ``n``: a replay matches the same conversation whatever
    the kernel counted to before it (Run All twice in one kernel)."""
    return CELL_NUMBER.sub(r"\1 [n]", text)


TEXT_DTYPE = re.compile(r"\bstr\b")
SPACES = re.compile(r"[ \t]+")


def without_dtype_spelling(text: str) -> str:
    """``text`` with pandas 3's name of a text column's dtype, ``str``, read as pandas 2's, ``object`` (the declared
    minimum is 2.2), and every run of spaces as one (pandas pads a dtype listing to its longest name): the same
    frame, described by either release (``%brute fix``'s values, the ``variables`` tool, a Series' repr), is the
    same conversation. The word is read so wherever it stands, on both sides alike, so only requests that differ by
    that word and by spacing alone are taken as one."""
    return SPACES.sub(" ", TEXT_DTYPE.sub("object", text))


def mismatch(recorded: dict[str, Any], method: str, path: str, sent: JSON) -> str:
    """A readable diff of what the cassette expected and what was sent ('' when they match)."""
    if (recorded.get("method"), recorded.get("path")) != (method, path):
        return f"expected {recorded.get('method')} {recorded.get('path')}, sent {method} {path}"
    expected = recorded.get("request")
    if not isinstance(expected, dict) or not isinstance(sent, dict):
        return "" if expected == sent else _diff(expected, sent)
    # Cache marks change the bill, not the conversation: a cassette recorded without them still matches. The system
    # prompt's <env> block (date, versions, the kernel's frames) differs from run to run and machine to machine.
    # A cell's execution count is the kernel's, not the conversation's (a second Run All counts on), and so is the
    # pandas release that names a frame's dtypes (compared alike, but shown as sent: the diff is read by a person).
    expected, sent = (each_text(without_env(without_marks(r)), without_cell_numbers) for r in (expected, sent))
    alike = [each_text(r, without_dtype_spelling) for r in (expected, sent)]
    keys = [k for k in CHECKED_FIELDS if alike[0].get(k) != alike[1].get(k)]
    if not keys:
        return ""
    return "\n".join(f"{k}:\n{_diff(expected.get(k), sent.get(k))}" for k in keys)


def merge_branch(main: str | Path, other: str | Path, name: str) -> int:
    """Add the recording ``other`` (the same session, run with another answer) to the cassette ``main`` as the
    branch ``name``: its exchanges from the first request that differs, marked so ``Replay`` follows them when a
    run sends that request. Returns how many exchanges were added (0 when the two recordings agree)."""
    lines = load_cassette(main)
    ours = [line for line in lines if "branch" not in line]
    theirs = load_cassette(other)
    start = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False))
                  if mismatch(a, str(b.get("method")), str(b.get("path")), b.get("request"))), None)
    if start is None:
        start = min(len(ours), len(theirs))
    added = [{**line, "branch": name, "from": start} for line in theirs[start:]]
    kept = [line for line in lines if line.get("branch") != name]
    # Replaced whole or not at all, and durably: a crash mid-merge must not cost the cassette it merges into.
    confine.write_atomic(main, "".join(dumps(line) + "\n" for line in kept + added).encode())
    return len(added)


def _diff(expected: JSON, sent: JSON, limit: int = 60) -> str:
    a = json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    b = json.dumps(sent, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    lines = list(difflib.unified_diff(a, b, "recorded", "sent", n=2, lineterm=""))
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join("  " + line for line in lines)


def http_transport(client: Any, *, record: str | None, replay: str | None,
                   secrets: Iterable[str | None]) -> httpx2.AsyncBaseTransport | None:
    """The httpx2 transport to give the SDK for record/replay (None when neither is asked). One serves every event
    loop's client: it holds the cassette's position (or the recording), never a connection of one loop."""
    if not record and not replay:
        return None
    if replay:
        return Replay(replay)
    inner = None
    if client is not None:
        # The given client's own transport (custom proxies, mocks) keeps serving; we only listen in.
        inner = getattr(getattr(client, "_client", None), "_transport", None)
    return Recorder(record or "", inner=inner, secrets=secrets)
