from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import filelock
import pytest

import brute_nb
from brute_nb import Message, SessionLockedError, SessionLogError
from brute_nb import sendable as sendable_module
from brute_nb.message import unanswered_calls
from brute_nb.middleware import SessionLog, SystemPrompt, ToolResultLoop
from brute_nb.middleware import session_log as session_log_module
from brute_nb.sessions.file import read_session
from brute_nb.testing.scripted import Scripted, call, reply


def make(path: Path, fake: Any, **opts: Any) -> brute_nb.Agent:
    agent = brute_nb.agent().use(SessionLog, path=path, **opts).use(SystemPrompt, text="sys")
    return agent.use(ToolResultLoop).run(fake)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_multi_turn_second_start_sees_the_first(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "chat.jsonl"  # missing parents are created
    fake = Scripted(["Hello Nathan.", "Your name is Nathan."])
    agent = make(path, fake)
    agent.start("My name is Nathan.")
    agent.start("What's my name?")
    sent = fake.requests[1]["messages"]
    assert [m["content"] for m in sent] == ["sys", "My name is Nathan.", "Hello Nathan.", "What's my name?"]
    assert [m["role"] for m in lines(path)] == ["user", "assistant", "user", "assistant"]  # no system line
    # a fresh agent (a kernel restart) continues from the file
    fake2 = Scripted(["still Nathan"])
    make(path, fake2).start("again?")
    assert [m["content"] for m in fake2.requests[0]["messages"]][1:3] == ["My name is Nathan.", "Hello Nathan."]


def test_each_message_is_on_disk_the_moment_it_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    snapshots: list[int] = []
    agent = make(path, Scripted(["answer"]))
    agent.on("message", lambda env, m: m.role == "assistant" and snapshots.append(len(lines(path))))
    agent.start("q")
    assert snapshots == [2]  # the reply was on disk before the turn ended
    assert len(lines(path)) == 2


def test_corrupt_line_names_file_and_line_and_file_is_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = Message("user", "hi").to_json()
    path.write_bytes((good + "\n" + '{"role":"user","content":"x"\n' + good + "\n").encode())
    before = path.read_bytes()
    with pytest.raises(SessionLogError, match=r"s\.jsonl:2: not valid JSON"):
        make(path, Scripted(["never"])).start("hello")
    assert path.read_bytes() == before
    path.write_text(good + '\n{"role":"robot","content":"x"}\n')
    with pytest.raises(SessionLogError, match=r":2: not a valid message: unknown message role 'robot'"):
        read_session(path)


def test_history_rewrite_is_atomic_and_archives_what_left(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"

    class DropOldest:
        """Stands in for compaction: mutates history in place before the model call."""

        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, env: dict[str, Any]) -> Any:
            msgs = env["messages"]
            if len(msgs) > 4:
                del msgs[1:3]
                msgs[1] = msgs[1].with_meta(compacted=True)
            return await self.app(env)

    fake = Scripted(["a1", "a2", "a3"])
    agent = brute_nb.agent().use(SessionLog, path=path).use(SystemPrompt, text="s").use(DropOldest).run(fake)
    agent.start("u1")
    agent.start("u2")
    agent.start("u3")
    assert [m["content"] for m in lines(path)] == ["u2", "a2", "u3", "a3"]
    assert lines(path)[0]["meta"]["compacted"] is True
    archive = tmp_path / "s.archive.jsonl"
    assert [m["content"] for m in lines(archive)] == ["u1", "a1", "u2"]  # dropped + the rewritten original
    assert not list(tmp_path.glob(".*.tmp"))


def test_file_changed_by_someone_else_is_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    fake = Scripted(["a1", "a2"])
    agent = make(path, fake)
    agent.start("u1")
    with path.open("a") as f:
        f.write(Message("user", "added elsewhere").to_json() + "\n")
    agent.start("u2")
    assert "added elsewhere" in [m["content"] for m in fake.requests[1]["messages"]]


def test_cancelled_mid_tool_keeps_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    started = anyio.Event()

    class SlowTools:
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, env: dict[str, Any]) -> None:
            await self.app(env)
            if env["messages"][-1].tool_calls:
                started.set()
                await anyio.sleep(60)

    fake = Scripted([reply("let me look", call("shell", {"command": "sleep 60"}), call("read"))])
    agent = brute_nb.agent().use(SessionLog, path=path).use(ToolResultLoop).use(SlowTools).run(fake)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.astart, "do it")
            await started.wait()
            tg.cancel_scope.cancel()

    anyio.run(main)
    saved = read_session(path)
    assert [m.role for m in saved] == ["user", "assistant", "tool", "tool"]
    assert unanswered_calls(saved) == []
    assert saved[-1].content.startswith("Error: interrupted")


