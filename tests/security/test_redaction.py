"""Issue 14 §14: no API key brute_nb knows of leaves the process, in any output, error, file or tool result.

Known keys are the providers' environment variables (``brute_nb.redact.KEY_VARIABLES``) and every ``api_key``
given to a provider (also inside a ``client=``). Each test uses its own key, so the process-wide registry of
given keys cannot make one test pass for another.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import pytest

from brute_nb import ProviderError, agent
from brute_nb.frames import frame
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.notebook.views.display import CellView
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.redact import SUFFIX, mark, redact, redact_stream
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, Fault, call, reply
from brute_nb.tools import FSRead


def stack(path: Path, handler: Any, tools: list[Any] | None = None) -> Any:
    return agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=tools or []).run(
        handler)


def bundles_of(messages: list[Any]) -> str:
    shown: list[str] = []
    view = CellView(publish=lambda bundle, *a, **k: shown.append(repr(bundle)), update=lambda *a, **k: None)
    view.model.messages = list(messages)
    view.finish(notice="done")
    return "".join(shown)


def test_the_mark_is_recognisable_and_holds_nothing_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-Zq81mN0pLk2Vb7Xc"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    assert mark(key) == "sk-proj-" + SUFFIX and redact(f"key={key}.") == f"key=sk-proj-{SUFFIX}."
    assert redact_stream(f"it is {key[:12]}") == f"it is sk-proj-{SUFFIX}"  # the start of a key still arriving
    monkeypatch.setenv("OPENAI_API_KEY", "ollama")  # a placeholder is not a secret: words stay readable
    assert redact("run ollama here") == "run ollama here"


@pytest.mark.parametrize("given", ["api_key", "environment"])
def test_an_error_body_echoing_the_key_is_redacted(given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"sk-fake-ERROR-{given}-7f3a9c"
    echo = Fault("server_error", status=401, message=f"Incorrect API key provided: {key}.")
    with FakeProvider([echo], api_key=key) as fake:
        if given == "environment":  # key and server both from the environment: the key goes to the server it names
            monkeypatch.setenv("OPENAI_API_KEY", key)
            monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
            handler = OpenAIChat("gpt-fake", max_retries=0)
        else:
            handler = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=key, max_retries=0)
        with pytest.raises(ProviderError) as info:
            agent().run(handler).start("hi")
    shown = "".join(traceback.format_exception(info.value))  # what the cell shows, chained causes included
    assert "401" in shown and "Incorrect API key provided" in shown
    assert key not in shown and key[8:] not in shown
    assert f"sk-fake-{SUFFIX}" in str(info.value)


@pytest.mark.parametrize("kind", ["client", "other provider's env"])
def test_a_cassette_never_holds_a_key(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    key = f"sk-fake-CASSETTE-{kind[:5]}-51b0"
    other = "sk-ant-fake-OTHER-PROVIDER-9911"
    monkeypatch.setenv("ANTHROPIC_API_KEY", other)
    cassette = tmp_path / "s.cassette.jsonl"
    with FakeProvider([f"your keys are {key} and {other}"], api_key=key) as fake:
        if kind == "client":
            client = openai.AsyncOpenAI(api_key=key, base_url=fake.openai_base_url, max_retries=0)
            handler = OpenAIChat("gpt-fake", client=client, record=str(cassette))
        else:
            handler = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=key, max_retries=0,
                                 record=str(cassette))
        agent().run(handler).start("what are my keys?")
    text = cassette.read_text()
    assert key not in text and other not in text and key[8:14] not in text  # not whole, not in streamed pieces
    replayed = agent().run(OpenAIChat("gpt-fake", replay=str(cassette))).start("what are my keys?")
    assert replayed["messages"][-1].content == f"your keys are {mark(key)} and {mark(other)}"


def test_a_key_read_from_dotenv_reaches_no_model_file_or_output(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-fake-DOTENV-0c9d8e7f6a5b"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={key}\nDEBUG=1\n")
    path = tmp_path / "s.jsonl"
    script = [reply("Let me look.", call("read", {"file_path": ".env"})), f"Your key is {key}."]
    with FakeProvider(script, api_key=key) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)  # the key goes to the server the environment names
        handler = AnthropicMessages("claude-fake", max_retries=0)
        env = stack(path, handler, [FSRead()]).start("what is in .env?", root=str(tmp_path))
        sent = repr(fake.requests[-1]["json"])
    messages = list(env["messages"])
    tool = next(m for m in messages if m.role == "tool")
    assert "DEBUG=1" in tool.content and mark(key) in tool.content
    assert key not in tool.content and key not in sent  # the model never read it
    assert key not in path.read_text()  # the session file
    assert key not in repr([m.to_dict() for m in read_session(path)])
    assert key not in bundles_of(messages)  # the cell, the model's echo included
    assert key not in frame(messages).to_html()  # %brute log


def test_a_key_set_or_changed_after_a_redaction_is_redacted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb import redact as module

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert redact("the key is sk-first-0123456789") == "the key is sk-first-0123456789"  # nothing to hide yet
    monkeypatch.setenv("OPENAI_API_KEY", "sk-first-0123456789")  # as `%env` or os.environ[...] = ... does
    assert "0123456789" not in redact("the key is sk-first-0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-second-9876543210")
    out = redact("old sk-first-0123456789 new sk-second-9876543210")
    assert "9876543210" not in out and "sk-first-0123456789" in out  # the old value is no longer a key
    module.remember("given-key-abcdefgh")
    assert "abcdefgh" not in redact("and given-key-abcdefgh")
    assert "xyz-extra-12345678" not in redact("an extra xyz-extra-12345678", extra=["xyz-extra-12345678"])


def test_a_reference_to_a_key_is_not_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """``api_key=env:NAME`` and ``api_key=none`` name no secret: remembering them as keys hid those words, and a
    stream's trailing "e" or "n" (the start of one), wherever they appeared."""
    from brute_nb.notebook.settings import parse_api_key

    monkeypatch.setenv("MY_PROXY_KEY", "sk-proxy-0123456789abcdef")
    for given in ("env:MY_PROXY_KEY", "none", "NONE"):
        assert parse_api_key(given) == given
        OpenAIChat("gpt-fake", base_url="http://127.0.0.1:9/v1", api_key=given)
    assert redact_stream("read the env:MY_PROXY_KEY variable, or none") == "read the env:MY_PROXY_KEY variable, or none"
    assert redact_stream("and more") == "and more"
    assert parse_api_key("sk-typed-0123456789abcdef") == "sk-typed-0123456789abcdef"  # a key typed in is one
    assert "0123456789abcdef" not in redact("it is sk-typed-0123456789abcdef")
