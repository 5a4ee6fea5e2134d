"""A ``%%brute`` turn in an in-process IPython shell with brute_nb loaded, its replies scripted on the loopback
``FakeProvider`` and sent through the real ``openai`` SDK, the python and notebook tools allowed (no one could
answer an approval question here)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from brute_nb.testing import FakeProvider, call, reply
from tests.ipython_shell import loaded_shell

KEYS = ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "BRUTE_NB_NOTEBOOK")


class Bench:
    def __init__(self, shell: Any, fake: FakeProvider, folder: Path) -> None:
        self.shell, self.fake, self.folder = shell, fake, folder
        self.ns: dict[str, Any] = shell.user_ns

    def turn(self, prompt: str, *replies: Any) -> None:
        """One ``%%brute`` cell: the model's replies scripted, the python and notebook tools allowed."""
        self.fake.add(*replies)
        self.shell.run_cell_magic(
            "brute", f"-m openai:gpt-fake --base-url {self.fake.openai_base_url} -o api_key=env:FAKE_KEY "
                     "--tools +python --approve python=allow,notebook=allow,write=allow --quiet", prompt)

    def python(self, prompt: str, *codes: str) -> None:
        """A turn whose model runs each of ``codes`` with the python tool, then says it is done."""
        self.turn(prompt, *(reply("Running.", call("python", {"code": code})) for code in codes), "Done.")

    def brute(self, line: str, capsys: pytest.CaptureFixture[str]) -> str:
        capsys.readouterr()
        self.shell.run_line_magic("brute", line)
        return capsys.readouterr().out


@contextmanager
def turn_bench(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    """A shell whose notebook and root are ``folder``, and the fake its turns talk to."""
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / "config"))
    with FakeProvider() as fake, loaded_shell(folder) as shell:
        monkeypatch.setenv("FAKE_KEY", fake.api_key)
        yield Bench(shell, fake, folder)
