"""Issue 14 item 8: a prompt that quotes code never runs it while ``{...}`` is filled from the namespace."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from brute_nb.fill import expand


class Spy:
    """Records every call a prompt could make on a user's object."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.table = {"lr": 0.1, 2: "two", ("a", 1): "pair"}
        self.items = [10, 20, 30, 40]

    def cleanup(self) -> str:
        self.calls.append("cleanup")
        return "deleted everything"

    def __add__(self, other: Any) -> str:
        self.calls.append("__add__")
        return "added"

    @property
    def shape(self) -> tuple[int, int]:
        return (3, 4)


@pytest.fixture
def ns() -> dict[str, Any]:
    spy = Spy()

    def cleanup() -> str:
        spy.calls.append("cleanup()")
        return "deleted everything"

    return {"spy": spy, "cleanup": cleanup, "n": 41, "name": "ada"}


@pytest.mark.parametrize("template", [
    'print(f"{cleanup()}")',
    "{spy.cleanup()}",
    "{spy + 1}",
    "{[cleanup() for _ in 'x']}",
    "{(lambda: cleanup())()}",
    "{spy.table[cleanup()]}",
    "{spy.items[len(name)]}",
    "{spy.__class__.__init__}",
    "{__import__('os').getcwd()}",
    "{name.__len__}",
    "{(n := 3)}",
    "{n if cleanup() else n}",
])
def test_code_in_a_field_is_left_as_written_and_never_runs(template: str, ns: dict[str, Any]) -> None:
    assert expand(template, ns) == template
    assert ns["spy"].calls == []


@pytest.mark.parametrize(("template", "expected"), [
    ("{name}", "ada"),
    ("{spy.shape}", "(3, 4)"),  # a property runs: documented, it is how df.shape reads
    ('{spy.table["lr"]}', "0.1"),
    ("{spy.table[2]}", "two"),
    ("{spy.table['a', 1]}", "pair"),
    ("{spy.items[-1]}", "40"),
    ("{spy.items[1:3]}", "[20, 30]"),
    ("{n!r:>4}", "  41"),
])
def test_names_attributes_and_literal_subscripts_are_filled(template: str, expected: str,
                                                            ns: dict[str, Any]) -> None:
    assert expand(template, ns) == expected
    assert ns["spy"].calls == []


def test_calls_need_the_explicit_opt_in(ns: dict[str, Any]) -> None:
    assert expand("{cleanup()} and {n + 1}", ns, calls=True) == "deleted everything and 42"
    assert ns["spy"].calls == ["cleanup()"]


def test_the_cell_magic_does_not_run_code_in_the_prompt(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.notebook import runner
    from brute_nb.notebook.front.magics import BruteMagics
    from brute_nb.notebook.registry import Registry
    from brute_nb.testing.scripted import Scripted

    sent: list[str] = []
    monkeypatch.setattr(runner, "run_turn", lambda nb, prompt, **kw: sent.append(prompt))
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    try:
        ran: list[str] = []
        shell.user_ns["cleanup"] = lambda: ran.append("ran") or "gone"
        reg = Registry(shell)
        reg.settings.notebook = str(tmp_path / "demo.ipynb")
        reg.current().provider = Scripted([])
        magics = BruteMagics(shell, reg)
        magics.brute("", 'why does print(f"{cleanup()}") fail?')
        assert ran == [] and sent == ['why does print(f"{cleanup()}") fail?']
        magics.brute("--eval", "{cleanup()}")
        assert ran == ["ran"] and sent[-1] == "gone"
    finally:
        InteractiveShell.clear_instance()