def test_error_in_turn_still_persists_and_closes_calls(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"

    def handler(env: dict[str, Any]) -> None:
        env["messages"].assistant("", tool_calls=[{"id": "c1", "name": "x"}])
        raise RuntimeError("crash after reply")

    with pytest.raises(RuntimeError):
        brute_nb.agent().use(SessionLog, path=path).run(handler).start("u")
    assert [m.role for m in read_session(path)] == ["user", "assistant", "tool"]


def test_second_writer_gets_session_locked_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    other_kernel = filelock.FileLock(str(path) + ".lock", thread_local=False)
    other_kernel.acquire()
    try:
        with pytest.raises(SessionLockedError, match=r"s\.jsonl is locked by another writer"):
            make(path, Scripted(["x"]), lock_timeout=0.2).start("u")
    finally:
        other_kernel.release()
    assert not path.exists()


def test_two_agents_on_one_file_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    gate, holding = anyio.Event(), anyio.Event()

    async def slow(env: dict[str, Any]) -> None:
        holding.set()  # inside the turn: the first agent holds the session's lock now
        await gate.wait()
        env["messages"].assistant("slow reply")

    first = brute_nb.agent().use(SessionLog, path=path).run(slow)
    second = make(path, Scripted(["x"]), lock_timeout=0.2)
    outcome: list[str] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.astart, "first")
            await holding.wait()
            try:
                await second.astart("second")
            except SessionLockedError:
                outcome.append("locked")
            gate.set()

    anyio.run(main)
    assert outcome == ["locked"]
    assert [m["content"] for m in lines(path)] == ["first", "slow reply"]


