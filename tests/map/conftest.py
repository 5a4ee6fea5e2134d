"""Map fixtures: one loopback FakeProvider for the module (a Dask cluster's workers read its address and key from
their environment at start), replies computed from each request (rows run concurrently, in no fixed order), and a
fresh notebook location and kernel registry per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brute_nb.testing import FakeProvider, Fault, call, reply

MODEL = "anthropic:claude-fake"


def prompt_of(body: dict[str, Any]) -> str:
    """The row's prompt: the first user message's text (Chat and Anthropic ``messages``, Responses ``input``)."""
    turns = body.get("messages", body.get("input"))
    if isinstance(turns, str):
        return turns
    first = next(m for m in turns if m.get("role") == "user")
    content = first["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if "text" in b)


def answers_tool(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]["content"]
    return isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)


def respond(body: dict[str, Any]) -> Any:
    """``FAIL`` in a prompt is a refused request; ``WRITE`` asks for the write tool once; ``JSON`` answers with an
    object for a schema (``BAD`` one that does not validate); anything else is echoed."""
    text = prompt_of(body)
    if "FAIL" in text:
        return Fault("server_error", status=400, message=f"this row is refused: {text.split()[-1]}")
    if "WRITE" in text:
        if answers_tool(body):
            return "wrote it"
        return reply("writing", call("write", {"file_path": "out.txt", "content": text.split()[-1]}))
    if "JSON" in text:
        word = text.split("\n")[0].split()[-1]
        return '{"label": "x"}' if word == "BAD" else f'{{"label": "{word}", "length": {len(word)}}}'
    return "echo: " + text


def paid(fake: FakeProvider) -> list[str]:
    """The prompts of requests that got an answer (a 429 is not paid for)."""
    return [prompt_of(r["json"]) for r in fake.requests if not r.get("limited")]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(responder=respond) as server:
        saved = {k: os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
        os.environ["ANTHROPIC_API_KEY"] = server.api_key or ""
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        try:
            yield server
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.fixture
def server(fake: FakeProvider) -> Iterator[FakeProvider]:
    """The module's server with its request log cleared and no rate limit (a test sets its own)."""
    with fake._lock:
        fake.requests.clear()
        fake.counted.clear()
        fake.rate_limit = None
    yield fake
    fake.rate_limit = None


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A notebook path in tmp_path and a fresh registry, so results land in ``tmp_path/demo.brute/map``."""
    from brute_nb.notebook import registry

    path = tmp_path / "demo.ipynb"
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(path))
    monkeypatch.setattr(registry, "_registry", None)
    return path
