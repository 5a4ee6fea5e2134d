"""auto(): the provider the environment asks for, or an error naming every way to configure one."""

from __future__ import annotations

from pathlib import Path

import pytest

from brute_nb import ProviderNotConfiguredError
from brute_nb.providers import DEFAULT_MODELS, AnthropicMessages, OpenAIChat, OpenAIResponses, auto
from brute_nb.providers.auto import ollama_base_url
from tests.loopback import free_port

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


def test_nothing_configured_gives_the_magic_forms_too() -> None:
    with pytest.raises(ProviderNotConfiguredError) as info:
        auto()
    assert "%%brute --replay" in str(info.value) and "%%brute -m PROVIDER:MODEL" in str(info.value)


def test_ollama_not_running_names_ollama_the_url_and_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb import ProviderError, agent

    port = free_port()  # closed again: nothing listens there
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    bot = agent().run(auto("ollama:qwen3", max_retries=0))
    with pytest.raises(ProviderError) as info:
        bot.start("hi")
    text = str(info.value)
    assert text.startswith(f"could not reach Ollama at http://127.0.0.1:{port}/v1"), text
    assert "OLLAMA_HOST" in text and "openai" not in text.split(":")[0]


def test_a_missing_key_names_the_variable_and_the_notebook_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb import agent

    bot = agent().run(auto("openai:gpt-4.1"))
    with pytest.raises(ProviderNotConfiguredError) as info:
        bot.start("hi")
    text = str(info.value)
    assert "os.environ['OPENAI_API_KEY']" in text and "%brute config model=" in text
    assert "%%brute --replay" in text
    assert text.index("OPENAI_API_KEY") < text.index("api_key=")  # the variable first: a magic cannot pass api_key
