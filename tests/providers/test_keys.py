"""Stored keys (issue 41): ``%brute keys set``, ``brute-nb keys``, the file's modes, the environment winning, the
key following its host, and every stored key redacted like the environment's."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb import agent, cli
from brute_nb.errors import NoModelError, ProviderNotConfiguredError
from brute_nb.notebook.session import environment_fingerprint
from brute_nb.providers import AnthropicMessages, OpenAIChat, auto, keys
from brute_nb.providers.catalog import keys_command
from brute_nb.redact import KEY_VARIABLES, redact
from brute_nb.testing import FakeProvider
from tests.ipython_shell import loaded_shell

KEY = "sk-ant-stored-7d41c0ffee"


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (*KEY_VARIABLES, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "BRUTE_MODEL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "config" / "brute_nb"
    monkeypatch.setenv("BRUTE_NB_CONFIG_DIR", str(folder))
    return folder


def answer(text: str) -> Any:
    return lambda prompt: text


def test_a_set_key_is_saved_readable_by_the_user_only(config: Path) -> None:
    old = os.umask(0o022)  # what most shells have: a new file would be readable by everyone
    try:
        said = keys_command(["set", "anthropic"], answer(f"  {KEY}\n"))
    finally:
        os.umask(old)
    file = config / "keys.json"
    assert str(file) in said and KEY not in said
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    assert json.loads(file.read_text())["anthropic"] == KEY


def test_a_loose_file_is_made_private_again_when_saved(config: Path) -> None:
    keys.save("openai", "sk-openai-stored-0001")
    os.chmod(config / "keys.json", 0o644)
    assert "chmod 600" in keys_command([], answer(""))
    keys.save("anthropic", KEY)
    assert stat.S_IMODE((config / "keys.json").stat().st_mode) == 0o600
    assert set(keys.load()) == {"openai", "anthropic"}  # nothing saved before is lost


def test_the_listing_says_where_each_key_comes_from_and_never_a_value(monkeypatch: pytest.MonkeyPatch) -> None:
    keys.save("anthropic", KEY)
    keys.save("gemini", "AIza-stored-gemini-0001")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai-0001")
    shown = keys_command([], answer(""))
    lines = {line.split()[0]: line for line in shown.splitlines()[1:]}
    assert "saved" in lines["anthropic"] and "claude-" in lines["anthropic"]
    assert "environment (OPENAI_API_KEY)" in lines["openai"] and "gpt-" in lines["openai"]
    assert "saved" in lines["gemini"] and "no key" in lines["mistral"]
    assert KEY not in shown and "sk-env-openai-0001" not in shown and "AIza-stored" not in shown


def test_bad_words_and_keys_are_refused_clearly() -> None:
    with pytest.raises(keys.KeyFileError, match="unknown provider 'anthropc'"):
        keys_command(["set", "anthropc"], answer(KEY))
    with pytest.raises(keys.KeyFileError, match="usage"):
        keys_command(["set"], answer(KEY))
    with pytest.raises(keys.KeyFileError, match="no key given"):
        keys_command(["set", "openai"], answer("   "))
    with pytest.raises(keys.KeyFileError, match="control characters"):
        keys_command(["set", "openai"], answer("sk-one\r\nX-Evil: 1"))
    assert not keys.path().exists()


def test_a_stored_key_is_used_when_the_environment_has_none() -> None:
    with pytest.raises(NoModelError):
        auto()
    keys.save("anthropic", KEY)
    provider = auto()
    assert isinstance(provider, AnthropicMessages)
    assert provider.host_key() == KEY


def test_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    keys.save("anthropic", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai-0002")
    assert isinstance(auto(), OpenAIChat)  # a key in the environment is chosen before a saved one
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-0002")
    provider = auto("anthropic:claude-sonnet-5-5")
    assert provider.host_key() is None  # the SDK reads its own variable: the saved key is not used


def test_a_stored_key_never_goes_to_another_host(monkeypatch: pytest.MonkeyPatch) -> None:
    keys.save("anthropic", KEY)
    with FakeProvider(["never sent"], api_key=None) as elsewhere:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", elsewhere.base_url)
        with pytest.raises(ProviderNotConfiguredError) as info:
            agent().run(auto(max_retries=0)).start("hi")
        with pytest.raises(ProviderNotConfiguredError):
            agent().run(auto("anthropic:claude-x", base_url=elsewhere.base_url, max_retries=0)).start("hi")
        assert elsewhere.received == 0
    assert "saved anthropic key is not sent there" in str(info.value) and KEY not in str(info.value)


def test_every_stored_key_is_redacted_once_read_used_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    unused = "sk-or-stored-unused-4411"
    keys.save("openrouter", unused)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-0003")
    auto()  # builds Anthropic's provider: the file is read, so its other keys are hidden too
    assert unused not in redact(f"cat keys.json -> {unused}")


def test_a_saved_key_changes_the_sessions_fingerprint() -> None:
    before = environment_fingerprint()
    keys.save("anthropic", KEY)
    assert environment_fingerprint() != before  # the session's provider is rebuilt: no restart


def test_a_hostile_keys_file_is_a_clear_error(config: Path) -> None:
    config.mkdir(parents=True)
    for text, words in (("{not json", "not valid JSON"), ('["sk-a"]', "one JSON object"),
                        ('{"anthropic": 5}', "one JSON object"), ("\udcff", "not valid JSON")):
        (config / "keys.json").write_bytes(text.encode("utf-8", "surrogateescape"))
        with pytest.raises(keys.KeyFileError, match=words) as info:
            auto()
        assert str(config / "keys.json") in str(info.value) and "fix or remove" in str(info.value)
        with pytest.raises(keys.KeyFileError):
            keys.save("openai", "sk-never-written-0004")  # never overwrites what it could not read
        assert "sk-never-written" not in (config / "keys.json").read_bytes().decode(errors="replace")


def test_the_console_command(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("getpass.getpass", answer(KEY))
    assert cli.main(["keys", "set", "anthropic"]) == 0
    assert cli.main(["keys"]) == 0
    assert cli.main(["keys", "set", "nobody"]) == 1
    assert cli.main([]) == 2
    out, err = capsys.readouterr()
    assert "saved the anthropic key" in out and KEY not in out + err
    assert "unknown provider 'nobody'" in err and "usage: brute-nb keys" in err
    assert keys.stored("anthropic") == KEY


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    with loaded_shell(tmp_path) as loaded:
        yield loaded


def test_the_magic_asks_with_a_hidden_prompt(shell: Any, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[str] = []
    monkeypatch.setattr("getpass.getpass", lambda prompt: asked.append(prompt) or KEY)
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: True)
    shell.run_line_magic("brute", "keys set anthropic")
    shell.run_line_magic("brute", "keys")
    out = capsys.readouterr().out
    assert asked and "hidden" in asked[0] and KEY not in out and "saved" in out
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: False)
    with pytest.raises(UsageError, match="brute-nb keys set openai in a terminal"):
        shell.run_line_magic("brute", "keys set openai")
