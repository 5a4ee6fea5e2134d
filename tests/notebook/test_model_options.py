"""Models from the magic: ``-o KEY=VALUE`` checked against the SDK, ``--base-url``, hosted keys found in the
environment, ``%brute alias`` saved in the XDG config, and ``%brute models`` (through the real magic code, the
fake provider behind the real SDK)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb.errors import ProviderNotConfiguredError
from brute_nb.providers import auto
from brute_nb.providers.compatible import ENDPOINTS, CompatibleChat
from brute_nb.providers.options import OptionError, check
from brute_nb.testing import FakeProvider
from tests.ipython_shell import loaded_shell
from tests.loopback import Handler, serve

KEYS = ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST",
        *(k for e in ENDPOINTS.values() for k in e.key_variables))


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    with loaded_shell(tmp_path) as loaded:
        yield loaded


def test_options_are_checked_against_the_sdk_signature() -> None:
    check("openai", {"temperature": 0.2, "reasoning_effort": "low"})
    check("anthropic", {"thinking": {"type": "enabled", "budget_tokens": 2000}, "max_tokens": 4000})
    with pytest.raises(OptionError, match=r"anthropic's messages\.create takes no 'temperature'.*takes: .*thinking"):
        check("anthropic", {"temperature": 0.2})
    with pytest.raises(OptionError, match="did you mean temperature"):
        check("openai", {"temperture": 1})
    with pytest.raises(OptionError, match="messages is set by brute_nb itself"):
        check("gemini", {"messages": []})


def test_every_built_in_provider_but_llm_has_its_options_checked() -> None:
    """Which kinds are checked comes from the one table of built-ins (plugins.BUILTINS), not a copy of it."""
    from brute_nb import plugins
    from brute_nb.providers.auto import build

    kinds = [k for k in plugins.builtin(plugins.PROVIDERS) if k != "llm"]
    assert {"anthropic", "openai", "openai-responses", "ollama", "gemini"} <= set(kinds)
    for kind in kinds:
        with pytest.raises(OptionError, match="takes no 'temperture'"):
            build(kind, "m", temperture=1)


def test_option_and_base_url_reach_the_request(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeProvider(["fine"]) as fake:
        monkeypatch.setenv("LOCAL_SERVER_KEY", fake.api_key)  # a key given for that server, by the variable's name
        shell.run_cell_magic("brute", f"-m openai:local-model --base-url {fake.openai_base_url} -o temperature=0.25 "
                                      "-o api_key=env:LOCAL_SERVER_KEY "
                                      "-o 'stop=[\"END\"]'", "hello")  # quoted as in a shell: options split like one
        sent = fake.requests[-1]["json"]
    assert (sent["model"], sent["temperature"], sent["stop"]) == ("local-model", 0.25, ["END"])


def test_an_unknown_option_is_a_usage_error_before_any_request(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(UsageError, match="takes no 'temperature'"):
        shell.run_cell_magic("brute", "-m anthropic:claude-x -o temperature=0.2", "hello")
    with pytest.raises(UsageError, match="-o takes KEY=VALUE"):
        shell.run_cell_magic("brute", "-o temperature", "hello")


def test_hosted_keys_are_found_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderNotConfiguredError) as info:
        auto()
    for word in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY",
                 "--base-url"):
        assert word in str(info.value)
    monkeypatch.setenv("MISTRAL_API_KEY", "m")
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    provider = auto()
    assert isinstance(provider, CompatibleChat) and provider.label == "gemini:gemini-2.5-flash"
    assert (provider.base_url, provider.host_key()) == (ENDPOINTS["gemini"].base_url, "g")
    other = auto("mistral:mistral-small-latest")
    assert other.base_url == "https://api.mistral.ai/v1" and other.host_key() == "m"


def test_aliases_are_saved_in_the_xdg_config_and_used_by_m(shell: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("brute", "alias fast openai:gpt-fast")
    saved = tmp_path / "config" / "brute_nb" / "aliases.json"
    assert json.loads(saved.read_text()) == {"fast": "openai:gpt-fast"}
    with pytest.raises(UsageError, match="PROVIDER:MODEL"):
        shell.run_line_magic("brute", "alias typo nope:x")
    with FakeProvider(["hi"]) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        shell.run_cell_magic("brute", "-m fast", "hello")
        assert fake.requests[-1]["json"]["model"] == "gpt-fast"
    capsys.readouterr()
    shell.run_line_magic("brute", "alias")
    assert "fast             openai:gpt-fast" in capsys.readouterr().out
    saved.write_text("{broken")
    with pytest.raises(UsageError, match=r"aliases\.json:1: not valid JSON"):
        shell.run_line_magic("brute", "alias other openai:x")
    assert saved.read_text() == "{broken"  # never overwritten with less


class Models(Handler):
    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [
            {"id": m, "object": "model", "created": 0, "owned_by": "me"} for m in ("zeta-1", "alpha-2")]}).encode()
        self.send(200 if self.path.endswith("/models") else 404, body, {"content-type": "application/json"})


def test_models_lists_providers_aliases_and_the_endpoint(shell: Any, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with serve(Models) as server:
        monkeypatch.setenv("DEEPSEEK_API_KEY", "d")
        shell.run_line_magic("brute", "alias fast openai:gpt-fast")
        url = f"{server.url}/v1"
        shell.run_line_magic("brute", f"config base_url={url} model=openai:zeta-1")
        capsys.readouterr()
        shell.run_line_magic("brute", "models")
        out = capsys.readouterr().out
    assert re.search(r"^  deepseek +environment \(DEEPSEEK_API_KEY\) +deepseek-chat$", out, re.M)
    assert "fast             openai:gpt-fast" in out
    assert "models at openai:zeta-1 (2):\n  alpha-2\n  zeta-1" in out
    shell.run_line_magic("brute", "config base_url=http://127.0.0.1:9/v1")
    capsys.readouterr()
    shell.run_line_magic("brute", "models")
    assert "cannot list them" in capsys.readouterr().out


def test_a_key_given_for_a_base_url_goes_no_further_than_it(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key given with ``base_url`` is that server's: once the base URL is cleared (or changed) without a new key,
    the next turn goes to the provider's own host with the key from the environment, not the local server's.
    Found by the model of a notebook user (tests/stateful)."""
    local_key, env_key = "sk-local-server-0123456789", "sk-env-openai-0123456789"
    with FakeProvider(["local answer"], api_key=local_key) as local, FakeProvider(["hosted answer"],
                                                                                  api_key=env_key) as hosted:
        monkeypatch.setenv("OPENAI_API_KEY", env_key)
        monkeypatch.setenv("OPENAI_BASE_URL", hosted.openai_base_url)
        shell.run_line_magic("brute", f"config model=openai:local-1 base_url={local.openai_base_url} "
                                      f"api_key={local_key}")
        shell.run_cell_magic("brute", "", "hi")
        shell.run_line_magic("brute", "config base_url=none")
        shell.run_cell_magic("brute", "", "and now on the hosted one?")
    assert [r["headers"]["authorization"] for r in local.requests + hosted.requests] == [
        f"Bearer {local_key}", f"Bearer {env_key}"]


