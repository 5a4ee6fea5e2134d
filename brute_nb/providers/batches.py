"""The providers' batch APIs (``map(..., batch=True)``), one object a vendor API, named by its profile
(``Profile.batch``): how a batch of requests is submitted, how its state is read, and where its results come from.

Anthropic takes a Message Batch (``messages/batches``); OpenAI a JSONL file of requests and a Batch over it (Chat
Completions or Responses). ``map.batch`` keeps the invariants (submitted once, every answer kept); these only speak
each API, through the provider's own SDK client (its key stays home, its record/replay transport applies).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from brute_nb.message import dumps
from brute_nb.providers.batch_results import Result, anthropic_results, failed, openai_results

Requests = list[tuple[str, dict[str, Any]]]
"""Each row's key (its ``custom_id``) and the keyword arguments its synchronous turn would send."""
REQUEST_OPTIONS = ("extra_headers", "extra_query", "timeout")
"""The SDK's request options a turn's keyword arguments may hold (``-o extra_headers=...``): they shape the HTTP
call, so a batch makes them options of its own calls; ``extra_body`` is fields of the body, so it joins it."""
Ended = AsyncIterator[Result] | str
"""A finished batch's results, or the error of every row when it failed as a whole."""


class BatchApi(Protocol):
    """What ``map.batch`` asks of a provider's batch API."""

    async def submit(self, provider: Any, requests: Requests, name: str) -> str:
        """Submit the requests as one batch; its id."""
        ...

    async def poll(self, provider: Any, batch_id: str) -> tuple[str, Ended | None]:
        """The batch's status as a progress line, and its results once it has ended (None while it runs)."""
        ...


@dataclass(frozen=True)
class MessageBatches:
    """Anthropic's Message Batches."""

    async def submit(self, provider: Any, requests: Requests, name: str) -> str:
        bodies, call = split(requests, ("betas", "workspace_id"))
        messages = provider.client.beta.messages if call.get("betas") else provider.client.messages
        batch = await messages.batches.create(requests=[{"custom_id": k, "params": b} for k, b in bodies], **call)
        return str(batch.id)

    async def poll(self, provider: Any, batch_id: str) -> tuple[str, Ended | None]:
        batch = await provider.client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        line = (f"{batch.processing_status}: {counts.succeeded} done, {counts.errored} failed, "
                f"{counts.processing} waiting")
        return line, anthropic_results(provider, batch_id) if batch.processing_status == "ended" else None


@dataclass(frozen=True)
class FileBatches:
    """OpenAI's Batch API over an uploaded JSONL file of requests to ``endpoint``."""

    endpoint: str
    transport: str
    """``module:attribute`` of the transport that reads the endpoint's replies."""

    async def submit(self, provider: Any, requests: Requests, name: str) -> str:
        client = provider.client
        bodies, call = split(requests)
        lines = "".join(dumps({"custom_id": key, "method": "POST", "url": self.endpoint, "body": body}) + "\n"
                        for key, body in bodies)
        upload = await client.files.create(file=(name + ".jsonl", lines.encode()), purpose="batch", **call)
        batch = await client.batches.create(input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h",
                                            **call)
        return str(batch.id)

    async def poll(self, provider: Any, batch_id: str) -> tuple[str, Ended | None]:
        batch = await provider.client.batches.retrieve(batch_id)
        counts = batch.request_counts
        line = f"{batch.status}" + (f": {counts.completed} done, {counts.failed} failed of {counts.total}"
                                    if counts else "")
        if batch.status == "failed":
            return line, failed(batch)
        if batch.status in ("completed", "expired", "cancelled"):
            return line, openai_results(self._transport(), provider, batch)
        return line, None

    def _transport(self) -> Any:
        import importlib

        module, _, name = self.transport.partition(":")
        return getattr(importlib.import_module(module), name)


def split(requests: Requests, headers: tuple[str, ...] = ()) -> tuple[Requests, dict[str, Any]]:
    """The requests as batch bodies, and the options of the batch's own calls: a turn's request options (and
    ``headers``, the parameters the SDK sends as headers, such as Anthropic's ``betas``) are no body fields, and the
    APIs refuse a batch line carrying them (``params.betas: Extra inputs are not permitted``). Every row is made by
    one provider, so their options agree; betas are joined all the same, as a header names them for every row."""
    bodies: Requests = []
    call: dict[str, Any] = {}
    for key, kwargs in requests:
        body = {k: v for k, v in kwargs.items() if k not in (*REQUEST_OPTIONS, *headers, "extra_body")}
        body.update(kwargs.get("extra_body") or {})
        bodies.append((key, body))
        for option in (*REQUEST_OPTIONS, *headers):
            if option == "betas" and kwargs.get(option):
                call["betas"] = list(dict.fromkeys([*call.get("betas", ()), *kwargs["betas"]]))
            elif option in kwargs:
                call[option] = kwargs[option]
    return bodies, call


MESSAGE_BATCHES = MessageBatches()
CHAT_BATCHES = FileBatches("/v1/chat/completions", "brute_nb.transports.openai:OpenAI")
RESPONSES_BATCHES = FileBatches("/v1/responses", "brute_nb.transports.openai_responses:ResponsesItems")
