"""The hostile keys table (``hostile.keys``) against every entry point that takes a key or sends one on: the
provider constructors through ``auto`` (the SDK clients, real), the ``%%brute`` options and ``%brute config``,
redirects, and the turn's request, tools and files. Each case uses its own key: the registry of given keys is
process-wide, so one case's key cannot make another pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb import agent
from brute_nb.errors import ProviderError, ProviderNotConfiguredError
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.middleware.turn_context import TurnContext
from brute_nb.providers import auto, keys
from brute_nb.redact import KEY_VARIABLES
from brute_nb.testing import FakeProvider, call, redirect, reply
from brute_nb.tools import FSWrite
from tests.ipython_shell import loaded_shell
from tests.security.hostile import KEYS, Case

BASE_URLS = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "BRUTE_MODEL", "OLLAMA_HOST")
MODELS = {"openai_chat": "openai:gpt-fake", "openai_responses": "openai-responses:gpt-fake",
          "anthropic": "anthropic:claude-fake"}


def cases(tag: str) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in KEYS if tag in c.tags]


def key_for(case: Case) -> str:
    return f"sk-hostile-{case.id}-5f1e9a"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (*KEY_VARIABLES, *BASE_URLS, "BRUTE_NB_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def url_of(fake: FakeProvider, model: str) -> str:
    return fake.base_url if model.startswith("anthropic") else fake.openai_base_url


def endpoint(fake: FakeProvider, api: str) -> str:
    """The URL the SDK posts ``api``'s requests to on ``fake``."""
    return {"openai_chat": fake.openai_base_url + "/chat/completions", "anthropic": fake.base_url + "/v1/messages",
            "openai_responses": fake.openai_base_url + "/responses"}[api]


def carried(fake: FakeProvider, key: str) -> bool:
    """Whether any request the server read carried ``key``, in a header or the body."""
    return any(key in json.dumps(r["headers"]) or key in json.dumps(r["json"]) for r in fake.requests)


