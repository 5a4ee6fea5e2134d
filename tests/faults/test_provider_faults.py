"""Provider faults through a full stack with SessionLog, secrets never persisted, huge tool output survives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb import ProviderError, agent
from brute_nb.message import unanswered_calls
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.sessions.file import read_session
from brute_nb.testing import (
    FakeProvider,
    call,
    malformed_json,
    rate_limit,
    reply,
    server_error,
    stall,
    truncated,
)
from brute_nb.tools import Shell

SECRET = "sk-fake-SECRET-do-not-persist-42"


def provider(kind: str, fake: FakeProvider, **kw: Any) -> Any:
    if kind == "openai":
        return OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0, **kw)
    return AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0, **kw)


def stack(path: Path, handler: Any, tools: list[Any] | None = None) -> Any:
    return agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=tools or []).run(
        handler)


FAULTS = {"429": lambda: rate_limit(0), "500": lambda: server_error(), "stall": lambda: stall(),
          "malformed": malformed_json, "truncated": lambda: truncated()}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_keeps_the_users_message_and_leaves_no_dangling_call(tmp_path: Path, kind: str, fault: str) -> None:
    path = tmp_path / "s.jsonl"
    with FakeProvider([reply("", call("shell", {"command": "echo hi"})), FAULTS[fault]()]) as fake:
        a = stack(path, provider(kind, fake, timeout=0.5), [Shell()])
        with pytest.raises(ProviderError):
            a.start("please run echo", root=str(tmp_path))
    saved = read_session(path)
    assert saved[0].content == "please run echo"
    assert unanswered_calls(saved) == []
    assert [m.role for m in saved] == ["user", "assistant", "tool"]


def test_an_error_event_inside_a_200_stream_is_reported_as_its_status() -> None:
    """The SDK raises an error event of a 200 stream as a status error with the 200 response; it is the failure
    its type names (an overload is a 529, which retries and map's limiter treat as such), never "HTTP 200"."""
    import anthropic
    import httpx2

    from brute_nb.providers.failures import translate_error

    client = anthropic.Anthropic(api_key="sk-ant-test", base_url="http://127.0.0.1:9")
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded right now"}}
    response = httpx2.Response(200, request=httpx2.Request("POST", "http://127.0.0.1:9/v1/messages"))
    raised = client._make_status_error(str(body), body=body, response=response)  # what its stream raises
    error = translate_error(raised, "anthropic", None)
    assert isinstance(error, ProviderError) and error.status == 529
    assert "overloaded_error" in str(error) and "Overloaded right now" in str(error) and "HTTP 200" not in str(error)
    client.close()


def test_a_recorded_session_never_holds_the_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRUTE_NB_OVERFLOW_DIR", str(tmp_path / "overflow"))
    path, cassette = tmp_path / "s.jsonl", tmp_path / "s.cassette.jsonl"
    big = "python3 -c \"print('line ' * 40000)\""
    with FakeProvider([reply("", call("shell", {"command": big})), "done"], api_key=SECRET) as fake:
        handler = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=SECRET, max_retries=0,
                             record=cassette)
        stack(path, handler, [Shell()]).start("run it", root=str(tmp_path))
    files = [path, cassette, *(tmp_path / "overflow").iterdir()]
    assert len(files) >= 3  # an overflow file was written too
    for f in files:
        assert SECRET not in f.read_text(errors="replace"), f"{f} holds the API key"
        assert SECRET[8:] not in f.read_text(errors="replace"), f"{f} holds part of the API key"


def test_100_mb_of_shell_output_is_truncated_and_the_turn_survives(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRUTE_NB_OVERFLOW_DIR", str(tmp_path / "overflow"))
    command = "python3 -c \"import sys; sys.stdout.write(('x' * 1023 + chr(10)) * 100 * 1024)\""
    path = tmp_path / "s.jsonl"
    with FakeProvider([reply("", call("shell", {"command": command})), "survived"]) as fake:
        env = stack(path, provider("openai", fake), [Shell()]).start("flood", root=str(tmp_path))
    result = env["messages"][-2]
    assert result.role == "tool" and len(result.content) < 200_000
    overflow = Path(str(result.meta["overflow_path"]))
    assert overflow.stat().st_size >= 100 * 1024 * 1024
    assert env["messages"][-1].content == "survived"
    assert path.stat().st_size < 1_000_000
