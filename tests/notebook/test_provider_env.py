"""A provider built from the environment follows it: a key set after a 401 is used by the next turn (issue 15,
item 12), through the real openai client against the fake server, which refuses a wrong key as the API does."""

from __future__ import annotations

from pathlib import Path

import pytest

from brute_nb.errors import ProviderError
from brute_nb.event_loop import run_sync
from brute_nb.message import role_of
from brute_nb.notebook.session import NotebookAgent, environment_fingerprint
from brute_nb.notebook.settings import Settings
from brute_nb.testing import FakeProvider


def test_a_key_set_after_a_401_is_used_by_the_next_turn(tmp_path: Path, fake: FakeProvider,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(model="openai:gpt-fake", root=tmp_path))
    fake.add("hello")
    with pytest.raises(ProviderError) as err:
        run_sync(lambda: nb.aask("hi"))
    assert err.value.status == 401
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key or "")
    env = run_sync(lambda: nb.aask("hi again"))
    assert [m.content for m in env["messages"] if role_of(m) == "assistant"][-1] == "hello"
    assert fake.requests[-1]["headers"]["authorization"] == f"Bearer {fake.api_key}"


def test_the_fingerprint_follows_provider_variables_only_and_holds_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-first")
    first = environment_fingerprint()
    monkeypatch.setenv("UNRELATED_SETTING", "x")
    assert environment_fingerprint() == first
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-second")
    assert environment_fingerprint() != first
    assert "sk-ant" not in environment_fingerprint()


def test_a_set_provider_or_a_replay_is_kept_whatever_the_environment(nb: NotebookAgent,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    agent = nb.agent
    monkeypatch.setenv("OPENAI_API_KEY", "sk-changed")
    assert nb.agent is agent


@pytest.mark.parametrize(("api_key", "named"), [
    (None, "OPENAI_API_KEY"),  # the SDK's own variable, at the provider's host (here: OPENAI_BASE_URL's)
    ("env:TEAM_PROXY_KEY", "TEAM_PROXY_KEY"),  # a variable the user named
    ("sk-typed-wrong", "api_key setting"),  # typed into %brute config api_key=... (or api_key= from Python)
])
def test_a_401_names_where_the_key_came_from(api_key: str | None, named: str, tmp_path: Path, fake: FakeProvider,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 §2 item 10: a refused key is the user's to fix, not a model's; the error says which variable or
    setting to change."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    monkeypatch.setenv("TEAM_PROXY_KEY", "sk-wrong-too")
    settings = Settings(model="openai:gpt-fake", root=tmp_path)
    if api_key is not None:
        settings = settings.updated(api_key=api_key, base_url=fake.openai_base_url)
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=settings)
    fake.add("hello")
    with pytest.raises(ProviderError) as err:
        run_sync(lambda: nb.aask("hi"))
    assert err.value.status == 401
    assert named in str(err.value), str(err.value)
    assert "sk-wrong" not in str(err.value) and "sk-typed" not in str(err.value)
