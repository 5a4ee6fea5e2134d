"""The provider profiles registry and every entry point that takes a provider, model, alias or base URL string from
the user, against the shared hostile tables: the path table's names (what a mistyped ``-m`` may hold), the URL table's
refused URLs (``--base-url``), markup, values that are not text, and a key pasted where a name goes (the keys table's
concern: a key must not land in an output, a session or a config file a notebook leaves behind).

Whatever comes, each entry point returns or raises a ``BruteError`` (IPython's ``UsageError`` for a magic's usage)
that says what is wrong, never another exception; a key pasted where a name goes is refused without being
repeated, and is written nowhere. A third party's profile is found only under its own kind.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb.errors import BruteError
from brute_nb.providers import profiles
from tests import distributions
from tests.security.hostile import URLS, Case
from tests.security.hostile.paths import NAMES, make_outside

PASTED = {
    "anthropic": "sk-ant-api03-" + "Q7xR2mZk9LpV4tWbN8cYdF3hJ6gS1aEoU5iT0",
    "openai": "sk-proj-" + "Hk3Lm8Nq2Rs7Tv1Wx6Yz4Ab9Cd0Ef5Gh2Ij7Kl",
    "gemini": "AIza" + "SyB3kLm9NpQ2rStUvWx4YzAbCdEfGh5IjKl7Mn",
}
"""Keys of the shapes the profiles know (``Profile.key_prefixes``), in no environment and no keys file: the
redaction cannot know them, so only not repeating them keeps them out of a notebook's outputs."""


def _cases() -> list[Case]:
    strings = [Case(c.id, c.data, c.expect, c.tags) for c in NAMES]
    strings += [Case(f"url-{c.id}", c.data["url"], c.expect, c.tags | {"url"}) for c in URLS if "refused" in c.tags]
    strings += [Case(f"key-{kind}", key, "a key pasted where a name goes", frozenset({"key"}))
                for kind, key in PASTED.items()]
    strings += [Case(f"model-is-a-key-{kind}", f"{kind}:{key}", "a key pasted where the model goes",
                     frozenset({"key"})) for kind, key in PASTED.items()]
    strings += [Case("markup", "<img src=x onerror=alert(1)>:m", "markup in a name", frozenset()),
                Case("escapes", "\x1b[31manthropic\x1b[0m:m", "terminal escapes in a name", frozenset()),
                Case("blank", "   ", "only spaces", frozenset()),
                Case("colons", ":::", "colons and nothing else", frozenset())]
    strings += [Case(f"not-text-{type(v).__name__}", v, "a value that is not text", frozenset({"not-text"}))
                for v in (5, None, b"anthropic:claude", ["anthropic"])]
    return strings


CASES = _cases()


def _model_option(value: Any) -> Any:
    from brute_nb.notebook.settings import parse_model

    return parse_model(value)


def _auto(value: Any) -> Any:
    from brute_nb.providers import auto

    return auto(value).label


def _keys(command: str) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        from brute_nb.providers.catalog import keys_command

        def ask(prompt: str) -> str:
            raise AssertionError(f"a key was asked for {value!r}")

        return keys_command([command, value], ask)

    return run


def _alias(position: int) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        from brute_nb.notebook.commands.model_commands import alias

        words = ["fast", "anthropic:claude-haiku-4-5"]
        words[position] = value
        return alias(words)

    return run


def _model_of(value: Any) -> Any:
    from brute_nb.providers.catalog import key_source, model_of

    return (model_of(value), key_source(value))


def _base_url(value: Any) -> Any:
    from brute_nb.notebook.settings import parse_base_url

    return parse_base_url(value)