def test_missing_trailing_newline_is_repaired_not_joined(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(Message("user", "hand edited").to_json())  # no newline at the end
    make(path, Scripted(["a"])).start("next")
    assert [m["content"] for m in lines(path)] == ["hand edited", "next", "a"]


def test_an_open_call_in_a_hand_edited_file_is_still_closed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    dangling = Message("assistant", "", tool_calls=[{"id": "old", "name": "shell", "arguments": {}}])
    path.write_text(Message("user", "u0").to_json() + "\n" + dangling.to_json() + "\n")
    make(path, Scripted(["a"])).start("next")
    assert unanswered_calls(read_session(path)) == []


def test_a_session_read_from_disk_is_walked_once_by_its_reader(tmp_path: Path, monkeypatch: Any) -> None:
    """The reader's walk (``sendable.ReadCheck``) stands in for ``unanswered_calls`` and ``valid``'s first walk:
    the first model call resumes after the history, and what it answers is what the walks answer."""
    path = tmp_path / "s.jsonl"
    make(path, Scripted([reply("Looking.", call("nope", {}, id="c1")), "Done."])).start("hi")
    make(path, Scripted(["Bye."])).start("more")
    history = read_session(path)
    n = len(history)
    assert [m.role for m in history].count("tool") == 1 and not unanswered_calls(history)
    asked: list[int] = []
    monkeypatch.setattr(session_log_module, "unanswered_calls", lambda m: asked.append(len(m)) or unanswered_calls(m))
    resumed: list[tuple[int, int]] = []
    real_resume = sendable_module.resume

    def spy(messages: Any, key: str) -> Any:
        found = real_resume(messages, key)
        resumed.append((found.at - found.lead, len(messages) - found.lead))
        return found

    monkeypatch.setattr(sendable_module, "resume", spy)
    fake = Scripted(["Again."])
    make(path, fake).start("once more")
    assert asked == []  # the reader knew no call was open
    assert resumed[0] == (n, n + 1)  # the first request walked only the new prompt
    assert [m["content"] for m in fake.requests[0]["messages"]][1:] == [m.content for m in history] + ["once more"]


def test_every_saved_message_has_a_stable_id_that_survives_reload(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    fake = Scripted([reply("Looking.", call("nope", {}, id="c1")), "Done."])
    env = make(path, fake).start("hi")
    ids = [m.meta["id"] for m in env["messages"] if m.role != "system"]
    assert [line["meta"]["id"] for line in lines(path)] == ids  # user, assistant, closed call
    assert len(set(ids)) == 3 and ids == sorted(ids)  # unique, and in creation order
    assert "id" not in env["messages"][0].meta  # the system prompt is rebuilt each turn, never saved
    env2 = make(path, Scripted(["Again."])).start("more")
    assert [m.meta["id"] for m in read_session(path)][:3] == ids  # a reload keeps them
    assert [m.meta["id"] for m in env2["messages"][1:4]] == ids
    assert "id" not in brute_nb.log([Message("user", "x")])[0].meta  # a plain Log assigns none


def test_a_later_turn_never_copies_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.middleware import session_log

    path = tmp_path / "s.jsonl"
    path.write_text("".join(Message("user" if i % 2 == 0 else "assistant", f"m{i}").to_json() + "\n"
                            for i in range(200)))
    prompts = iter(["first system", "second system"])
    agent = brute_nb.agent().use(SessionLog, path=path).use(SystemPrompt, text=lambda env: next(prompts))
    fake = Scripted(["a1", "a2"])
    agent.run(fake).start("u1")  # the first turn builds the session log from the file
    copies: list[int] = []

    def counting_log(messages: Any = ()) -> brute_nb.Log:
        built = brute_nb.Log(messages)
        copies.append(len(built))
        return built

    monkeypatch.setattr(session_log, "Log", counting_log)
    env = agent.start("u2")
    assert copies == []  # the second turn extended the session's own log: O(new messages), not O(history)
    sent = [m["content"] for m in fake.requests[1]["messages"]]
    assert sent[0] == "second system" and "first system" not in sent  # last turn's system message is gone
    assert sent[1:] == [f"m{i}" for i in range(200)] + ["u1", "a1", "u2"]
    assert [m.content for m in env["messages"]][-2:] == ["u2", "a2"]
    assert [m["content"] for m in lines(path)][-4:] == ["u1", "a1", "u2", "a2"]


def test_a_system_message_added_mid_turn_does_not_reach_the_next_turn(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    seen: list[list[str]] = []

    def model(env: dict[str, Any]) -> None:
        seen.append([m.content for m in env["messages"]])
        env["messages"].system("only for this turn")
        env["messages"].assistant(f"a{len(seen)}")

    agent = brute_nb.agent().use(SessionLog, path=path).run(model)
    agent.start("u1")
    agent.start("u2")
    assert seen == [["u1"], ["u1", "a1", "u2"]]  # the file is the truth; the stray system line is not in it
    assert [m["content"] for m in lines(path)] == ["u1", "a1", "u2", "a2"]


def test_facts_kept_on_the_session_log_never_outlive_the_system_lead_it_drops(tmp_path: Path) -> None:
    """A turn's leading system messages leave the session log at the next turn without a change event; what the
    log keeps about its messages (the walk ``sendable`` checked, the turns a transport dumped) counted them, so it
    must go with them, or the next request would skip the turn's new messages."""
    from brute_nb.transports.anthropic import Anthropic
    from brute_nb.transports.openai import OpenAI

    path = tmp_path / "s.jsonl"
    requests: list[tuple[Any, Any]] = []

    async def model(env: dict[str, Any]) -> None:  # async: it is handed the session log itself, not a copy
        log = env["messages"]
        if not requests:
            log.insert(0, Message("system", "only the first turn"))
        requests.append(((Anthropic.dump_marked(log), OpenAI.dump_all(log)),
                         (Anthropic.dump_marked(list(log)), OpenAI.dump_all(list(log)))))
        log.assistant(f"a{len(requests)}")
        Anthropic.dump_marked(log), OpenAI.dump_all(log)  # what the log keeps now counts the system message

    agent = brute_nb.agent().use(SessionLog, path=path).run(model)
    agent.start("u1")
    agent.start("u2")
    assert [kept == fresh for kept, fresh in requests] == [True, True]
    assert requests[1][0][0][1][-1] == {"role": "user", "content": "u2"}


def test_a_later_turn_translates_only_what_is_new(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SessionLog takes the last turn's system prompt out and SystemPrompt puts this turn's first: neither may make
    the next request translate the whole history again (a long session's every turn would be O(history))."""
    from brute_nb.transports.openai import OpenAI

    path = tmp_path / "long.jsonl"
    history = [Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(200)]
    path.write_text("".join(m.to_json() + "\n" for m in history), encoding="utf-8")
    requests: list[list[Any]] = []

    async def model(env: dict[str, Any]) -> None:
        requests.append(OpenAI.dump_all(env["messages"]))
        env["messages"].append(Message("assistant", "ok"))

    dumped: list[Any] = []
    real = OpenAI.dump.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(OpenAI, "dump", classmethod(lambda cls, m: dumped.append(m) or real(cls, m)))
    agent = brute_nb.agent().use(SessionLog, path=path).use(SystemPrompt, text="sys").run(model)
    agent.start("first")
    assert len(dumped) == 202  # the kernel's first turn: the system prompt, the history and the prompt, once
    dumped.clear()
    agent.start("second")
    assert [m.content for m in dumped] == ["ok", "second", "sys"]  # the last reply, the prompt, the lead
    assert requests[-1] == OpenAI.dump_all(list(agent.messages)[:-1])  # what a fresh dump makes, but its reply
    assert [m["content"] for m in requests[-1][:2]] == ["sys", "m0"]


def test_a_turns_env_reprs_its_log_by_count_not_message_by_message(tmp_path: Path) -> None:
    """asyncio.run() reprs the result of what it ran (CPython restoring its SIGINT handler), so a script's
    ``asyncio.run(agent.astart(...))`` wrote out a 50,000-message session's every message (1.3 s) to throw it away."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(Message("user", f"question {i}").to_json() + "\n"
                            + Message("assistant", f"answer {i}").to_json() + "\n" for i in range(2_000)))
    a = brute_nb.agent().use(SessionLog, path=path).run(lambda env: env["messages"].append(
        Message("assistant", "fine")))
    env = a.start("next")  # its log is lent from the session's (no copy), and shown counted all the same
    assert type(env).__name__ == "_Finished"
    text = repr(env)
    assert "'messages': <Log of 4,002 messages>" in text and "question 1" not in text and len(text) < 2_000
    assert type(env).__name__ == "_Finished"  # a repr is not a read: it made no copy of the log
    assert len(env["messages"]) == 4_002 and "'prompt': 'next'" in repr(env)
