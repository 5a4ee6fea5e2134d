"""A finished batch's results, read back line by line as ``(custom_id, Message | None, error | None)``.

The results file comes from the provider, or from whatever answers at its address (a proxy, a compatible server),
so any line in it may be damaged or hostile. What this module keeps, whatever the file holds:

- Memory stays bounded: the file is read as a stream, a line at a time, and a line longer than ``MAX_LINE`` is
  skipped without being held (a 2 GB body costs no more than its first ``MAX_LINE`` bytes).
- One bad line loses only itself: a line that is not JSON, not a result, or has no ``custom_id`` is skipped, and
  the lines after it are still read; a reply the transport cannot read is that row's error. The caller
  (``map.batch``) takes the first answer for each of its own rows and gives the rows left without one an error,
  so a re-run submits them again.
- Replies go into the log as every reply does (``providers.base.kept``: a key they quote is redacted), and a
  provider's error text is redacted too before a frame shows it.
- Keys stay home: the results are fetched by the provider's own SDK client, whose request hook
  (``providers.credentials.strip_keys_off_origin``) drops the key from a request to any other host, such as one
  a batch's ``results_url`` may name.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from brute_nb.message import Message
from brute_nb.redact import redact

MAX_LINE = 64 * 1024 * 1024
"""The longest results line read (a reply with long server tool results is a few MB; more is not an answer)."""

Result = tuple[str, Message | None, str | None]
"""A row's key, its reply (None when it has none) and why not (None when it has one)."""

UNREADABLE = (TypeError, ValueError, KeyError, AttributeError, IndexError)
"""What a transport raises for a body that is not the reply it expects."""


async def lines(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes | None]:
    """The lines of a byte stream, without their newline; None in place of a line longer than ``limit``, which is
    dropped as it streams past rather than held."""
    buffer, skipping = bytearray(), False
    async for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not skipping:
                buffer += chunk[start:end]
            yield None if skipping or len(buffer) > limit else bytes(buffer)
            buffer.clear()
            skipping, start = False, end + 1
        if not skipping:
            buffer += chunk[start:]
            if len(buffer) > limit:
                buffer.clear()
                skipping = True
    if skipping:
        yield None
    elif buffer.strip():
        yield bytes(buffer)


def _record(line: bytes | None) -> dict[str, Any] | None:
    """One results line as an object with a text ``custom_id``; None for anything else."""
    if line is None or not line.strip():
        return None
    try:
        item = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the parser's limit
        return None
    if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
        return None
    return item


def _text(value: Any, default: str) -> str:
    return redact(value) if isinstance(value, str) and value else default


def _reply(transport: Any, body: Any) -> tuple[Message | None, str | None]:
    from brute_nb.providers.base import kept, wrapped

    if not isinstance(body, dict):
        return None, "the batch's answer for this row is not a reply; run the cell again to submit it again"
    try:
        return kept(wrapped(transport, body)), None
    except UNREADABLE as exc:
        return None, (f"the batch's answer for this row could not be read ({type(exc).__name__}: "
                      f"{_text(str(exc), 'no detail')}); run the cell again to submit it again")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


async def anthropic_results(provider: Any, batch_id: str) -> AsyncIterator[Result]:
    """Anthropic's results (``succeeded`` / ``errored`` / ``canceled`` / ``expired`` lines)."""
    from brute_nb.transports.anthropic import Anthropic

    decoder = await provider.client.messages.batches.results(batch_id)
    try:
        async for line in lines(decoder.http_response.aiter_bytes(), MAX_LINE):
            item = _record(line)
            if item is None:
                continue
            result = _dict(item.get("result"))
            kind = result.get("type")
            if kind == "succeeded":
                yield (item["custom_id"], *_reply(Anthropic, result.get("message")))
            elif kind == "errored":
                why = _dict(_dict(result.get("error")).get("error")).get("message")
                yield item["custom_id"], None, f"anthropic refused the request: {_text(why, 'no reason given')}"
            elif kind in ("canceled", "expired"):
                yield item["custom_id"], None, f"the batch request was {kind}; run the cell again to submit it again"
    finally:
        await decoder.close()


OPENAI_ENDED = {"batch_expired": "expired", "batch_cancelled": "cancelled"}


async def openai_results(transport: Any, provider: Any, batch: Any) -> AsyncIterator[Result]:
    """OpenAI's output and error files (``custom_id``, ``response.status_code``, ``response.body``, ``error``), each
    reply read by ``transport`` (the batch's API's)."""
    for file_id in (batch.output_file_id, batch.error_file_id):
        if not file_id:
            continue
        async with provider.client.files.with_streaming_response.content(file_id) as response:
            async for line in lines(response.iter_bytes(), MAX_LINE):
                item = _record(line)
                if item is None:
                    continue
                answer, error = _dict(item.get("response")), _dict(item.get("error"))
                status = answer.get("status_code")
                if status == 200:
                    yield (item["custom_id"], *_reply(transport, answer.get("body")))
                elif error.get("code") in OPENAI_ENDED:
                    yield (item["custom_id"], None, f"the batch request was {OPENAI_ENDED[error['code']]}; run the "
                                                    "cell again to submit it again")
                else:
                    why = _dict(_dict(answer.get("body")).get("error")) or error
                    reason = _text(why.get("message"), "") or _text(why.get("code"), "no reason given")
                    shown = status if isinstance(status, int) else "no status"
                    yield item["custom_id"], None, f"openai refused the request (HTTP {shown}): {reason}"


def failed(batch: Any) -> str:
    """Why an OpenAI batch failed as a whole (its input file was refused), for every row's error."""
    data = getattr(getattr(batch, "errors", None), "data", None) or []
    reasons = [f"line {e.line}: {_text(e.message, str(e.code))}" if getattr(e, "line", None) else
               _text(getattr(e, "message", None), str(getattr(e, "code", None))) for e in data[:3]]
    return ("openai refused the batch: " + ("; ".join(reasons) or "no reason given") +
            "; run the cell again to submit the rows again")
