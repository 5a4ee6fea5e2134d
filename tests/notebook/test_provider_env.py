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
