"""The fake provider's batch APIs: Anthropic Message Batches and OpenAI Files + Batches, as the real ones behave.

A batch is created whole, reports ``in_progress`` (Anthropic) or ``validating`` then ``in_progress`` (OpenAI) for
``polls`` status reads, and then ends: each request is answered exactly as the synchronous API would have answered
it (the same rules, script and responder: ``FakeProvider.respond``), so one request the API refuses is that
request's error while the others succeed (a partial failure). Results are JSONL in each API's shape: Anthropic's
``results_url`` lines (``succeeded``/``errored``/``canceled``/``expired``), OpenAI's output and error files
(``custom_id``, ``response.status_code``, ``response.body``). A batch cancelled before it ends reports its
requests ``canceled`` (OpenAI: ``cancelled``, no output); ``expire=True`` makes the next batch run out of time
(Anthropic ``expired`` results, OpenAI ``expired`` status with an error file). Shapes follow the installed SDKs'
``MessageBatch``, ``MessageBatchIndividualResponse``, ``Batch`` and ``FileObject``.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from brute_nb.message import dumps
from brute_nb.testing.outcome import Outcome, error_body
from brute_nb.testing.outcome import json_outcome as _json


class Answers(Protocol):
    """What the batch routes use of ``FakeProvider`` (which owns them): its key, its address, its answers."""

    api_key: str | None

    @property
    def base_url(self) -> str: ...

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Outcome: ...

CREATED = 1_700_000_000
STAMP = "2023-11-14T22:13:20Z"
EXPIRES = "2023-11-15T22:13:20Z"
ENDPOINTS = {"/v1/chat/completions": "/v1/chat/completions", "/v1/responses": "/v1/responses"}


@dataclass
class Batch:
    id: str
    api: str
    requests: list[tuple[str, dict[str, Any]]]
    headers: dict[str, str]
    polls_left: int
    endpoint: str = ""
    input_file_id: str = ""
    state: str = "in_progress"
    """in_progress, canceling, ended (Anthropic words; OpenAI's are derived)."""
    outcome: str = ""
    """How it ended: completed, canceled or expired."""
    expire: bool = False
    results: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


class Batches:
    """The batch routes of one ``FakeProvider`` (``fake.batches``); ``polls`` status reads before a batch ends."""

    def __init__(self, fake: Answers, polls: int = 2) -> None:
        self.fake = fake
        self.polls = polls
        self.expire_next = False
        self.batches: dict[str, Batch] = {}
        self.files: dict[str, tuple[str, bytes]] = {}
        """Uploaded and produced files: id -> (purpose, bytes)."""
        self.created = 0
        """Batches created: a client that resumes instead of submitting again leaves this at one."""
        self._lock = threading.Lock()

    def handles(self, path: str) -> bool:
        route = path.split("?")[0]
        return route.startswith(("/v1/messages/batches", "/v1/batches", "/v1/files"))

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Outcome:
        parts = path.split("?")[0].strip("/").split("/")[1:]  # without the leading v1
        api = "anthropic" if parts[0] == "messages" else "openai_chat"
        if not (headers.get("authorization", "").removeprefix("Bearer ") or headers.get("x-api-key")) or (
                self.fake.api_key is not None and self.fake.api_key not in (
                    headers.get("authorization", "").removeprefix("Bearer "), headers.get("x-api-key"))):
            return _json(401, error_body(api, 401, "Incorrect API key provided."))
        with self._lock:
            try:
                return self._route(method, parts, headers, raw)
            except LookupError as exc:
                return _json(404, error_body(api, 404, str(exc)))
            except ValueError as exc:
                return _json(400, error_body(api, 400, str(exc)))

    def _route(self, method: str, parts: list[str], headers: dict[str, str], raw: bytes) -> Outcome:
        if parts[:2] == ["messages", "batches"]:
            rest = parts[2:]
            if method == "POST" and not rest:
                return _json(200, self._anthropic_create(json.loads(raw or b"{}"), headers))
            batch = self._batch(rest[0] if rest else "")
            if method == "POST" and rest[1:] == ["cancel"]:
                self._cancel(batch)
                return _json(200, anthropic_batch(batch, self.fake.base_url))
            if method == "GET" and rest[1:] == ["results"]:
                if batch.state != "ended":
                    raise ValueError(f"batch {batch.id} has not ended; results are available once it has")
                return _jsonl(batch.results)
            if method == "GET" and not rest[1:]:
                self._poll(batch)
                return _json(200, anthropic_batch(batch, self.fake.base_url))
        elif parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                return _json(200, self._upload(headers, raw))
            if method == "GET" and parts[2:] == ["content"] and parts[1] in self.files:
                return _raw(self.files[parts[1]][1])
            raise LookupError(f"No such File object: {parts[1] if len(parts) > 1 else ''}")
        elif parts[0] == "batches":
            if method == "POST" and len(parts) == 1:
                return _json(200, self._openai_create(json.loads(raw or b"{}"), headers))
            batch = self._batch(parts[1] if len(parts) > 1 else "")
            if method == "POST" and parts[2:] == ["cancel"]:
                self._cancel(batch)
                return _json(200, openai_batch(batch))
            if method == "GET" and len(parts) == 2:
                self._poll(batch)
                return _json(200, openai_batch(batch))
        raise LookupError(f"Unknown request URL: {method} /v1/{'/'.join(parts)}")

    def _batch(self, batch_id: str) -> Batch:
        if batch_id not in self.batches:
            raise LookupError(f"No batch found with id '{batch_id}'")
        return self.batches[batch_id]

    def _new(self, prefix: str, api: str, requests: list[tuple[str, dict[str, Any]]], headers: dict[str, str],
             **extra: Any) -> Batch:
        self.created += 1
        ids = [custom for custom, _ in requests]
        if len(set(ids)) != len(ids):
            raise ValueError("custom_id values must be unique within a batch")
        batch = Batch(f"{prefix}{self.created:024d}", api, requests, dict(headers), self.polls,
                      expire=self.expire_next, **extra)
        self.expire_next = False
        self.batches[batch.id] = batch
        return batch

    def _anthropic_create(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise ValueError("requests: at least one request is required")
        pairs = [(str(r.get("custom_id")), dict(r.get("params") or {})) for r in requests]
        batch = self._new("msgbatch_", "anthropic", pairs, headers)
        return anthropic_batch(batch, self.fake.base_url)

    def _upload(self, headers: dict[str, str], raw: bytes) -> dict[str, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"content-type: " + headers.get("content-type", "").encode() + b"\r\n\r\n" + raw)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        purpose = fields["purpose"].get_content().strip() if "purpose" in fields else ""
        if purpose != "batch" or "file" not in fields:
            raise ValueError("a batch input file is uploaded with purpose 'batch' and a file part")
        payload = fields["file"].get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        file_id = f"file-{len(self.files) + 1:024d}"
        self.files[file_id] = (purpose, data)
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": CREATED,
                "filename": fields["file"].get_filename() or "batch.jsonl", "purpose": "batch", "status": "processed",
                "expires_at": None, "status_details": None}

    def _openai_create(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        endpoint = str(body.get("endpoint") or "")
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint: {endpoint!r} is not supported here; use one of {', '.join(ENDPOINTS)}")
        if body.get("completion_window") != "24h":
            raise ValueError("completion_window: only '24h' is supported")
        file_id = str(body.get("input_file_id") or "")
        if file_id not in self.files:
            raise LookupError(f"No such File object: {file_id}")
        pairs = []
        for n, line in enumerate(self.files[file_id][1].decode().splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            if item.get("method") != "POST" or item.get("url") != endpoint:
                raise ValueError(f"line {n} of the input file: method must be POST and url {endpoint}")
            pairs.append((str(item.get("custom_id")), dict(item.get("body") or {})))
        api = "openai_responses" if endpoint.endswith("/responses") else "openai_chat"
        return openai_batch(self._new("batch_", api, pairs, headers, endpoint=endpoint, input_file_id=file_id))

    def _poll(self, batch: Batch) -> None:
        if batch.state == "ended":
            return
        batch.polls_left -= 1
        if batch.polls_left <= 0:
            self._end(batch)

    def _cancel(self, batch: Batch) -> None:
        if batch.state == "ended":
            raise ValueError(f"batch {batch.id} has already ended and cannot be cancelled")
        batch.state = "canceling"
        batch.polls_left = min(batch.polls_left, 1)

    def _end(self, batch: Batch) -> None:
        outcome = "canceled" if batch.state == "canceling" else "expired" if batch.expire else None
        batch.results = [self._result(batch, custom, params, outcome) for custom, params in batch.requests]
        batch.state, batch.outcome = "ended", outcome or "completed"
        if batch.api != "anthropic" and outcome != "canceled":
            good = [r for r in batch.results if (r.get("response") or {}).get("status_code") == 200]
            bad = [r for r in batch.results if r not in good]
            for name, lines in (("output", good), ("error", bad)):
                if lines:
                    file_id = f"file-{batch.id}-{name}"
                    self.files[file_id] = ("batch_output", b"".join(dumps(x).encode() + b"\n" for x in lines))
                    batch.files[name] = file_id

    def _result(self, batch: Batch, custom: str, params: dict[str, Any], outcome: str | None) -> dict[str, Any]:
        if outcome is None:
            path = {"anthropic": "/v1/messages", "openai_chat": "/v1/chat/completions",
                    "openai_responses": "/v1/responses"}[batch.api]
            answer = self.fake.respond("POST", path, batch.headers, dumps({**params, "stream": False}).encode())
            status = answer.status if answer.stall_after is None and not answer.cut else 500
            try:
                body = json.loads(b"".join(answer.chunks)) if status != 500 or not answer.cut else {}
            except ValueError:
                status, body = 500, {}
        if batch.api == "anthropic":
            if outcome is not None:
                return {"custom_id": custom, "result": {"type": outcome}}
            if status == 200:
                return {"custom_id": custom, "result": {"type": "succeeded", "message": body}}
            error = body if body.get("type") == "error" else {"type": "error", "error": {
                "type": "api_error", "message": "the request could not be processed"}}
            return {"custom_id": custom, "result": {"type": "errored", "error": error}}
        if outcome is not None:
            error = {"code": "batch_expired", "message": "This request could not be executed before the completion "
                                                         "window expired."}
            return {"id": f"batch_req_{custom}", "custom_id": custom, "response": None, "error": error}
        return {"id": f"batch_req_{custom}", "custom_id": custom,
                "response": {"status_code": status, "request_id": f"req_{custom}", "body": body}, "error": None}


def anthropic_batch(batch: Batch, base_url: str) -> dict[str, Any]:
    counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    if batch.state == "ended":
        for r in batch.results:
            counts[r["result"]["type"]] += 1
    else:
        counts["processing"] = len(batch.requests)
    ended = batch.state == "ended"
    return {"id": batch.id, "type": "message_batch", "processing_status": batch.state, "request_counts": counts,
            "created_at": STAMP, "expires_at": EXPIRES, "ended_at": STAMP if ended else None,
            "cancel_initiated_at": STAMP if batch.state == "canceling" or counts["canceled"] else None,
            "archived_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results" if ended else None}


def openai_batch(batch: Batch) -> dict[str, Any]:
    done = batch.state == "ended"
    if done:
        status = {"canceled": "cancelled", "expired": "expired"}.get(batch.outcome, "completed")
    elif batch.state == "canceling":
        status = "cancelling"
    else:
        status = "validating" if batch.polls_left >= 2 else "in_progress"
    failed = sum(1 for r in batch.results if not r.get("response") or r["response"]["status_code"] != 200)
    return {"id": batch.id, "object": "batch", "endpoint": batch.endpoint, "errors": None,
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": status,
            "output_file_id": batch.files.get("output"), "error_file_id": batch.files.get("error"),
            "created_at": CREATED, "in_progress_at": CREATED, "expires_at": CREATED + 86_400,
            "completed_at": CREATED + 60 if status == "completed" else None,
            "cancelled_at": CREATED + 60 if status == "cancelled" else None,
            "expired_at": CREATED + 86_400 if status == "expired" else None, "metadata": None,
            "request_counts": {"total": len(batch.requests), "completed": len(batch.results) - failed if done else 0,
                               "failed": failed if done else 0}}


def _jsonl(lines: list[dict[str, Any]]) -> Outcome:
    body = b"".join(dumps(x).encode() + b"\n" for x in lines)
    return Outcome(200, {"content-type": "application/binary"}, [body])


def _raw(data: bytes) -> Outcome:
    return Outcome(200, {"content-type": "application/octet-stream"}, [data])
