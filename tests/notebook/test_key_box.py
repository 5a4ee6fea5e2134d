"""The first ``%%brute`` with no model (issue 41): one short line saying what to type, and in a notebook front end
a box to paste a key, after which the same cell's prompt runs (no restart). The box is driven as a person would:
paste, click; the turn goes to the loopback fake server through the real SDK."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from notebook_helpers import WAIT

import brute_nb
from brute_nb.notebook.front import key_box
from brute_nb.providers import keys
from brute_nb.redact import KEY_VARIABLES
from brute_nb.testing import FakeProvider
from tests.ipython_shell import loaded_shell

KEY = "sk-ant-pasted-41-0badc0de"


@pytest.fixture(autouse=True)
def no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*KEY_VARIABLES, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "BRUTE_MODEL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BRUTE_NB_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    with loaded_shell(tmp_path) as loaded:
        yield loaded


@pytest.mark.parametrize(("stdin", "line"), [(False, key_box.HEADLESS), (True, key_box.IN_TERMINAL)])
def test_no_model_is_one_line_saying_what_to_type(shell: Any, monkeypatch: pytest.MonkeyPatch, stdin: bool,
                                                  line: str) -> None:
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: stdin)
    with pytest.raises(UsageError) as info:
        shell.run_cell_magic("brute", "", "hello")
    message = str(info.value)
    assert message == line and "\n" not in message and len(message) < 120
    assert "keys set anthropic" in message


def test_brute_fix_with_no_model_is_the_same_line(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: False)
    shell.run_cell("values = [1]\nvalues[3]", store_history=True)
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("brute", "fix")
    assert str(info.value) == key_box.HEADLESS


def test_a_key_pasted_in_the_box_runs_the_same_prompt(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    box = key_box.panel("What is 2 + 2?", "default")
    provider, secret, use, _ = box.children[0].children
    with FakeProvider(["Four."], api_key=KEY) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        secret.value = KEY
        assert provider.value == "anthropic"  # the prefix says whose key it is
        use.click()
        chat = box.children[0]
        assert chat.wait_idle(WAIT)
        assert KEY in str(fake.requests[-1]["headers"])  # the pasted key went, to its provider's host
    assert "Four." in chat.transcript.value
    assert secret.value == "" and not keys.path().exists()  # for this kernel only: nothing saved
    os.environ.pop("ANTHROPIC_API_KEY")  # what use_for_kernel set (monkeypatch would restore it at teardown)


def test_save_keeps_the_key_for_the_next_kernel(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    box = key_box.panel("hi", "default")
    provider, secret, _, save = box.children[0].children
    with FakeProvider(["never sent"], api_key=None) as elsewhere:
        # A saved key goes to OpenAI's own host only: a base URL from the environment gets none, and says so.
        monkeypatch.setenv("OPENAI_BASE_URL", elsewhere.openai_base_url)
        provider.value = "openai"
        secret.value = "  sk-saved-from-the-box-0001 \n"
        save.click()
        chat = box.children[0]
        assert chat.wait_idle(WAIT)
        assert elsewhere.received == 0
    assert keys.stored("openai") == "sk-saved-from-the-box-0001"
    assert chat.nb.name == "default" and "not sent there" in chat.transcript.value + chat.status.value


def test_a_bad_paste_says_so_in_the_box(shell: Any) -> None:
    box = key_box.panel("hi", "default")
    _, secret, use, _ = box.children[0].children
    secret.value = "sk-one two"
    use.click()
    assert "spaces or control characters" in box.children[1].value and secret.value == ""
    assert "OPENAI_API_KEY" not in os.environ


def test_live_with_no_key_says_what_to_type(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``%brute live`` leaves a recording; with no key it says what to type, as the first cell does."""
    monkeypatch.setenv("BRUTE_LIVE", "0")  # restored after: the magic sets it for the demos' setup cells
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: False)
    nb = brute_nb.current()
    nb.settings = nb.settings.updated(replay=Path(__file__))
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("brute", "live")
    assert str(info.value) == key_box.HEADLESS
    assert nb.settings.replay is None and os.environ["BRUTE_LIVE"] == "1"


def test_models_says_which_providers_have_a_key_and_the_model_each_would_use(
        shell: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    keys.save("anthropic", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai-models-01")
    with FakeProvider([], api_key=None) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)  # listing asks nothing of the internet
        shell.run_line_magic("brute", "config model=anthropic:claude-opus-4-1")
        shell.run_line_magic("brute", "models")
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "saved" in lines["anthropic"] and "claude-sonnet-5-5" in lines["anthropic"]
    assert "environment (OPENAI_API_KEY)" in lines["openai"] and "gpt-5.5" in lines["openai"]
    assert "no key" in lines["mistral"]
    assert "claude-opus-4-1 is not in the installed anthropic SDK's model list" in out
    assert KEY not in out and "sk-env-openai-models-01" not in out


def test_the_chat_with_no_key_offers_the_same_box_and_then_works(shell: Any) -> None:
    """``brute_nb.chat()`` with no key: the box the first ``%%brute`` shows, inside the panel; a prompt typed
    meanwhile waits for the key, then goes to the model, in the same panel (no restart, no long error)."""
    chat = brute_nb.chat()
    entry = chat.key_entry
    assert entry is not None and entry in chat.children
    secret, use = entry.secret, entry.use
    chat.send("What is 2 + 2?")
    assert chat.wait_idle(WAIT) and "waiting for a key" in chat.status_html
    with FakeProvider(["Four."], api_key=KEY) as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.base_url  # the no_keys fixture's monkeypatch restores it
        secret.value = KEY
        use.click()
        assert chat.key_entry is None and entry not in chat.children and secret.value == ""
        assert chat.wait_idle(WAIT)
        assert fake.received == 1 and KEY in str(fake.requests[-1]["headers"])
    assert "Four." in chat.transcript_html and "What is 2 + 2?" in chat.transcript_html
    assert "no model provider is configured" not in chat.transcript_html + chat.status_html
    os.environ.pop("ANTHROPIC_API_KEY")


def test_a_chat_whose_key_went_away_holds_the_prompt_and_offers_the_box(shell: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-there-when-opened-01")
    chat = brute_nb.chat()
    assert chat.key_entry is None
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    chat.send("still there?")
    assert chat.wait_idle(WAIT)
    assert chat.key_entry is not None and chat.key_entry in chat.children
    assert "waiting for a key" in chat.status_html and "still there?" not in chat.transcript_html
