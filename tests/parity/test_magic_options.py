"""``%%brute --schema`` in a real IPython shell, over a NotebookAgent whose model is the fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from pydantic import BaseModel

from brute_nb.notebook.front.magics import BruteMagics
from brute_nb.notebook.registry import Registry
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider


class Person(BaseModel):
    name: str
    age: int


@pytest.fixture
def shell(tmp_path: Path, fake_provider: FakeProvider) -> Iterator[tuple[Any, NotebookAgent]]:
    ip = InteractiveShell.instance()
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path, tools=[]))
    nb.provider = OpenAIChat("gpt-fake", base_url=fake_provider.openai_base_url, api_key=fake_provider.api_key,
                             max_retries=0)
    registry = Registry(ip)
    registry.current = lambda: nb  # type: ignore[method-assign]
    ip.register_magics(BruteMagics(ip, registry))
    ip.user_ns["Person"] = Person
    try:
        yield ip, nb
    finally:
        InteractiveShell.clear_instance()


def test_schema_option_parses_the_reply(shell: tuple[Any, NotebookAgent], fake_provider: FakeProvider) -> None:
    ip, nb = shell
    fake_provider.add('{"name": "Ada", "age": 36}')
    ip.run_cell_magic("brute", "--schema Person --quiet", "Who wrote the first program?")
    assert nb.last.parsed == Person(name="Ada", age=36)
    assert fake_provider.requests[0]["json"]["response_format"]["json_schema"]["name"] == "Person"


def test_schema_option_errors_are_short(shell: tuple[Any, NotebookAgent], fake_provider: FakeProvider) -> None:
    ip, nb = shell
    with pytest.raises(UsageError, match="--schema Persn: no such name"):
        ip.run_cell_magic("brute", "--schema Persn", "x")
    ip.user_ns["n"] = 3
    with pytest.raises(UsageError, match="pydantic model class or a JSON-schema dict"):
        ip.run_cell_magic("brute", "--schema n", "x")
    fake_provider.add('{"name": "Ada"}')
    with pytest.raises(UsageError, match="age: Field required"):
        ip.run_cell_magic("brute", "--schema Person --quiet", "x")
    assert nb.last.content == '{"name": "Ada"}'


def test_attach_option_and_a_figure_in_the_prompt(shell: tuple[Any, NotebookAgent], fake_provider: FakeProvider,
                                                   tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    ip, nb = shell
    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([3, 1, 2])
    ip.user_ns["fig"] = fig
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    fake_provider.add("It dips, then rises.")
    ip.run_cell_magic("brute", f"--attach {tmp_path / 'report.pdf'} --quiet", "What is wrong with {fig}?")
    sent = fake_provider.requests[0]["json"]["messages"][-1]
    assert sent["content"][0] == {"type": "text", "text": "What is wrong with [attached image: fig]?"}
    assert [p["type"] for p in sent["content"][1:]] == ["image_url", "file"]
    user = [m for m in nb.log if m.role == "user"][-1]
    assert [a.media_type for a in user.attachments] == ["image/png", "application/pdf"]
    assert (nb.session_path.parent / "attachments").is_dir()
    with pytest.raises(UsageError, match="--attach: cannot attach"):
        ip.run_cell_magic("brute", "--attach missing.pdf", "x")
