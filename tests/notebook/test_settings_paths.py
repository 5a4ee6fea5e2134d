"""The three ways to set a session's settings agree: ``%%brute --key value``, ``%brute config key=value`` and
``brute_nb.configure(key=value)`` give the same settings for a good value and the same message for a bad one.

Each path runs in a fresh in-process IPython shell with the extension loaded (a fresh registry), so nothing one
path set can make another pass. A ``%%brute`` cell with a good value runs its turn against a scripted model.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import brute_nb
from brute_nb.errors import BruteError
from brute_nb.notebook.registry import registry
from brute_nb.notebook.settings import Settings
from brute_nb.testing import Scripted

Outcome = Settings | str
"""A path's result: the session's settings, or the message of the error it raised."""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(tmp_path / "nb.ipynb"))
    monkeypatch.setenv("BRUTE_NB_OVERFLOW_DIR", str(tmp_path / "overflow"))
    (tmp_path / "tape.cassette.jsonl").write_text("")
    server = {"command": sys.executable, "args": [str(Path(__file__).parents[1] / "tools" / "mcp_server.py")]}
    (tmp_path / "servers.json").write_text(json.dumps({"mcpServers": {"fs": server}}))
    return tmp_path


def _shell(run: Callable[[Any], None]) -> Outcome:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "brute_nb")
    try:
        registry().current().provider = Scripted(["ok"])
        try:
            run(ip)
        except (UsageError, BruteError, ValueError) as exc:
            return str(exc)
        return registry().current().settings
    finally:
        ip.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()


FLAGS = {"options": "-o"}


def via_cell(key: str, value: str) -> Outcome:
    flag = FLAGS.get(key, "--" + key.replace("_", "-"))

    def run(ip: Any) -> None:
        result = ip.run_cell(f"%%brute {flag} {shlex.quote(value)} --quiet\nhi")
        if result.error_in_exec is not None:
            raise result.error_in_exec

    return _shell(run)


def via_config(key: str, value: str) -> Outcome:
    return _shell(lambda ip: ip.run_line_magic("brute", f"config {shlex.quote(f'{key}={value}')}"))


def via_configure(key: str, value: Any) -> Outcome:
    return _shell(lambda ip: brute_nb.configure(**{key: value}))


# Every setting ``%%brute`` has a flag for, with a good and a bad value ("{tmp}" is the test's folder).
CELL_SETTINGS = [
    ("model", "openai:gpt-x", "nope"),
    ("tools", "read,fs_search", "read,nope"),
    ("system", "Be brief.", None),
    ("max_iterations", "7", "0"),
    ("root", "{tmp}", "{tmp}/no/such"),
    ("replay", "{tmp}/tape.cassette.jsonl", "{tmp}/missing.jsonl"),
    ("record", "{tmp}/new.cassette.jsonl", None),
    ("approve", "shell=allow,write=ask", "shell=maybe"),
    ("budget", "tokens=5000,tools=3", "tokns=5"),
    ("mcp", "{tmp}/servers.json", "{tmp}/missing.json"),
    ("options", "temperature=0.2", "temperature"),
    ("base_url", "http://127.0.0.1:9/v1", None),
]
# Settings only ``%brute config`` and ``configure`` set.
CONFIG_SETTINGS = [
    ("window", "5000", "0"),
    ("summarize", "false", "maybe"),
    ("context", "3", "-1"),
    ("stall_timeout", "120", "0"),
]


@pytest.mark.parametrize(("key", "good", "bad"), CELL_SETTINGS, ids=[s[0] for s in CELL_SETTINGS])
def test_the_cell_the_config_and_configure_agree(env: Path, key: str, good: str, bad: str | None) -> None:
    good = good.format(tmp=env)
    results = [via_cell(key, good), via_config(key, good), via_configure(key, good)]
    assert isinstance(results[0], Settings), results[0]
    assert results[0] != Settings(), "the value changed nothing, so agreeing proves nothing"
    assert results[1] == results[0] and results[2] == results[0]
    if bad is not None:
        bad = bad.format(tmp=env)
        errors = [via_cell(key, bad), via_config(key, bad), via_configure(key, bad)]
        assert isinstance(errors[0], str), f"{key}={bad} was accepted"
        assert errors[1] == errors[0] and errors[2] == errors[0]


@pytest.mark.parametrize(("key", "good", "bad"), CONFIG_SETTINGS, ids=[s[0] for s in CONFIG_SETTINGS])
def test_config_and_configure_agree(env: Path, key: str, good: str, bad: str) -> None:
    results = [via_config(key, good), via_configure(key, good)]
    assert isinstance(results[0], Settings) and results[0] != Settings() and results[1] == results[0]
    errors = [via_config(key, bad), via_configure(key, bad)]
    assert isinstance(errors[0], str) and errors[1] == errors[0]


def test_configure_refuses_a_root_that_is_no_folder(env: Path) -> None:
    # The disagreement that opened the issue: the cell refused it, configure() took it.
    assert via_configure("root", "/no/such") == "--root '/no/such' is not a folder"


def test_python_values_give_what_their_text_gives(env: Path) -> None:
    for key, value, text in [("max_iterations", 7, "7"), ("root", env, str(env)), ("summarize", False, "false"),
                             ("approve", {"shell": "allow"}, "shell=allow"), ("budget", {"tools": 3}, "tools=3"),
                             ("options", {"temperature": 0.2}, "temperature=0.2")]:
        assert via_configure(key, value) == via_config(key, text), key


def test_every_problem_is_named_at_once(env: Path) -> None:
    message = _shell(lambda ip: brute_nb.configure(max_iterations="0", colour="blue", summarize="maybe"))
    assert isinstance(message, str)
    for part in ("unknown setting 'colour'", "--max-iterations must be at least 1", "summarize takes true or false"):
        assert part in message


SET = {key: good for key, good, _ in CELL_SETTINGS + CONFIG_SETTINGS} | {
    "api_key": "sk-typed-for-the-server", "server_tools": "web_search", "final_answer": "false",
    "confirm_above": "0.5"}
"""A value for every session setting that is not its default."""
NONE_KEEPS_ITS_MEANING = {"tools": "no tools", "api_key": "a server that takes no key"}
"""Settings whose ``none`` says something of its own; ``KEY=default`` (or ``KEY=``) puts them back."""
NO_NONE = ("max_iterations", "window", "summarize", "final_answer")
"""Settings that always have a value (a number, true or false): ``none`` is refused, naming ``default``."""


def set_then(key: str, value: str, reset: str) -> Outcome:
    def run(ip: Any) -> None:
        ip.run_line_magic("brute", f"config {shlex.quote(f'{key}={value}')}")
        assert registry().current().settings != Settings(), f"{key}={value} changed nothing"
        ip.run_line_magic("brute", f"config {key}={reset}")

    return _shell(run)


@pytest.mark.parametrize("key", [k for k in SET], ids=list(SET))
def test_every_setting_goes_back_to_its_default(env: Path, key: str) -> None:
    """Issue 39: ``%brute config`` set a budget no word could take away, and refused ``api_key=`` though its help
    said it clears. ``KEY=default`` and ``KEY=`` put any setting back; ``KEY=none`` too, where none is nothing."""
    value = SET[key].format(tmp=env)
    assert set_then(key, value, "default") == Settings()
    assert set_then(key, value, "") == Settings()
    if key in NO_NONE:
        message = set_then(key, value, "none")
        assert isinstance(message, str) and f"{key}=default" in message, message
    elif key not in NONE_KEEPS_ITS_MEANING:
        assert set_then(key, value, "none") == Settings(), key


def test_none_keeps_its_own_meaning_where_it_has_one(env: Path) -> None:
    settings = set_then("tools", "read", "none")
    assert isinstance(settings, Settings) and settings.tools == "none"
    settings = set_then("api_key", "sk-typed-for-the-server", "none")
    assert isinstance(settings, Settings) and settings.api_key == "none"


def test_the_kernels_settings_go_back_to_their_defaults(env: Path) -> None:
    def run(ip: Any) -> None:
        ip.run_line_magic("brute", "config debug=true notebook=other.ipynb")
        assert registry().debug and registry().settings.notebook == "other.ipynb"
        ip.run_line_magic("brute", "config debug=default notebook=none")
        assert not registry().debug and registry().settings.notebook is None

    assert isinstance(_shell(run), Settings)


def test_every_setting_is_covered() -> None:
    from brute_nb.notebook.settings import KERNEL_KEYS, KEYS

    assert set(SET) == set(KEYS) - set(KERNEL_KEYS)
