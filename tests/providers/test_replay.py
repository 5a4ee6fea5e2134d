"""Record a session against the fake provider, then replay it offline through the same SDK code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brute_nb import CassetteMismatchError
from brute_nb.errors import CassetteNotFoundError
from brute_nb.providers.replay import merge_branch
from brute_nb.testing import FakeProvider, call, rate_limit, reply

from .helpers import FACTORIES, shape, tool_agent

pytestmark = pytest.mark.anyio
KINDS = sorted(FACTORIES)


def script() -> list[Any]:
    return [reply("Reading.", call("read", {"file_path": "a.txt"})), "All read."]


async def record(kind: str, path: Path, **kw: Any) -> tuple[list[Any], list[str], FakeProvider]:
    deltas: list[str] = []
    with FakeProvider(script()) as fake:
        env = await tool_agent(FACTORIES[kind](fake, record=str(path), **kw), deltas).astart("read a")
    return list(env["messages"]), deltas, fake


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
async def test_record_then_replay_offline_is_identical(tmp_path: Path, kind: str, stream: bool) -> None:
    cassette = tmp_path / "s.cassette.jsonl"
    live, live_deltas, fake = await record(kind, cassette, stream=stream)
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert len(lines) == 2
    assert lines[0]["method"] == "POST" and lines[0]["status"] == 200
    assert lines[0]["request"] == fake.requests[0]["json"]
    if stream:
        assert "data: " in lines[0]["body"]
        assert lines[0]["headers"]["content-type"] == "text/event-stream"

    replayed_deltas: list[str] = []
    provider = FACTORIES[kind](None, replay=str(cassette), stream=stream)  # no server, no key
    env = await tool_agent(provider, replayed_deltas).astart("read a")
    assert shape(env["messages"]) == shape(live)
    assert replayed_deltas == live_deltas
    assert env["messages"][-1].meta["replayed"] is True
    transport = provider.client._client._transport
    # Byte-identical: every replayed request is exactly the recorded one.
    assert [json.dumps(s) for s in transport.sent] == [json.dumps(line["request"]) for line in lines]


@pytest.mark.parametrize("kind", KINDS)
async def test_secrets_never_reach_the_cassette(tmp_path: Path, kind: str) -> None:
    cassette = tmp_path / "s.jsonl"
    _, _, fake = await record(kind, cassette)
    text = cassette.read_text()
    assert fake.api_key and fake.api_key in str(fake.requests[0]["headers"])  # it was really sent...
    assert fake.api_key not in text  # ...and never written
    assert "authorization" not in text.lower() and "x-api-key" not in text.lower()


async def test_a_key_inside_the_conversation_is_redacted(tmp_path: Path) -> None:
    from .helpers import openai_chat

    cassette = tmp_path / "s.jsonl"
    with FakeProvider(["noted"]) as fake:
        await tool_agent(openai_chat(fake, record=str(cassette))).astart(f"my key is {fake.api_key}")
    assert fake.api_key not in cassette.read_text()
    assert "sk-fake-...REDACTED" in cassette.read_text()


async def test_a_changed_request_raises_a_readable_diff(tmp_path: Path) -> None:
    from .helpers import anthropic

    cassette = tmp_path / "s.jsonl"
    await record("anthropic", cassette)
    with pytest.raises(CassetteMismatchError) as info:
        await tool_agent(anthropic(None, replay=str(cassette))).astart("read b instead")
    text = str(info.value)
    assert "\n" not in text  # one line: what happened and how to reach a real model
    assert text.startswith("this notebook replays a recording; your prompt is not in it")  # plain words first
    assert "%brute live" in text and "request 1 differs from the recording" in text
    assert str(tmp_path) not in text and cassette.name in text  # the file by name; its whole path: %tb
    diff = info.value.diff  # the diff stays one step away (a note, which %tb shows)
    assert "messages:" in diff and '"read a"' in diff and "read b instead" in diff
    assert any("read b instead" in note for note in info.value.__notes__)


async def test_a_longer_session_than_recorded_says_so(tmp_path: Path) -> None:
    from .helpers import openai_chat

    cassette = tmp_path / "s.jsonl"
    with FakeProvider(["one"]) as fake:
        await tool_agent(openai_chat(fake, record=str(cassette))).astart("x")
    a = tool_agent(openai_chat(None, replay=str(cassette)))
    await a.astart("x")
    with pytest.raises(CassetteMismatchError) as info:
        await a.astart("y")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("this notebook replays a recording; your prompt is not in it")
    assert "ends after 1 request" in text and "%brute live" in text and str(tmp_path) not in text


async def test_a_conversation_that_starts_over_replays_from_the_start(tmp_path: Path) -> None:
    """A demo run twice in one kernel (issue 32 item 2): the same model connection, a fresh conversation."""
    from .helpers import openai_chat

    cassette = tmp_path / "s.jsonl"
    with FakeProvider(["one", "two"]) as fake:
        agent = tool_agent(openai_chat(fake, record=str(cassette)))
        await agent.astart("x")
        await agent.astart("y")
    provider = openai_chat(None, replay=str(cassette))
    for _ in range(2):
        agent = tool_agent(provider)  # a new conversation over the one replaying connection
        assert (await agent.astart("x"))["messages"][-1].content == "one"
        assert (await agent.astart("y"))["messages"][-1].content == "two"
    await tool_agent(provider).astart("x")
    with pytest.raises(CassetteMismatchError, match="request 2 differs from the recording"):
        await tool_agent(provider).astart("z")  # neither the next request nor the first


async def test_a_branch_recorded_with_another_answer_is_followed(tmp_path: Path) -> None:
    """A cassette holding one continuation per answer: each run goes on along the one its requests match."""
    from .helpers import openai_chat

    main, other = tmp_path / "main.jsonl", tmp_path / "other.jsonl"
    with FakeProvider(["first", "said no"]) as fake:
        agent = tool_agent(openai_chat(fake, record=str(main)))
        await agent.astart("x")
        await agent.astart("no")
    with FakeProvider(["first", "said yes", "and more"]) as fake:
        agent = tool_agent(openai_chat(fake, record=str(other)))
        await agent.astart("x")
        await agent.astart("yes")
        await agent.astart("more")
    assert merge_branch(main, other, "yes") == 2
    assert merge_branch(main, other, "yes") == 2  # merging again replaces the branch, never doubles it
    lines = [json.loads(line) for line in main.read_text().splitlines()]
    assert [line.get("branch") for line in lines] == [None, None, "yes", "yes"]
    assert [line.get("from") for line in lines[2:]] == [1, 1]

    for answers, last in ((["x", "no"], "said no"), (["x", "yes", "more"], "and more")):
        agent = tool_agent(openai_chat(None, replay=str(main)))
        for text in answers:
            env = await agent.astart(text)
        assert env["messages"][-1].content == last
    agent = tool_agent(openai_chat(None, replay=str(main)))
    await agent.astart("x")
    with pytest.raises(CassetteMismatchError, match="request 2 differs from the recording"):
        await agent.astart("maybe")  # neither recorded answer


async def test_recorded_errors_replay_as_errors(tmp_path: Path) -> None:
    from brute_nb import ProviderError

    from .helpers import openai_chat

    cassette = tmp_path / "s.jsonl"
    with FakeProvider([rate_limit(retry_after=9)]) as fake, pytest.raises(ProviderError):
        await tool_agent(openai_chat(fake, record=str(cassette))).astart("x")
    with pytest.raises(ProviderError) as info:
        await tool_agent(openai_chat(None, replay=str(cassette))).astart("x")
    assert info.value.status == 429 and "retry after 9 s" in str(info.value)


def test_missing_cassette_says_how_to_record(tmp_path: Path) -> None:
    from .helpers import openai_chat

    with pytest.raises(CassetteNotFoundError, match="record="):
        _ = openai_chat(None, replay=str(tmp_path / "nope.jsonl")).client


async def test_recording_again_keeps_the_earlier_cassette_beside_it(tmp_path: Path) -> None:
    """A cassette is paid-for traffic: a new recording to the same path moves the old one aside, never over it."""
    from .helpers import openai_chat

    cassette = tmp_path / "s.jsonl"
    with FakeProvider(["alpha"]) as fake:
        await tool_agent(openai_chat(fake, record=str(cassette))).astart("x")
    before = cassette.read_text()
    with FakeProvider(["omega"]) as fake:
        await tool_agent(openai_chat(fake, record=str(cassette))).astart("x")
    kept = list(tmp_path.glob("s.replaced-*.jsonl"))  # noqa: ASYNC240  (a test, after the turns)
    assert len(kept) == 1 and kept[0].read_text() == before
    assert "omega" in cassette.read_text() and "alpha" not in cassette.read_text()


def test_a_merge_that_cannot_be_made_durable_leaves_the_cassette_whole(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """merge_branch writes through ``confine.write_atomic`` (temp file, fsync, rename): a disk that fails the
    fsync leaves the cassette as it was and nothing beside it."""
    import os

    from brute_nb import confine

    main, other = tmp_path / "main.jsonl", tmp_path / "other.jsonl"
    main.write_text(json.dumps({"method": "POST", "path": "/v1/a", "request": {"n": 1}}) + "\n")
    other.write_text(json.dumps({"method": "POST", "path": "/v1/a", "request": {"n": 2}}) + "\n")
    before = main.read_bytes()

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(confine.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        merge_branch(main, other, "two")
    assert main.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["main.jsonl", "other.jsonl"]


def test_a_cells_execution_count_is_not_part_of_the_recorded_conversation() -> None:
    """Issue 39 (a second Run All of fix_my_error): ``%brute fix`` reports ``In [3] raised ...``; run again in the
    same kernel the same cell is ``In [27]``, and the replay must still match. Any other change still differs."""
    from brute_nb.providers.replay import mismatch

    def request(text: str) -> dict[str, Any]:
        return {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}

    recorded = {"method": "POST", "path": "/v1/messages",
                "request": request("In [3] raised KeyError\n\nCell source (In [3]):\nOut [4]: 1, In[7], Error in [5]")}
    again = request("In [27] raised KeyError\n\nCell source (In [27]):\nOut [28]: 1, In[31], Error in [29]")
    assert mismatch(recorded, "POST", "/v1/messages", again) == ""
    assert mismatch(recorded, "POST", "/v1/messages", request("In [27] raised ValueError")) != ""
    assert mismatch(recorded, "POST", "/v1/messages", request("x in [3] raised KeyError")) != ""


def test_a_text_columns_dtype_is_the_same_conversation_on_any_pandas() -> None:
    """fix_my_error replayed on pandas 2 (the declared minimum): ``%brute fix`` and the ``variables`` tool describe
    the failing line's frame, whose text column pandas 3 names ``str`` and pandas 2 ``object`` (a dtype listing is
    padded to its longest name), so the replay refused the recorded turn. Each pair below is one value described
    on each release (``summarize_value``, ``describe_value``, a Series' repr); a dtype that really changed, or a
    renamed column, still differs."""
    from brute_nb.providers.replay import mismatch

    def request(text: str) -> dict[str, Any]:
        return {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}

    def summary(listing: str) -> str:
        head = "  unit name  n\n    0         a  1\n    1         b  2"
        return f"frame = <DataFrame shape=(2, 2)>\n    dtypes:\n{listing}\n    first 5 rows:\n    {head}"

    pandas_3 = [summary("    unit name      str\n    n            int64"), "columns (unit name: str, n: int64)",
                "0    a\n1    b\nName: unit name, dtype: str"]
    pandas_2 = [summary("    unit name    object\n    n             int64"), "columns (unit name: object, n: int64)",
                "0    a\n1    b\nName: unit name, dtype: object"]
    for new, old in zip(pandas_3, pandas_2, strict=True):
        recorded = {"method": "POST", "path": "/v1/messages", "request": request(new)}
        assert mismatch(recorded, "POST", "/v1/messages", request(old)) == ""
        assert mismatch(recorded, "POST", "/v1/messages", request(old.replace("object", "category"))) != ""
        assert mismatch(recorded, "POST", "/v1/messages", request(new.replace("unit name", "unit_name"))) != ""
