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
"""Each row's key (its ``custom_id``) and the body its synchronous turn would send."""
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
        batch = await provider.client.messages.batches.create(
            requests=[{"custom_id": key, "params": body} for key, body in requests])
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
        lines = "".join(dumps({"custom_id": key, "method": "POST", "url": self.endpoint, "body": body}) + "\n"
                        for key, body in requests)
        upload = await client.files.create(file=(name + ".jsonl", lines.encode()), purpose="batch")
        batch = await client.batches.create(input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h")
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


MESSAGE_BATCHES = MessageBatches()
CHAT_BATCHES = FileBatches("/v1/chat/completions", "brute_nb.transports.openai:OpenAI")
RESPONSES_BATCHES = FileBatches("/v1/responses", "brute_nb.transports.openai_responses:ResponsesItems")
