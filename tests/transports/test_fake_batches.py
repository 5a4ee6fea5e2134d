"""The fake provider's batch APIs (issue 27 §6), driven by the real SDK clients' own batch methods: created,
polled until they end, results read back in each API's shape, a refused request failing alone (partial failure),
cancel and expiry, and the rules each API enforces on a batch."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from brute_nb.testing import FakeProvider

PARAMS = {"model": "claude-x", "max_tokens": 100}


def anthropic_client(fake: FakeProvider) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.base_url, api_key=fake.api_key, max_retries=0)


def openai_client(fake: FakeProvider) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)


def ask(text: str) -> dict[str, Any]:
    return {**PARAMS, "messages": [{"role": "user", "content": text}]}


def test_an_anthropic_batch_ends_after_polls_with_one_result_per_request(fake_provider: FakeProvider) -> None:
    fake_provider.add("first answer", "second answer")
    client = anthropic_client(fake_provider)
    bad = {**PARAMS, "messages": [{"role": "assistant", "content": "no user first"}]}
    batch = client.messages.batches.create(requests=[
        {"custom_id": "row-0", "params": ask("one")}, {"custom_id": "row-1", "params": bad},
        {"custom_id": "row-2", "params": ask("two")}])
    assert batch.processing_status == "in_progress" and batch.request_counts.processing == 3
    assert batch.results_url is None
    states = [client.messages.batches.retrieve(batch.id).processing_status for _ in range(2)]
    assert states == ["in_progress", "ended"]
    ended = client.messages.batches.retrieve(batch.id)
    assert (ended.request_counts.succeeded, ended.request_counts.errored) == (2, 1)
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["row-0"].type == "succeeded" and results["row-0"].message.content[0].text == "first answer"
    assert results["row-2"].message.content[0].text == "second answer"
    assert results["row-1"].type == "errored"
    assert "first message must use the \"user\" role" in results["row-1"].error.error.message
    assert fake_provider.batches.created == 1


def test_an_anthropic_batch_cancelled_or_expired_says_so_per_request(fake_provider: FakeProvider) -> None:
    client = anthropic_client(fake_provider)
    batch = client.messages.batches.create(requests=[{"custom_id": "a", "params": ask("x")}])
    assert client.messages.batches.cancel(batch.id).processing_status == "canceling"
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    assert [r.result.type for r in client.messages.batches.results(batch.id)] == ["canceled"]
    fake_provider.batches.expire_next = True
    late = client.messages.batches.create(requests=[{"custom_id": "b", "params": ask("y")}])
    while client.messages.batches.retrieve(late.id).processing_status != "ended":
        pass
    assert [r.result.type for r in client.messages.batches.results(late.id)] == ["expired"]
    assert len(fake_provider.requests) == 0  # cancelled and expired requests never reached the model


def test_anthropic_batch_rules(fake_provider: FakeProvider) -> None:
    client = anthropic_client(fake_provider)
    with pytest.raises(anthropic.BadRequestError, match="custom_id values must be unique"):
        client.messages.batches.create(requests=[{"custom_id": "a", "params": ask("x")},
                                                 {"custom_id": "a", "params": ask("y")}])
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve("msgbatch_nope")
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=fake_provider.base_url, api_key="sk-wrong", max_retries=0)\
            .messages.batches.retrieve("x")


@pytest.mark.parametrize("endpoint", ["/v1/chat/completions", "/v1/responses"])
def test_an_openai_batch_uploads_a_file_and_fills_output_and_error_files(fake_provider: FakeProvider,
                                                                         endpoint: str) -> None:
    fake_provider.add("answer zero", "answer two")
    client = openai_client(fake_provider)
    key = "messages" if endpoint.endswith("completions") else "input"
    bodies = [{"model": "gpt-x", key: [{"role": "user", "content": "zero"}]},
              {"model": "gpt-x", key: [{"role": "tool", "content": "orphan", "tool_call_id": "c1"}]
               if key == "messages" else [{"type": "function_call_output", "call_id": "c1", "output": "orphan"}]},
              {"model": "gpt-x", key: [{"role": "user", "content": "two"}]}]
    lines = "".join(json.dumps({"custom_id": f"row-{i}", "method": "POST", "url": endpoint, "body": b}) + "\n"
                    for i, b in enumerate(bodies))
    upload = client.files.create(file=("rows.jsonl", lines.encode()), purpose="batch")
    assert upload.purpose == "batch" and upload.bytes == len(lines.encode())
    batch = client.batches.create(input_file_id=upload.id, endpoint=endpoint, completion_window="24h")  # type: ignore[arg-type]
    assert batch.status == "validating"
    statuses = [client.batches.retrieve(batch.id).status for _ in range(2)]
    assert statuses == ["in_progress", "completed"]
    done = client.batches.retrieve(batch.id)
    assert done.request_counts is not None and (done.request_counts.completed, done.request_counts.failed) == (2, 1)
    assert done.output_file_id and done.error_file_id
    output = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
    assert [o["custom_id"] for o in output] == ["row-0", "row-2"]
    assert all(o["response"]["status_code"] == 200 for o in output)
    text = json.dumps(output[0]["response"]["body"])
    assert "answer zero" in text
    (error,) = [json.loads(x) for x in client.files.content(done.error_file_id).text.splitlines()]
    assert error["custom_id"] == "row-1" and error["response"]["status_code"] == 400


def test_an_openai_batch_cancelled_or_expired(fake_provider: FakeProvider) -> None:
    client = openai_client(fake_provider)
    line = json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "gpt-x", "messages": [{"role": "user", "content": "x"}]}})
    upload = client.files.create(file=("a.jsonl", line.encode()), purpose="batch")
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert client.batches.cancel(batch.id).status == "cancelling"
    cancelled = client.batches.retrieve(batch.id)
    assert cancelled.status == "cancelled" and cancelled.output_file_id is None
    assert cancelled.cancelling_at is not None and cancelled.cancelled_at is not None
    (dropped,) = [json.loads(x) for x in client.files.content(cancelled.error_file_id or "").text.splitlines()]
    assert dropped["response"] is None and dropped["error"]["code"] == "batch_cancelled"
    fake_provider.batches.expire_next = True
    late = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    while (state := client.batches.retrieve(late.id)).status not in ("expired", "completed"):
        pass
    assert state.status == "expired" and state.error_file_id
    (error,) = [json.loads(x) for x in client.files.content(state.error_file_id).text.splitlines()]
    assert error["error"]["code"] == "batch_expired"
    with pytest.raises(openai.BadRequestError, match="completion_window"):
        client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                              completion_window="1h")  # type: ignore[arg-type]


def test_an_openai_batch_that_expires_midway_keeps_what_it_answered(fake_provider: FakeProvider) -> None:
    fake_provider.add("first answer")
    client = openai_client(fake_provider)
    lines = "".join(json.dumps({"custom_id": c, "method": "POST", "url": "/v1/responses",
                                "body": {"model": "gpt-x", "input": c}}) + "\n" for c in ("a", "b", "c"))
    upload = client.files.create(file=("abc.jsonl", lines.encode()), purpose="batch")
    fake_provider.batches.expire_next, fake_provider.batches.answered_before_expiry = True, 1
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/responses", completion_window="24h")
    while (state := client.batches.retrieve(batch.id)).status != "expired":
        pass
    assert state.request_counts is not None and (state.request_counts.completed, state.request_counts.failed) == (1, 2)
    (done,) = [json.loads(x) for x in client.files.content(state.output_file_id or "").text.splitlines()]
    assert done["custom_id"] == "a" and done["response"]["body"]["object"] == "response"
    late = [json.loads(x) for x in client.files.content(state.error_file_id or "").text.splitlines()]
    assert [(x["custom_id"], x["error"]["code"]) for x in late] == [("b", "batch_expired"), ("c", "batch_expired")]
    assert state.usage is not None and state.usage.output_tokens > 0  # the answered part's tokens
    assert len(fake_provider.requests) == 1  # the expired requests never reached the model


def test_an_openai_input_file_is_checked_after_create_and_fails_the_batch(fake_provider: FakeProvider) -> None:
    client = openai_client(fake_provider)
    lines = "".join(json.dumps({"custom_id": c, "method": "POST", "url": url, "body": {"model": "gpt-x", "input": c}})
                    + "\n" for c, url in (("a", "/v1/responses"), ("b", "/v1/chat/completions")))
    upload = client.files.create(file=("mixed.jsonl", lines.encode()), purpose="batch")
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/responses", completion_window="24h")
    assert batch.status == "validating"  # accepted: the real service reads the file only afterwards
    while (state := client.batches.retrieve(batch.id)).status == "validating":
        pass
    assert state.status == "failed" and state.failed_at is not None and state.in_progress_at is None
    assert state.errors is not None and state.errors.data is not None
    (error,) = state.errors.data
    assert (error.code, error.line, error.param) == ("invalid_url", 2, "url")
    assert state.output_file_id is None and state.error_file_id is None and len(fake_provider.requests) == 0


def test_an_openai_batch_object_has_every_field_the_sdk_declares(fake_provider: FakeProvider) -> None:
    from openai.types import Batch

    client = openai_client(fake_provider)
    line = json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "gpt-x", "messages": [{"role": "user", "content": "x"}]}})
    upload = client.files.create(file=("a.jsonl", line.encode()), purpose="batch")
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    raw = client.batches.with_raw_response.retrieve(batch.id).http_response.json()
    assert set(Batch.model_fields) <= set(raw)  # the ones brute_nb never reads too: a fake no kinder than the API
    assert raw["model"] == "gpt-x"