ENTRIES: dict[str, Callable[[Any], Any]] = {
    "profile-of": profiles.of,
    "profile-for-model": profiles.for_model,
    "model-option": _model_option,
    "auto": _auto,
    "keys-set": _keys("set"),
    "keys-remove": _keys("remove"),
    "alias-name": _alias(0),
    "alias-target": _alias(1),
    "model-of": _model_of,
    "base-url": _base_url,
}
QUIET = {"profile-of", "profile-for-model", "model-of"}
"""Lookups: an unknown name is None (or nothing), never an error."""
PYTHON = {"profile-of", "profile-for-model", "model-option", "auto", "base-url"}
"""The entry points Python code reaches with any value (``configure(model=...)``, ``auto(...)``); the others take
the words of a magic's line, always text."""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A clean environment but one key (so ``auto`` has a provider to build), and config files in ``tmp_path``."""
    from brute_nb.redact import KEY_VARIABLES

    for name in (*KEY_VARIABLES, "BRUTE_MODEL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-users-own-key-0001")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("BRUTE_NB_CONFIG_DIR", str(tmp_path / "cfg" / "brute_nb"))
    yield tmp_path / "cfg"


def written(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()) if folder.exists() else ""


PAIRS = [pytest.param(entry, case, id=f"{entry}-{case.id}") for entry in sorted(ENTRIES) for case in CASES
         if "not-text" not in case.tags or entry in PYTHON]


@pytest.mark.parametrize(("entry", "case"), PAIRS)
def test_a_hostile_name_is_answered_or_refused_clearly(config: Path, tmp_path: Path, entry: str, case: Case,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    value = case.data(make_outside(tmp_path)) if callable(case.data) else case.data

    try:
        result: Any = ENTRIES[entry](value)
    except (BruteError, UsageError) as exc:
        result = exc
        assert entry not in QUIET, f"{case.expect}: a lookup raised {exc!r}"
        assert str(exc).strip(), f"{case.expect}: the error says nothing"
    shown = f"{result} {capsys.readouterr()}"

    if "key" in case.tags:
        key = str(value).rpartition(":")[2]
        assert key not in shown, f"{case.expect}: {entry} repeated it: {shown[:300]}"
        assert key not in written(config), f"{case.expect}: {entry} saved it"
        assert entry in QUIET or isinstance(result, BaseException), f"{case.expect}: {entry} took it: {shown[:200]}"
    if "url" in case.tags and entry == "base-url":
        assert isinstance(result, BruteError), f"{case.expect}: --base-url took it: {result!r}"


PROFILE = '''
from brute_nb.providers.profiles import Profile
from brute_nb.providers.profiles.anthropic import PROFILES

PASSING_OFF = next(p for p in PROFILES if p.kind == "anthropic")
"""Declared as "toy2": a built-in's profile, with its key variables and its host."""
OTHER = Profile(kind="somebody-else", title="Else", key_variables=("OPENAI_API_KEY",), base_url="https://else.test")
NOT_ONE = {"kind": "toy4"}
'''


@pytest.fixture
def declared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    site = tmp_path / "site"
    (site / "hostile_profiles_pkg").mkdir(parents=True)
    (site / "hostile_profiles_pkg" / "__init__.py").write_text(PROFILE)
    distributions.install(site, "hostile-profiles", "[brute_nb.profiles]\ntoy2 = hostile_profiles_pkg:PASSING_OFF\n"
                          "toy3 = hostile_profiles_pkg:OTHER\ntoy4 = hostile_profiles_pkg:NOT_ONE\n")
    monkeypatch.syspath_prepend(str(site))
    profiles.refresh()
    yield
    sys.modules.pop("hostile_profiles_pkg", None)
    for kind in ("toy2", "toy3", "toy4", "somebody-else"):
        profiles._registry.pop(kind, None)
    profiles.refresh()


@pytest.mark.parametrize("kind", ["toy2", "toy3", "toy4"])
def test_a_profile_is_found_only_under_its_own_kind(declared: None, kind: str) -> None:
    """A package's ``brute_nb.profiles`` entry named ``toy2`` that holds another kind's profile (a built-in's, with its
    key variables and host, or a stranger's) would make ``-m toy2:...`` read that vendor's key for toy2's server:
    refused, naming the package; and an entry that is no profile at all is named too, not taken for none."""
    with pytest.raises(BruteError, match="hostile_profiles") as raised:
        profiles.of(kind)
    assert kind in str(raised.value)
    assert profiles.of("anthropic") is not None and profiles.of("anthropic").kind == "anthropic"  # type: ignore[union-attr]
    assert profiles.of("somebody-else") is None  # never entered under the kind it claimed


def test_the_everyday_names_still_work(config: Path) -> None:
    from brute_nb.notebook.settings import parse_model

    assert parse_model("anthropic:claude-haiku-4-5") == "anthropic:claude-haiku-4-5"
    assert profiles.for_model("claude-haiku-4-5") is profiles.of("anthropic")
    assert os.environ["ANTHROPIC_API_KEY"].startswith("sk-ant-")


def _map_model(key: str, folder: Path) -> Any:
    import pandas as pd

    from brute_nb.map.api import map_rows
    from brute_nb.map.context import MapContext

    return map_rows("Say {w}", pd.DataFrame({"w": ["a"]}), model=key, progress=False,
                    context=MapContext(sessions=folder / "nb.brute"))


def _map_escalate(key: str, folder: Path) -> Any:
    import pandas as pd
    import pydantic

    from brute_nb.map.api import map_rows
    from brute_nb.map.context import MapContext

    schema = pydantic.create_model("Answer", value=(int, ...))
    return map_rows("Say {w}", pd.DataFrame({"w": ["a"]}), model="anthropic:claude-haiku-4-5", schema=schema,
                    escalate=[key], progress=False, context=MapContext(sessions=folder / "nb.brute"))


def _compare(key: str, folder: Path) -> Any:
    from brute_nb.map.comparison import compare
    from brute_nb.map.context import MapContext

    (folder / "nb.brute").mkdir(exist_ok=True)
    (folder / "nb.brute" / "chat.jsonl").write_text('{"role": "user", "content": "hi"}\n'
                                                    '{"role": "assistant", "content": "hello"}\n')
    return compare("chat", models=[f"anthropic:{key}"], context=MapContext(sessions=folder / "nb.brute"))


MODEL_NAMES: dict[str, Callable[[str, Path], Any]] = {"map-model": _map_model, "map-escalate": _map_escalate,
                                                      "compare-models": _compare}


@pytest.mark.parametrize("entry", sorted(MODEL_NAMES))
@pytest.mark.parametrize("kind", sorted(PASTED))
def test_a_key_given_as_a_runs_model_is_refused_unrepeated(config: Path, tmp_path: Path, entry: str,
                                                           kind: str) -> None:
    """``map(model=...)``, ``escalate=[...]`` and ``compare(models=[...])`` name models the frame shows as columns
    and labels: a key given there is refused before any row or turn, without being repeated."""
    key = PASTED[kind]
    with pytest.raises(BruteError) as raised:
        MODEL_NAMES[entry](key, tmp_path)
    assert key not in str(raised.value) and "API key" in str(raised.value), raised.value
    assert key not in written(tmp_path)
