"""``map(..., batch=True)`` with a user's ``-o betas``, ``-o extra_headers`` or a beta option: a batch request's
``params`` is a message-create body, so betas go as the ``anthropic-beta`` header of the batch create call (the
SDK's beta batches API) and extra headers on that call; OpenAI's JSONL lines are request bodies, so headers go on
the HTTP calls. The fake refuses what the real APIs refuse (an unknown field in a request's params, a beta feature
in a batch created without its beta); the real SDK clients drive every test."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import brute_nb
from brute_nb.map import batch as batches
from brute_nb.testing import FakeProvider
from brute_nb.testing.rules_tools import BETA_ONLY
from tests.providers.helpers import FACTORIES

EDITS = {"edits": [{"type": "clear_tool_uses_20250919"}]}
CONTEXT_BETA = BETA_ONLY["clear_tool_uses_20250919"]


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "FIRST_WAIT", 0.01)


def rows() -> pd.DataFrame:
    return pd.DataFrame({"review": ["good", "fine"]}, index=["r0", "r1"])


def create_call(server: FakeProvider, path: str) -> dict[str, str]:
    return next(r["headers"] for r in server.batches.requests if r["method"] == "POST" and r["path"].split("?")[0]
                .rstrip("/").endswith(path))


def test_betas_and_extra_headers_go_on_the_message_batch_call_not_in_its_params(server: FakeProvider,
                                                                                notebook: Path) -> None:
    provider = FACTORIES["anthropic"](server, betas=["context-1m-2025-08-07"], context_management=EDITS,
                                      extra_headers={"X-Trace": "t1"})
    out = brute_nb.map("Classify: {review}", rows(), model=provider, batch=True, progress=False)
    assert out["error"].isna().all(), list(out["error"])
    assert list(out["reply"]) == ["echo: Classify: good", "echo: Classify: fine"]
    headers = create_call(server, "/messages/batches")
    sent = {b.strip() for b in headers["anthropic-beta"].split(",")}
    # the SDK's own beta for the batches API goes with them on anthropic 2.0's beta.messages.batches (not later)
    assert sent - {"message-batches-2024-09-24"} == {"context-1m-2025-08-07", CONTEXT_BETA}
    assert headers["x-trace"] == "t1"
    last = list(server.batches.batches.values())[-1]
    for _, params in last.requests:
        assert {"betas", "extra_headers"}.isdisjoint(params) and params["context_management"] == EDITS


@pytest.mark.parametrize(("params", "says"), [
    ({"betas": ["context-1m-2025-08-07"]}, "requests.0.params.betas: Extra inputs are not permitted"),
    ({"extra_headers": {"X-Trace": "t1"}}, "requests.0.params.extra_headers: Extra inputs are not permitted"),
    ({"context_management": EDITS}, "requests.0.params.context_management.edits.0.type: Input tag"),
])
def test_the_fake_refuses_a_message_batch_the_real_api_refuses(server: FakeProvider, params: dict[str, object],
                                                               says: str) -> None:
    import anthropic

    client = anthropic.Anthropic(base_url=server.base_url, api_key=server.api_key, max_retries=0)
    body = {"model": "claude-fake", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], **params}
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.batches.create(requests=[{"custom_id": "a", "params": body}])  # type: ignore[typeddict-item]
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert caught.value.body["error"]["message"].startswith(says)  # type: ignore[index]


@pytest.mark.parametrize("kind", ["openai_chat", "openai_responses"])
def test_extra_headers_go_on_the_openai_batch_calls_never_in_a_jsonl_body(server: FakeProvider, notebook: Path,
                                                                          kind: str) -> None:
    provider = FACTORIES[kind](server, extra_headers={"X-Trace": "t1"}, extra_body={"user": "u1"})
    out = brute_nb.map("Tell {review}", rows(), model=provider, batch=True, progress=False)
    assert out["error"].isna().all(), list(out["error"])
    assert create_call(server, "/batches")["x-trace"] == "t1"
    assert create_call(server, "/files")["x-trace"] == "t1"
    last = list(server.batches.batches.values())[-1]
    lines = [json.loads(x) for x in server.batches.files[last.input_file_id][1].decode().splitlines()]
    assert all({"extra_headers", "extra_body"}.isdisjoint(x["body"]) and x["body"]["user"] == "u1" for x in lines)


def test_the_fake_answers_an_openai_batch_line_with_an_unknown_field_as_the_api_does(server: FakeProvider,
                                                                                    notebook: Path) -> None:
    import openai

    client = openai.OpenAI(base_url=server.openai_base_url, api_key=server.api_key, max_retries=0)
    line = {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "gpt-fake", "messages": [{"role": "user", "content": "hi"}],
                     "extra_headers": {"X-Trace": "t1"}}}
    upload = client.files.create(file=("b.jsonl", json.dumps(line).encode() + b"\n"), purpose="batch")
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    while batch.status not in ("completed", "failed"):
        batch = client.batches.retrieve(batch.id)
    assert batch.error_file_id is not None and batch.output_file_id is None
    (error,) = [json.loads(x) for x in client.files.content(batch.error_file_id).text.splitlines()]
    assert error["response"]["status_code"] == 400
    assert error["response"]["body"]["error"]["message"] == "Unrecognized request argument supplied: extra_headers"