def test_a_base_url_belongs_to_its_provider_and_can_be_cleared(shell: Any, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook.registry import registry

    with FakeProvider(["local answer"], api_key=None) as local, FakeProvider(["hosted answer"]) as hosted:
        shell.run_line_magic("brute", f"config model=openai:local-1 base_url={local.openai_base_url} api_key=none")
        shell.run_cell_magic("brute", "", "hi")
        assert local.requests[-1]["headers"]["authorization"] == "Bearer none"
        monkeypatch.setenv("ANTHROPIC_API_KEY", hosted.api_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", hosted.base_url)
        shell.run_cell_magic("brute", "-m anthropic:claude-x", "and now?")  # the base URL stays with openai
        assert (local.received, hosted.received) == (1, 1)
        settings = registry().current().settings
        assert (settings.base_url, settings.api_key) == (None, None)  # back to their defaults
    shell.run_line_magic("brute", "config api_key=sk-typed-here-0123456789")
    capsys.readouterr()
    shell.run_line_magic("brute", "config")
    assert "api_key:        (set, not shown)" in capsys.readouterr().out
    shell.run_line_magic("brute", "config base_url=http://127.0.0.1:9/v1")
    assert registry().current().settings.base_url == "http://127.0.0.1:9/v1"
    shell.run_line_magic("brute", "config base_url=none")  # cleared, not the URL "none"
    assert registry().current().settings.base_url is None
    capsys.readouterr()
    shell.run_line_magic("brute", "config")
    assert "\nbase_url:" not in capsys.readouterr().out
    with pytest.raises(UsageError, match="not an http"):
        shell.run_line_magic("brute", "config base_url=ftp://example.com")


def test_options_belong_to_their_provider_and_can_be_cleared(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.notebook.registry import registry

    with FakeProvider(["openai answer", "anthropic answer", "plain answer"]) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        shell.run_cell_magic("brute", "-m openai:gpt-x -o temperature=0.2", "hi")
        assert fake.requests[-1]["json"]["temperature"] == 0.2
        # anthropic's messages.create takes no temperature: the option stays with openai, the switch goes through
        shell.run_cell_magic("brute", "-m anthropic:claude-x", "and now?")
        assert fake.requests[-1]["path"].endswith("/messages") and "temperature" not in fake.requests[-1]["json"]
        assert registry().current().settings.options == {}
        shell.run_line_magic("brute", "config model=openai:gpt-x options=temperature=0.3")
        assert registry().current().settings.options == {"temperature": 0.3}
        shell.run_line_magic("brute", "config options=none")  # cleared, as base_url=none clears a base URL
        assert registry().current().settings.options == {}
        shell.run_line_magic("brute", "config options=temperature=0.3")
        shell.run_cell_magic("brute", "-o none", "plain")
        assert "temperature" not in fake.requests[-1]["json"]


def test_reset_starts_the_conversation_afresh_and_keeps_the_settings(shell: Any, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``%brute reset`` (and ``--new``) starts the session's conversation afresh; its settings, options included,
    are the session's until changed (``--new -o ...`` in one cell gives both), and reset says so and how to put
    them back. Clearing the model, base URL and key at a reset would send the next prompt to the public host."""
    with FakeProvider(["one", "two", "three"]) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        shell.run_cell_magic("brute", "-m openai:gpt-x -o temperature=0.2", "hi")
        capsys.readouterr()
        shell.run_line_magic("brute", "reset")
        said = capsys.readouterr().out
        assert "starts afresh" in said and "settings are kept" in said and "KEY=default" in said, said
        shell.run_cell_magic("brute", "", "again")
        body = fake.requests[-1]["json"]
        assert body["temperature"] == 0.2 and [m["role"] for m in body["messages"]][1:] == ["user"]
        shell.run_cell_magic("brute", "--new -o temperature=0.3", "anew")
        body = fake.requests[-1]["json"]
        assert body["temperature"] == 0.3 and [m["role"] for m in body["messages"]][1:] == ["user"]


def test_a_second_session_never_changes_host_silently(shell: Any, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two loopback servers: "local" (the base URL set for one session, with its own key) and "public" (where the
    environment's key and base URL point, standing in for the provider's public host)."""
    local_key = "sk-local-server-key-0123456789"
    with FakeProvider(["local 1", "local 2", "local 3"], api_key=local_key) as local, \
            FakeProvider(["public 1"]) as public:
        monkeypatch.setenv("OPENAI_API_KEY", public.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", public.openai_base_url)
        capsys.readouterr()
        shell.run_line_magic("brute", f"config model=openai:local-1 base_url={local.openai_base_url} "
                                      f"api_key={local_key}")
        said = capsys.readouterr().out
        assert said.startswith("these settings are session default's"), said  # where they apply, when set
        shell.run_cell_magic("brute", "", "hi")
        shell.run_cell_magic("brute", "-s other", "hello from another session")
        assert local.received == 2 and public.received == 0  # the new session starts from the settings in use
        assert "hello from another session" in json.dumps(local.requests[-1]["json"])
        capsys.readouterr()
        shell.run_cell_magic("brute", "-s solo --base-url none", "the environment's host, by choice")
        assert public.received == 1
        assert "session solo sends to " + public.base_url in capsys.readouterr().out
        shell.run_cell_magic("brute", "-s other", "back again")
        out = capsys.readouterr().out
        assert f"session other sends to {local.base_url} (session solo sent to {public.base_url})" in out
        keys = ({r["headers"]["authorization"] for r in local.requests},
                {r["headers"]["authorization"] for r in public.requests})
    assert keys == ({f"Bearer {local_key}"}, {f"Bearer {public.api_key}"})  # each key went to its own host only


def test_the_host_line_shows_in_every_front_end(shell: Any, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The line saying a session's turn goes to another host than the last turn did showed in ``%%brute`` cells
    only: a turn from ``brute_nb.current().ask()`` or the chat panel changed host silently. The session says it
    at the start of every turn, and each front end shows it as it shows any notice."""
    import brute_nb
    from brute_nb.notebook.front.widget import ChatWidget
    from brute_nb.notebook.registry import registry

    local_key = "sk-local-server-key-0123456789"
    with FakeProvider(["local 1", "local 2"], api_key=local_key) as local, FakeProvider(["public 1"]) as public:
        monkeypatch.setenv("OPENAI_API_KEY", public.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", public.openai_base_url)
        shell.run_line_magic("brute", f"config model=openai:local-1 base_url={local.openai_base_url} "
                                      f"api_key={local_key}")
        shell.run_cell_magic("brute", "--quiet", "hi")
        shell.run_line_magic("brute", "use solo")
        brute_nb.configure(base_url="none")
        capsys.readouterr()
        assert brute_nb.current().ask("from Python") == "public 1"
        assert f"session solo sends to {public.base_url} (session default sent to {local.base_url})" \
            in capsys.readouterr().out
        chat = ChatWidget(registry().get("default"))
        chat.input.value = "from the panel"
        chat.send_button.click()
        assert chat.wait_idle(60)
        assert f"session default sends to {local.base_url} (session solo sent to {public.base_url})" \
            in chat.transcript_html
        assert (local.received, public.received) == (2, 1)
