"""A session's model client is closed when it is replaced or no longer used (issue 39): the clients live on the
kernel's one loop, which never ends, so a replaced provider's idle kept-alive connection stayed open for the
kernel's life, one more for every setting changed. Counted at the loopback fake's port, through the real SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb.event_loop import run_sync
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.testing import FakeProvider, slow
from tests import loopback
from tests.ipython_shell import loaded_shell


def open_to(fake: FakeProvider) -> int:
    """This process's connections to the fake still open (the client's side)."""
    return loopback.open_to(int(fake.openai_base_url.split(":")[2].split("/")[0]))


def session(tmp_path: Path, fake: FakeProvider) -> NotebookAgent:
    settings = Settings(model="openai:gpt-x", root=tmp_path, tools="none", base_url=fake.openai_base_url,
                        api_key=fake.api_key)
    return NotebookAgent("chat", tmp_path / "chat.jsonl", settings=settings)


def test_a_replaced_client_closes_its_connection(tmp_path: Path) -> None:
    with FakeProvider(["one", "two", "three"]) as fake:
        nb = session(tmp_path, fake)
        for temperature in (0.1, 0.2, 0.3):
            nb.configure(options={"temperature": temperature})  # a new provider, so a new client
            run_sync(lambda: nb.aask("hi"))
        assert [r["json"]["temperature"] for r in fake.requests] == [0.1, 0.2, 0.3]
        assert open_to(fake) == 1  # the one in use, kept alive for the next turn
        nb.close()
        assert open_to(fake) == 0


def test_a_client_a_running_turn_uses_is_closed_when_the_turn_ends(tmp_path: Path) -> None:
    """Settings changed while a turn streams (a cell run beside the chat panel): its client stays open until
    the turn is done with it, then closes."""
    with FakeProvider([slow("A slow and steady reply.", delay=0.05), "next"]) as fake:
        nb = session(tmp_path, fake)
        said: list[str] = []

        async def turn() -> Any:
            nb.agent.on("assistant_delta", lambda env, p: changed(said, p))
            return await nb.aask("hi")

        def changed(said: list[str], payload: Any) -> None:
            if not said:  # the reply is streaming: the provider is replaced under it
                nb.configure(options={"temperature": 0.5})
                nb.model_provider()
            said.append(payload["text"])

        env = run_sync(turn)
        assert env["messages"][-1].content == "A slow and steady reply."
        assert open_to(fake) == 0  # closed once the turn was done with it
        run_sync(lambda: nb.aask("again"))
        assert fake.requests[-1]["json"]["temperature"] == 0.5 and open_to(fake) == 1
        nb.close()


def test_unloading_the_extension_closes_every_sessions_client(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeProvider(["one", "two"]) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        with loaded_shell(tmp_path) as shell:
            shell.run_cell_magic("brute", "-m openai:gpt-x --tools none --quiet", "hi")
            shell.run_cell_magic("brute", "-s other --quiet", "hello")
            assert open_to(fake) == 2  # each session's provider, kept alive for its next turn
        assert open_to(fake) == 0  # loaded_shell unloads the extension
