"""``Env`` declares exactly the keys ``brute_nb.agent`` documents: one list of the env's keys, in two forms a test
keeps equal (the docstring a person reads, the ``TypedDict`` mypy checks every ``env["key"]`` against)."""

from __future__ import annotations

import importlib
import re

from brute_nb.env import App, Env

AGENT = importlib.import_module("brute_nb.agent")  # the module: ``brute_nb.agent`` is the builder function


def documented() -> list[str]:
    """The first column of each key table in ``brute_nb.agent``'s docstring."""
    return re.findall(r"^``(\w+)``\s{2,}", AGENT.__doc__ or "", flags=re.MULTILINE)


def test_env_declares_every_key_agent_documents_and_no_other() -> None:
    keys = documented()
    assert len(keys) == len(set(keys)), keys
    assert {"messages", "events", "should_exit", "approve", "cell_front"} <= set(keys)  # both tables were read
    assert set(keys) == set(Env.__annotations__)


def test_a_new_turns_env_holds_only_declared_keys() -> None:
    env = AGENT.agent().run(lambda env: None).new_env("hi")
    assert set(env) <= set(Env.__annotations__)


def test_app_lives_beside_env_and_keeps_its_old_import_path() -> None:
    assert AGENT.App is App
