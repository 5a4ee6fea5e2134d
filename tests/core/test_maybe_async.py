"""The one way brute_nb calls user code that may be sync or async (brute_nb/maybe_async.py), and its cancel policy."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

import anyio
import pytest

import brute_nb
from brute_nb.maybe_async import call_maybe_async, is_async
from brute_nb.message import Message, Role
from brute_nb.middleware import SessionLog
from brute_nb.tools import Adapter, tool


class AsyncCallable:
    async def __call__(self, x: int) -> int:
        return x + 1


async def add_async(x: int, y: int) -> int:
    return x + y


def test_is_async_sees_partials_and_async_call() -> None:
    assert is_async(add_async) and is_async(functools.partial(add_async, 1)) and is_async(AsyncCallable())
    assert not is_async(lambda: None) and not is_async(functools.partial(max, 1))


def test_async_runs_on_the_loop_and_sync_on_a_worker_thread() -> None:
    async def main() -> list[Any]:
        here = threading.current_thread()

        async def where_async() -> bool:
            return threading.current_thread() is here

        def where_sync() -> bool:
            return threading.current_thread() is here

        return [await call_maybe_async(where_async), await call_maybe_async(where_sync),
                await call_maybe_async(where_sync, thread=False), await call_maybe_async(AsyncCallable(), 1),
                await call_maybe_async(lambda: add_async(2, 3))]  # a sync function returning a coroutine

    assert anyio.run(main) == [True, False, True, 2, 5]


def test_a_blocked_sync_call_is_abandoned_on_cancel() -> None:
    release = threading.Event()
    finished = threading.Event()

    def blocked() -> None:
        release.wait(30)
        finished.set()

    async def main() -> float:
        start = time.monotonic()
        with anyio.move_on_after(0.2):
            await call_maybe_async(blocked)
        return time.monotonic() - start

    try:
        assert anyio.run(main) < 10  # not waiting out the 30 s block
        assert not finished.is_set()
    finally:
        release.set()
    assert finished.wait(10)  # the abandoned thread still runs to its end


def test_an_async_tool_function_runs_on_the_loop_thread() -> None:
    seen: list[threading.Thread] = []

    @tool
    async def where() -> str:
        """Say where it ran."""
        seen.append(threading.current_thread())
        return "here"

    async def main() -> threading.Thread:
        await Adapter.wrap(where).call({})
        return threading.current_thread()

    assert anyio.run(main) is seen[0]


def test_an_abandoned_sync_handler_cannot_write_into_the_session(tmp_path: Any) -> None:
    path = tmp_path / "s.jsonl"
    release, appended = threading.Event(), threading.Event()

    def handler(env: dict[str, Any]) -> None:
        release.wait(30)
        env["messages"].append(Message(Role.ASSISTANT, "late"))
        appended.set()

    agent = brute_nb.agent().use(SessionLog, path=path).run(handler)

    async def main() -> None:
        with anyio.move_on_after(0.2):
            await agent.astart("hi")

    anyio.run(main)
    release.set()
    assert appended.wait(10)
    lines = path.read_text().splitlines()
    assert len(lines) == 1 and '"hi"' in lines[0]  # the prompt, and no late reply


def test_a_sync_handler_reply_still_reaches_the_log(tmp_path: Any) -> None:
    path = tmp_path / "s.jsonl"
    agent = brute_nb.agent().use(SessionLog, path=path).run(
        lambda env: env["messages"].append(Message(Role.ASSISTANT, "hello")))
    env = agent.start("hi")
    assert [m.content for m in env["messages"]] == ["hi", "hello"]
    assert len(path.read_text().splitlines()) == 2


@pytest.mark.parametrize("asker_kind", ["sync", "async"])
def test_question_ask_either_kind(asker_kind: str) -> None:
    from brute_nb.tools.builtin.question import ask_one

    def sync_ask(question: str, options: list[str]) -> list[str]:
        return options[:2]

    async def async_ask(question: str, options: list[str]) -> list[str]:
        return options[:2]

    ask = sync_ask if asker_kind == "sync" else async_ask
    assert anyio.run(ask_one, ask, "q", ["a", "b", "c"]) == "a, b"
