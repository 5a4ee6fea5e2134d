"""The hostile replies table's ``batch`` cases (``hostile.replies``) against ``map(..., batch=True)``: a batch's
results file as a hostile server may serve it, read back through the real SDKs (Anthropic's results, OpenAI's
output file for Chat Completions and Responses) from the fake's batch API with its ``tamper`` hook. Every row ends
with an answer or an error (never a crash, never lost work), and no key reaches the frame, the cache or a session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.errors import ProviderError
from brute_nb.map import batch as batches
from brute_nb.providers import batch_results
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.redact import KEY_VARIABLES
from brute_nb.testing import FakeProvider
from brute_nb.testing.hostile import live_parts
from tests.map.conftest import respond
from tests.security.hostile import KEYS, REPLIES, Case
from tests.security.hostile.replies import ANSWERED, KEY_HERE, LOST, MARKUP, UNREADABLE

KEY = "sk-hostile-batch-5f1e9a77c0"
PROVIDERS = {"anthropic": AnthropicMessages, "openai_chat": OpenAIChat, "openai_responses": OpenAIResponses}
MODELS = {"anthropic": "claude-sonnet-4-5", "openai_chat": "gpt-4.1", "openai_responses": "gpt-4.1"}


def cases(tag: str) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in REPLIES if tag in c.tags]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeProvider]:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # a key redaction knows, as a user's would be
    monkeypatch.setattr(batches, "FIRST_WAIT", 0.01)
    monkeypatch.setattr(batch_results, "MAX_LINE", 4096)  # so a "huge" line is cheap to make
    from brute_nb.notebook import registry

    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(tmp_path / "demo.ipynb"))
    monkeypatch.setattr(registry, "_registry", None)
    with FakeProvider(responder=respond, api_key=KEY) as fake:
        yield fake


def run(server: FakeProvider, api: str) -> pd.DataFrame:
    url = server.base_url if api == "anthropic" else server.openai_base_url
    provider = PROVIDERS[api](MODELS[api], base_url=url, api_key=KEY, max_retries=0)
    df = pd.DataFrame({"text": ["one", "two"]}, index=["r0", "r1"])
    return brute_nb.map("Say {text}", df, model=provider, batch=True, progress=False)


@pytest.mark.parametrize("api", sorted(PROVIDERS))
@pytest.mark.parametrize("case", cases("batch"))
def test_a_hostile_results_file_costs_each_bad_line_its_own_row_only(case: Case, api: str, server: FakeProvider,
                                                                      tmp_path: Path) -> None:
    tamper = case.data["tamper"]
    server.batches.tamper = lambda kind, lines: tamper(kind, lines).replace(KEY_HERE.encode(), KEY.encode())
    out = run(server, api)
    for row, expected in zip(("r0", "r1"), case.data["rows"], strict=True):
        reply, error = out.loc[row, "reply"], out.loc[row, "error"]
        if expected == ANSWERED:
            assert reply == f"echo: Say {'one' if row == 'r0' else 'two'}" and pd.isna(error), case.expect
        elif expected == LOST:
            assert pd.isna(reply) and "without an answer" in error and "run the cell again" in error, case.expect
        elif expected == UNREADABLE:
            assert pd.isna(reply) and "run the cell again" in error, case.expect
            assert "could not be read" in error or "not a reply" in error, case.expect
        elif expected == "redacted":
            assert MARKUP in reply and "REDACTED" in reply, case.expect
        else:
            assert MARKUP in error and "REDACTED" in error and "refused the request" in error, case.expect
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*.json*"))
    assert KEY not in out.to_json() and KEY not in written, case.expect
    assert live_parts(out.to_html()) == [], case.expect
    if LOST in case.data["rows"] or UNREADABLE in case.data["rows"]:
        server.batches.tamper = None  # the rows left without an answer go again; the answered ones are cached
        again = run(server, api)
        assert list(again["reply"].str.startswith("echo: Say")) == [True, True]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in KEYS if "results" in c.tags])
def test_a_results_url_on_another_host_never_gets_the_key(case: Case, server: FakeProvider) -> None:
    with FakeProvider(api_key=None) as elsewhere:
        server.batches.results_host = elsewhere.base_url
        with pytest.raises(ProviderError) as info:  # the other host, without a key, refuses
            run(server, case.data["api"])
        assert info.value.status == 401
        assert elsewhere.batches.requests, "the SDK followed the results_url"
        assert all(KEY not in json.dumps(r["headers"]) for r in elsewhere.batches.requests), case.expect
    assert KEY not in str(info.value)
