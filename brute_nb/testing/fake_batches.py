"""The fake provider's batch APIs: Anthropic Message Batches and OpenAI Files + Batches, as the real ones behave.

A batch is created whole, reports ``in_progress`` (Anthropic) or ``validating`` then ``in_progress`` (OpenAI) for
``polls`` status reads, and then ends: each request is answered exactly as the synchronous API would have answered
it (the same rules, script and responder: ``FakeProvider.respond``), so one request the API refuses is that
request's error while the others succeed (a partial failure). Results are JSONL in each API's shape: Anthropic's
``results_url`` lines (``succeeded``/``errored``/``canceled``/``expired``), OpenAI's output and error files
(``custom_id``, ``response.status_code``, ``response.body``). A batch cancelled before it ends reports its
requests ``canceled`` (OpenAI: ``cancelled``, its requests in the error file as ``batch_cancelled``);
``expire_next = True`` makes the next batch run out of time (Anthropic ``expired`` results, OpenAI ``expired`` status
with ``batch_expired`` lines in its error file), after answering its first ``answered_before_expiry`` requests (a
partial result, as a real window that closes midway leaves). OpenAI checks the input file only once the batch exists,
as the real service does: a line with the wrong method or url makes the batch ``failed`` with ``errors`` naming the
line, not the create call a 400. Shapes follow the installed SDKs' ``MessageBatch``,
``MessageBatchIndividualResponse``, ``Batch`` (every field, the ones brute_nb does not read too) and ``FileObject``.
A test may have a hostile server serve other results (``tamper``).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from brute_nb.message import dumps
from brute_nb.testing.body_fields import unknown_fields, unknown_message
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
    answered: int = 0
    """When it expires: how many requests were answered before the window closed."""
    invalid: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI input-file problems (``errors.data``): a batch with any fails instead of running."""
    results: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


