"""auto(): the provider the environment asks for, or an error naming every way to configure one."""

from __future__ import annotations

from pathlib import Path

import pytest

from brute_nb import ProviderNotConfiguredError
from brute_nb.providers import DEFAULT_MODELS, AnthropicMessages, OpenAIChat, OpenAIResponses, auto
from brute_nb.providers.auto import ollama_base_url

VARIABLES = ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "OLLAMA_MODEL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_nothing_configured_names_every_option() -> None:
    with pytest.raises(ProviderNotConfiguredError) as info:
        auto()
    for word in ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "replay"):
        assert word in str(info.value)


def test_brute_model_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("BRUTE_MODEL", "openai:gpt-mini")
    p = auto()
    assert isinstance(p, OpenAIChat) and p.model == "gpt-mini"
    assert isinstance(auto("anthropic:claude-x"), AnthropicMessages)
    assert isinstance(auto("openai-responses:gpt-r"), OpenAIResponses)


def test_order_anthropic_then_openai_then_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")
    p = auto()
    assert isinstance(p, OpenAIChat) and p.base_url == "http://gpu-box:11434/v1"
    assert p.model == DEFAULT_MODELS["ollama"]
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    p = auto()
    assert p.model == DEFAULT_MODELS["openai"] and p.base_url == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    p = auto()
    assert isinstance(p, AnthropicMessages) and p.model == DEFAULT_MODELS["anthropic"]
    assert auto("claude-other").model == "claude-other"


def test_ollama_host_forms() -> None:
    assert ollama_base_url("localhost") == "http://localhost:11434/v1"
    assert ollama_base_url("https://h:8443/") == "https://h:8443/v1"


def test_unknown_provider_prefix_is_not_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    p = auto("some-org:model")  # a colon inside a model name (Ollama tags) is not a provider
    assert isinstance(p, OpenAIChat) and p.model == "some-org:model"


def test_replay_needs_no_variable(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    cassette.write_text('{"method":"POST","path":"/v1/messages","request":{"model":"claude-rec"},"status":200,'
                        '"headers":{},"body":"{}"}\n')
    p = auto(replay=str(cassette))
    assert isinstance(p, AnthropicMessages) and p.model == "claude-rec" and p.replaying
