"""The hostile replies table (``hostile.replies``) against every reply-taking entry point: the three providers
through their real SDKs, in an agent with a session file, against the strict fake (which refuses, as the APIs do,
a request with an empty, repeated or unanswered tool-call id).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.attachments import from_bytes
from brute_nb.errors import ProviderError, RefusedInputError
from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
from brute_nb.middleware.session_log import read_session
from brute_nb.testing import FakeProvider, call, refused, reply
from brute_nb.testing.script import Reply
from brute_nb.tools.truncation import ToolOutput
from tests.providers.helpers import FACTORIES, RunTools
from tests.security.hostile import REPLIES, Case

APIS = sorted(FACTORIES)
FILE = {"type": "object", "properties": {"file_path": {"type": "string"}}}


def cases(tag: str) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in REPLIES if tag in c.tags]


def bot(path: Path, provider: Any) -> Any:
    tools = [{"name": "read", "description": "Read a file.", "parameters": FILE}]
    return agent().use(SessionLog, path=path).use(ToolResultLoop).use(RunTools, tools=tools).run(provider)


def results_by_call(request: dict[str, Any], api: str) -> dict[str, tuple[str, str]]:
    """``{call id: (the call's file_path, the text of its result)}`` from a request as the API reads it."""
    calls: dict[str, str] = {}
    results: dict[str, str] = {}
    if api == "openai_chat":
        for m in request["messages"]:
            for c in m.get("tool_calls") or ():
                calls[c["id"]] = json.loads(c["function"]["arguments"])["file_path"]
            if m["role"] == "tool":
                results[m["tool_call_id"]] = m["content"]
    elif api == "openai_responses":
        for item in request["input"]:
            if item.get("type") == "function_call":
                calls[item["call_id"]] = json.loads(item["arguments"])["file_path"]
            elif item.get("type") == "function_call_output":
                results[item["call_id"]] = item["output"]
    else:
        for turn in request["messages"]:
            for block in turn["content"] if isinstance(turn["content"], list) else ():
                if block["type"] == "tool_use":
                    calls[block["id"]] = block["input"]["file_path"]
                elif block["type"] == "tool_result":
                    results[block["tool_use_id"]] = str(block.get("content"))
    return {i: (path, results.get(i, "")) for i, path in calls.items()}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("case", cases("ids"))
def test_replies_with_empty_or_repeated_ids_never_break_the_session(case: Case, api: str, tmp_path: Path) -> None:
    script: list[Any] = []
    for n, ids in enumerate(case.data["ids"]):
        calls = tuple(call("read", {"file_path": f"r{n}c{j}"}, id=i) for j, i in enumerate(ids))
        script += [Reply(calls=calls, keep_ids=True), f"read {n}"]
    script.append("still fine")
    path = tmp_path / "s.jsonl"
    with FakeProvider(script) as fake:
        session = bot(path, FACTORIES[api](fake))
        for n in range(len(case.data["ids"])):
            assert session.start(f"question {n}")["messages"][-1].content == f"read {n}"
        assert session.start("and now?")["messages"][-1].content == "still fine"  # no 400, this turn or later
        last = fake.requests[-1]["json"]
    pairs = results_by_call(last, api)
    expected = [f"r{n}c{j}" for n, ids in enumerate(case.data["ids"]) for j in range(len(ids))]
    assert sorted(p for p, _ in pairs.values()) == expected  # every call sent once, under its own id
    for file_path, result in pairs.values():
        assert f"'file_path', '{file_path}'" in result  # each result follows its own call


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("case", cases("refused"))
def test_a_refused_turn_is_marked_and_the_next_turn_succeeds(case: Case, api: str, tmp_path: Path) -> None:
    data, path = case.data, tmp_path / "s.jsonl"
    attachments = [data["attach"]] if data["attach"] else []
    with FakeProvider([refused(data["message"], data["status"]), "second answer", "third answer"]) as fake:
        session = bot(path, FACTORIES[api](fake))
        with pytest.raises(ProviderError) as info:
            session.start("first question", attachments=attachments)
        second = session.start("second question")
        session.start("third question")
        sent = [json.dumps(r["json"]) for r in fake.requests]
    assert second["messages"][-1].content == "second answer"
    lines = read_session(path)
    first = next(m for m in lines if m.content == "first question")  # kept: the user wrote it
    assert data["message"] in str(info.value)
    if data["marked"]:
        assert isinstance(info.value, RefusedInputError)
        assert "never sent again" in str(info.value) and "this turn's prompt" in str(info.value)
        if attachments:
            assert "attached" in str(info.value)
        assert first.meta["refused"]["status"] == data["status"]
        assert all("first question" not in body for body in sent[1:])  # never sent again
        assert all("image" not in body and "base64" not in body for body in sent[1:])
    else:
        assert not isinstance(info.value, RefusedInputError) and "refused" not in first.meta
        assert "first question" in sent[1]  # the input was not at fault: it goes again
    assert [m.content for m in lines if m.role.value == "user"] == ["first question", "second question",
                                                                     "third question"]


@pytest.mark.parametrize("api", APIS)
def test_a_refused_tool_result_is_answered_with_why_and_the_session_goes_on(api: str, tmp_path: Path) -> None:
    case = next(c for c in REPLIES if c.id == "an-image-the-api-cannot-read")
    chart = from_bytes(case.data["attach"], "image/png", "chart.png")
    plot = {"name": "plot", "description": "Plot the data.",
            "execute": lambda: ToolOutput("the chart", attachments=(chart,))}
    path = tmp_path / "s.jsonl"
    with FakeProvider([reply("", call("plot", {})), refused(case.data["message"]), "Without the chart, then."]) as fake:
        session = (agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[plot])
                   .run(FACTORIES[api](fake)))
        with pytest.raises(RefusedInputError, match=r"the result of plot with chart\.png attached"):
            session.start("plot it")
        assert session.start("what now?")["messages"][-1].content == "Without the chart, then."
        last = json.dumps(fake.requests[-1]["json"])
    assert "refused this tool's result" in last and "Could not process image" in last  # the model is told why
    assert '"type": "image"' not in last and "image_url" not in last and "input_image" not in last
    result = next(m for m in read_session(path) if m.role.value == "tool")
    assert result.meta["refused"]["status"] == 400 and result.attachments  # kept in the file, marked


def _inert_everywhere(messages: list[Any]) -> None:
    from brute_nb.notebook.views.transcript_html import log_html
    from brute_nb.testing.hostile import live_parts
    from tests.security.test_html_output import published_bundles, rendered

    shown = [m for m in messages if m.role.value != "system"]
    html = "".join(rendered(b) for b in published_bundles(shown)) + log_html(shown)
    assert live_parts(html) == []


def _sent_back(request: dict[str, Any], api: str) -> list[Any]:
    """The first assistant turn of a request, as blocks (Anthropic) or output items (Responses)."""
    if api == "anthropic":
        return list(next(t for t in request["messages"] if t["role"] == "assistant")["content"])
    return [i for i in request["input"] if i.get("type") != "message" or i.get("role") == "assistant"]


@pytest.mark.parametrize("case", cases("blocks"))
def test_reply_blocks_are_inert_sent_back_as_received_and_an_unknown_kind_is_kept(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.transports.blocks import clean
    from tests.security.hostile.replies import KEY_HERE

    key = f"sk-hostile-{case.id}-5f1e9a"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    api, path = case.data["api"], tmp_path / "s.jsonl"
    blocks = [json.loads(json.dumps(b).replace(KEY_HERE, key)) for b in case.data["blocks"]]
    with FakeProvider([Reply(blocks=tuple(blocks)), "second", "third"]) as fake:
        session = bot(path, FACTORIES[api](fake))
        if case.data["error"]:
            with pytest.raises(ProviderError, match=case.data["error"]):
                session.start("search")
            assert [m.role.value for m in read_session(path)] == ["user"]  # nothing half-kept
            assert session.start("again")["messages"][-1].content == "second"
            return
        env = session.start("search")
        _inert_everywhere(list(env["messages"]))
        session.start("again")
        request = fake.requests[-1]["json"]
    received = [clean(b) for b in blocks]
    back = _sent_back(request, api)
    if KEY_HERE not in json.dumps(case.data["blocks"]):
        assert back == received, case.expect  # the blocks as the API sent them, in order
    else:
        assert key not in json.dumps(request) and key not in path.read_text(), case.expect
        assert [b["type"] for b in back] == [b["type"] for b in received]  # still the reply's own blocks
        assert back[1]["content"][0]["encrypted_content"] == received[1]["content"][0]["encrypted_content"]


def test_a_damaged_server_tool_call_in_a_session_line_shows_nothing_live() -> None:
    from brute_nb.message import Message
    from tests.security.hostile.replies import MARKUP

    damaged = Message("assistant", "done", meta={"server_tool_calls": [MARKUP, 5, None, {
        "id": MARKUP, "name": MARKUP, "arguments": MARKUP, "result": [MARKUP]}]})
    _inert_everywhere([Message("user", "hi"), damaged])


PARAMETER_REFUSALS = {
    # The APIs' own words and body shapes for a parameter the model does not take (OpenAI names it in ``param``,
    # Anthropic at the head of the message), sent after a tool ran: the tool's result is not what was refused.
    "openai_chat": refused("max_tokens is too large: 100000. This model supports at most 16384 completion tokens, "
                           "whereas you provided 100000.", param="max_tokens"),
    "openai_responses": refused("max_output_tokens is too large: 200000. This model supports at most 128000 "
                                "output tokens, whereas you provided 200000.", param="max_output_tokens"),
    "anthropic": refused("max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for "
                         "claude-fake"),
}


@pytest.mark.parametrize("api", APIS)
def test_a_400_about_a_parameter_leaves_the_tool_results_to_be_sent_again(api: str, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with FakeProvider([reply("", call("read", {"file_path": "notes.txt"})), PARAMETER_REFUSALS[api],
                       "Read it: all fine."]) as fake:
        session = bot(path, FACTORIES[api](fake))
        with pytest.raises(ProviderError) as info:
            session.start("read notes.txt")
        assert not isinstance(info.value, RefusedInputError) and "never sent again" not in str(info.value)
        assert session.start("go on")["messages"][-1].content == "Read it: all fine."
        last = json.dumps(fake.requests[-1]["json"])
    result = next(m for m in read_session(path) if m.role.value == "tool")
    assert "refused" not in result.meta  # the result is fine: only the setting was refused
    assert "notes.txt" in last and "refused this tool's result" not in last  # the model reads the result