class Batches:
    """The batch routes of one ``FakeProvider`` (``fake.batches``); ``polls`` status reads before a batch ends."""

    def __init__(self, fake: Answers, polls: int = 2) -> None:
        self.fake = fake
        self.polls = polls
        self.expire_next = False
        self.answered_before_expiry = 0
        self.tamper: Callable[[str, list[dict[str, Any]]], bytes] | None = None
        """What a hostile server serves instead of the honest results: a function of the API (``anthropic``,
        ``openai_chat``, ``openai_responses``) and the honest lines (Anthropic's results; OpenAI's output and error
        lines together) giving the raw bytes of Anthropic's results or OpenAI's output file."""
        self.enqueued_token_limit: int | None = None
        """OpenAI's per-model limit on tokens waiting in batches: a batch over it fails (``token_limit_exceeded``)."""
        self.results_host: str | None = None
        """A base URL to name in Anthropic's ``results_url`` instead of this server's (a proxy pointing elsewhere)."""
        self.batches: dict[str, Batch] = {}
        self.files: dict[str, tuple[str, bytes]] = {}
        """Uploaded and produced files: id -> (purpose, bytes)."""
        self.requests: list[dict[str, Any]] = []
        """Every batch route request as ``{"method", "path", "headers"}``: which carried a key, and where."""
        self.created = 0
        """Batches created: a client that resumes instead of submitting again leaves this at one."""
        self._lock = threading.Lock()

    def handles(self, path: str) -> bool:
        route = path.split("?")[0]
        return route.startswith(("/v1/messages/batches", "/v1/batches", "/v1/files"))

    def respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Outcome:
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": dict(headers)})
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
                return _json(200, anthropic_batch(batch, self._results_base()))
            if method == "GET" and rest[1:] == ["results"]:
                if batch.state != "ended":
                    raise ValueError(f"batch {batch.id} has not ended; results are available once it has")
                if self.tamper is not None:
                    return _raw(self.tamper(batch.api, batch.results), "application/binary")
                return _jsonl(batch.results)
            if method == "GET" and not rest[1:]:
                self._poll(batch)
                return _json(200, anthropic_batch(batch, self._results_base()))
        elif parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                return _json(200, self._upload(headers, raw))
            if method == "GET" and parts[2:] == ["content"] and parts[1] in self.files:
                owner = next((b for b in self.batches.values() if b.files.get("output") == parts[1]), None)
                if owner is not None and self.tamper is not None:
                    return _raw(self.tamper(owner.api, owner.results))
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

    def _results_base(self) -> str:
        return self.results_host or self.fake.base_url

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
                      expire=self.expire_next, answered=self.answered_before_expiry, **extra)
        self.expire_next, self.answered_before_expiry = False, 0
        self.batches[batch.id] = batch
        return batch

    def _anthropic_create(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise ValueError("requests: at least one request is required")
        pairs = [(str(r.get("custom_id")), dict(r.get("params") or {})) for r in requests]
        problems = [f"requests.{i}.params.{problem}" for i, (_, params) in enumerate(pairs)
                    for problem in message_params_problems(params, headers.get("anthropic-beta", ""))]
        if problems:
            raise ValueError("; ".join(problems))
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
        pairs, invalid = [], []
        for n, line in enumerate(self.files[file_id][1].decode().splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            if item.get("method") != "POST" or item.get("url") != endpoint:
                invalid.append({"code": "invalid_url", "line": n, "param": "url",
                                "message": f"The URL provided for this request does not match the batch endpoint "
                                           f"{endpoint}."})
            pairs.append((str(item.get("custom_id")), dict(item.get("body") or {})))
        enqueued = sum(len(json.dumps(body)) // 4 for _, body in pairs)
        if self.enqueued_token_limit is not None and enqueued > self.enqueued_token_limit:
            model = next((str(body.get("model")) for _, body in pairs if body.get("model")), "the model")
            invalid.append({"code": "token_limit_exceeded", "line": None, "param": None,
                            "message": f"Enqueued token limit reached for {model} in organization org-fake. Limit: "
                                       f"{self.enqueued_token_limit:,} enqueued tokens. Please try submitting an "
                                       "equal or smaller batch later."})
        api = "openai_responses" if endpoint.endswith("/responses") else "openai_chat"
        batch = self._new("batch_", api, pairs, headers, endpoint=endpoint, input_file_id=file_id, invalid=invalid)
        return openai_batch(batch)

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
        if batch.invalid:  # OpenAI: the input file failed validation, so nothing ran
            batch.state, batch.outcome = "ended", "failed"
            return
        outcome = "canceled" if batch.state == "canceling" else "expired" if batch.expire else None
        batch.results = [self._result(batch, custom, params, None if outcome == "expired" and n < batch.answered
                                      else outcome) for n, (custom, params) in enumerate(batch.requests)]
        batch.state, batch.outcome = "ended", outcome or "completed"
        if batch.api != "anthropic":
            good = [r for r in batch.results if (r.get("response") or {}).get("status_code") == 200]
            bad = [r for r in batch.results if r not in good]
            for name, lines in (("output", good), ("error", bad)):
                if lines:
                    file_id = f"file-{batch.id}-{name}"
                    self.files[file_id] = ("batch_output", b"".join(dumps(x).encode() + b"\n" for x in lines))
                    batch.files[name] = file_id

    def _result(self, batch: Batch, custom: str, params: dict[str, Any], outcome: str | None) -> dict[str, Any]:
        unknown = unknown_fields(batch.api, params) if outcome is None and batch.api != "anthropic" else []
        if unknown:  # what the endpoint says of a body field it does not know, as that line's answer
            return {"id": f"batch_req_{custom}", "custom_id": custom, "response": {
                "status_code": 400, "request_id": f"req_{custom}", "body": error_body(
                    batch.api, 400, unknown_message(batch.api, unknown[0]))}, "error": None}
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
            error = ({"code": "batch_expired", "message": "This request could not be executed before the "
                                                          "completion window expired."} if outcome == "expired"
                     else {"code": "batch_cancelled", "message": "The batch was cancelled before this request "
                                                                 "executed."})
            return {"id": f"batch_req_{custom}", "custom_id": custom, "response": None, "error": error}
        return {"id": f"batch_req_{custom}", "custom_id": custom,
                "response": {"status_code": status, "request_id": f"req_{custom}", "body": body}, "error": None}


def message_params_problems(params: dict[str, Any], beta_header: str) -> list[str]:
    """Why Message Batches refuses a request's ``params`` when the batch is created (the whole create call is a
    400): a field no message-create body has (``betas`` or ``extra_headers`` among them: they are the SDK's
    request options, never body fields), or a beta feature the create call's ``anthropic-beta`` does not name."""
    from brute_nb.testing.rules_tools import anthropic_beta

    extra = unknown_fields("anthropic", params)
    return [unknown_message("anthropic", k) for k in extra] or anthropic_beta(params, beta_header)


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
        status = "validating" if batch.polls_left >= 2 or batch.invalid else "in_progress"
    if batch.outcome == "failed":
        status = "failed"
    failed = sum(1 for r in batch.results if not r.get("response") or r["response"]["status_code"] != 200)
    errors = {"object": "list", "data": batch.invalid} if batch.invalid and done else None
    bodies = [r["response"]["body"] for r in batch.results if (r.get("response") or {}).get("status_code") == 200]
    return {"id": batch.id, "object": "batch", "endpoint": batch.endpoint, "errors": errors,
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": status,
            "output_file_id": batch.files.get("output"), "error_file_id": batch.files.get("error"),
            "created_at": CREATED, "in_progress_at": None if status in ("validating", "failed") else CREATED,
            "expires_at": CREATED + 86_400,
            "finalizing_at": CREATED + 59 if status in ("completed", "expired", "cancelled") else None,
            "completed_at": CREATED + 60 if status == "completed" else None,
            "cancelling_at": CREATED + 30 if status in ("cancelling", "cancelled") else None,
            "cancelled_at": CREATED + 60 if status == "cancelled" else None,
            "failed_at": CREATED + 1 if status == "failed" else None,
            "expired_at": CREATED + 86_400 if status == "expired" else None, "metadata": None,
            "model": next((str(p.get("model")) for _, p in batch.requests if p.get("model")), None),
            "usage": _batch_usage(bodies) if done and status != "failed" else None,
            "request_counts": {"total": len(batch.requests), "completed": len(batch.results) - failed if done else 0,
                               "failed": failed if done else 0}}


def _batch_usage(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """The batch's tokens, added up from its answers (Chat Completions' or Responses' usage), in ``BatchUsage``'s
    shape (reported for batches created since September 2025)."""
    counts = {"input": 0, "output": 0, "cached": 0, "reasoning": 0}
    for body in bodies:
        usage = body.get("usage") or {}
        counts["input"] += usage.get("input_tokens", usage.get("prompt_tokens")) or 0
        counts["output"] += usage.get("output_tokens", usage.get("completion_tokens")) or 0
        ins = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
        outs = usage.get("output_tokens_details") or usage.get("completion_tokens_details") or {}
        counts["cached"] += ins.get("cached_tokens") or 0
        counts["reasoning"] += outs.get("reasoning_tokens") or 0
    return {"input_tokens": counts["input"], "input_tokens_details": {"cached_tokens": counts["cached"]},
            "output_tokens": counts["output"], "output_tokens_details": {"reasoning_tokens": counts["reasoning"]},
            "total_tokens": counts["input"] + counts["output"]}


def _jsonl(lines: list[dict[str, Any]]) -> Outcome:
    body = b"".join(dumps(x).encode() + b"\n" for x in lines)
    return Outcome(200, {"content-type": "application/binary"}, [body])


def _raw(data: bytes, kind: str = "application/octet-stream") -> Outcome:
    return Outcome(200, {"content-type": kind}, [data])