@pytest.mark.parametrize("case", cases("host"))
def test_a_key_from_the_environment_never_goes_to_another_host(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    key = key_for(case)
    monkeypatch.setenv(case.data["variable"], key)
    with FakeProvider(["never sent"], api_key=None) as elsewhere:
        provider = auto(case.data["model"], base_url=url_of(elsewhere, case.data["model"]), max_retries=0)
        with pytest.raises(ProviderNotConfiguredError) as info:
            agent().run(provider).start("hi")
        assert elsewhere.received == 0 and not carried(elsewhere, key)
    message = str(info.value)
    assert case.data["variable"] in message and "api_key=" in message and "api_key=none" in message
    assert key not in message


@pytest.mark.parametrize("case", cases("host"))
@pytest.mark.parametrize("route", ["--base-url", "-o base_url=", "%brute config base_url="])
def test_no_magic_route_sends_the_environments_key_elsewhere(case: Case, route: str, shell: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    key = key_for(case)
    monkeypatch.setenv(case.data["variable"], key)
    with FakeProvider(["never sent"], api_key=None) as elsewhere:
        url, model = url_of(elsewhere, case.data["model"]), case.data["model"]
        with pytest.raises((UsageError, ProviderNotConfiguredError)) as info:
            if route == "%brute config base_url=":
                shell.run_line_magic("brute", f"config base_url={url} model={model}")
                shell.run_cell_magic("brute", "", "hi")
            elif route == "--base-url":
                shell.run_cell_magic("brute", f"-m {model} --base-url {url}", "hi")
            else:
                shell.run_cell_magic("brute", f"-m {model} -o base_url={url}", "hi")
        assert elsewhere.received == 0
    assert "api_key" in str(info.value) and key not in str(info.value)


@pytest.mark.parametrize("case", cases("host"))
def test_a_stored_key_never_goes_to_another_host(case: Case) -> None:
    """The host cases with the key saved by ``%brute keys set`` instead of in the environment (issue 41)."""
    key, model = key_for(case) + "-stored", case.data["model"]
    keys.save({"openai-responses": "openai"}.get(model.split(":")[0], model.split(":")[0]), key)
    with FakeProvider(["never sent"], api_key=None) as elsewhere:
        provider = auto(model, base_url=url_of(elsewhere, model), max_retries=0)
        with pytest.raises(ProviderNotConfiguredError) as info:
            agent().run(provider).start("hi")
        assert elsewhere.received == 0 and not carried(elsewhere, key)
    message = str(info.value)
    assert "saved" in message and "api_key=" in message and "api_key=none" in message and key not in message


@pytest.mark.parametrize("case", cases("allowed"))
def test_a_key_goes_where_it_was_given_for(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    key, home_key = key_for(case), key_for(case) + "-home"
    monkeypatch.setenv("OPENAI_API_KEY", home_key)
    with FakeProvider(["hello"], api_key=None) as server:
        how, options = case.data["how"], {"base_url": server.openai_base_url, "max_retries": 0}
        if how == "env_base_url":
            monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
            monkeypatch.setenv("OPENAI_API_KEY", key)
            del options["base_url"]
        elif how == "given":
            options["api_key"] = key
        elif how == "env_name":
            monkeypatch.setenv("MY_SERVER_KEY", key)
            options["api_key"] = "env:MY_SERVER_KEY"
        else:
            options["api_key"] = "none"
        env = agent().run(auto("openai:gpt-fake", **options)).start("hi")
        sent = server.requests[-1]["headers"]["authorization"]
    assert env["messages"][-1].content == "hello"
    assert sent == ("Bearer none" if how == "none" else f"Bearer {key}")
    assert how == "env_base_url" or home_key not in sent


@pytest.mark.parametrize("case", cases("redirect"))
def test_a_redirect_carries_no_key(case: Case) -> None:
    api, key = case.data["api"], key_for(case)
    with FakeProvider(["moved on"], api_key=None) as elsewhere, FakeProvider(api_key=key) as home:
        home.add(redirect(endpoint(elsewhere, api)))
        provider = auto(MODELS[api], base_url=url_of(home, MODELS[api]), api_key=key, max_retries=0)
        with pytest.raises(ProviderError) as info:
            agent().run(provider).start("hi")
        assert home.received == 1 and elsewhere.received == 1  # the SDK followed the redirect
        assert not carried(elsewhere, key)
    assert info.value.status == 401  # the other host, without a key, refused it


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    with loaded_shell(tmp_path) as loaded:
        yield loaded


def session_text(folder: Path) -> str:
    return "".join(p.read_text() for p in folder.rglob("*.jsonl"))


@pytest.mark.parametrize("source", ["environment", "stored"])
@pytest.mark.parametrize("case", cases("redact"))
def test_a_key_never_leaves_in_a_request_a_tool_or_a_file(case: Case, source: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``stored``: the key that must not leave is one saved with ``%brute keys set`` for another provider, never
    used by this turn: reading the file is enough for it to be redacted (issue 41)."""
    where, key = case.data["where"], key_for(case)
    if where == "fix":
        pytest.skip("the magic route: test_fix_sends_no_key")
    auth = key
    if source == "stored":
        keys.save("openrouter", key)
        auth = key + "-auth"
    monkeypatch.setenv("OPENAI_API_KEY", auth)
    root = tmp_path / "ws"
    root.mkdir()

    def leak() -> str:
        return f"the token is {key}"

    script: list[Any] = ["noted"]
    if where == "tool_output":
        script = [reply("", call("leak", {})), "noted"]
    elif where == "tool_arguments":
        script = [reply("", call("write", {"file_path": "notes.txt", "content": f"token={key}"})), "done"]
    with FakeProvider(script, api_key=auth) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        tools: list[Any] = [FSWrite, {"name": "leak", "description": "Leak.", "execute": leak}]
        bot = (agent().use(SessionLog, path=tmp_path / "s.jsonl").use(ToolResultLoop)
               .use(DefaultToolPipeline, tools=tools).use(TurnContext).run(auto("openai:gpt-fake", max_retries=0)))
        extra = {"context": f"In [1]: token = {key!r}"} if where == "context" else {}
        bot.start(f"my token is {key}, keep it" if where == "prompt" else "go", root=str(root), **extra)
        bodies = json.dumps([r["json"] for r in fake.requests])
    assert len(fake.requests) == len(script)
    assert key not in bodies and "REDACTED" in bodies
    assert key not in session_text(tmp_path)
    assert all(key not in p.read_text() for p in root.rglob("*") if p.is_file())
    if where == "tool_arguments":
        assert (root / "notes.txt").read_text().startswith("token=sk-")


def test_fix_sends_no_key(shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = next(c for c in KEYS if c.data.get("where") == "fix")
    key = key_for(case)
    with FakeProvider(["The token is not a number."], api_key=key) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        shell.run_cell(f"token = {key!r}")
        shell.run_cell("token + 1")
        shell.run_line_magic("brute", "fix")
        body = json.dumps(fake.requests[-1]["json"])
    assert "TypeError" in body and "token" in body  # the report went, with the failing line's names
    assert key not in body and "REDACTED" in body
    assert key not in session_text(tmp_path)


@pytest.mark.anyio
@pytest.mark.parametrize("header", ["authorization", "x-api-key", "api-key"])
async def test_the_redirect_hook_drops_every_key_header_off_origin(header: str) -> None:
    import httpx2

    from brute_nb.providers.credentials import strip_keys_off_origin

    hook = strip_keys_off_origin("http://api.example.com/v1")
    for url, kept in (("http://api.example.com/v1/x", True), ("https://api.example.com/v1/x", True),
                      ("http://api.example.com:8080/v1/x", False), ("http://evil.example.net/v1/x", False)):
        request = httpx2.Request("POST", url, headers={header: "sk-secret-value", "accept": "*/*"})
        await hook(request)
        assert (header in request.headers) is kept, url
        assert request.headers["accept"] == "*/*"


@pytest.mark.parametrize("case", cases("file"))
def test_a_hostile_keys_file_is_a_clear_error_and_never_overwritten(case: Case, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Every route that reads the keys file (a turn's provider, ``%brute keys``, ``brute-nb keys``, a save)."""
    from brute_nb import cli
    from brute_nb.providers.catalog import keys_command

    file = keys.path()
    file.parent.mkdir(parents=True)
    file.write_bytes(case.data)
    routes = {"auto": lambda: auto(), "list": lambda: keys_command([], input),
              "save": lambda: keys.save("openai", "sk-openai-hostile-file-0009")}
    for route, run in routes.items():
        with pytest.raises(keys.KeyFileError) as info:
            run()
        message = str(info.value)
        assert str(file) in message and "fix or remove" in message, f"{route}: {case.expect}"
        assert "hostile-file" not in message and "X-Evil" not in message, f"{route} echoed the file"
    assert cli.main(["keys"]) == 1
    assert str(file) in capsys.readouterr().err
    assert file.read_bytes() == case.data  # what could not be read is never replaced
