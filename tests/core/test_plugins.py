"""Providers and tools by name through entry points: the built-ins, and a third-party package installed for real.

The third party is a temporary ``.dist-info`` folder on ``sys.path`` with an ``entry_points.txt``, which is what
``pip install`` leaves behind, so ``importlib.metadata`` finds it by the same route as any installed plugin.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from brute_nb import plugins
from brute_nb.errors import SettingsError
from brute_nb.notebook.settings import parse_model
from brute_nb.notebook.stack import select_tools
from brute_nb.providers import auto
from brute_nb.providers.auto import build
from brute_nb.tools.base import Tool

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from brute_nb.tools import tool


class Provider:
    def __init__(self, model, **options):
        self.model, self.options = model, options

    async def __call__(self, env):
        raise NotImplementedError


def provider(model, **options):
    return Provider(model, **options)


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return "sunny in " + city


@tool
def misnamed(city: str) -> str:
    """Registered under another name."""
    return city


def broken():
    raise AssertionError("never loaded")
'''

ENTRY_POINTS = """\
[brute_nb.providers]
myco = myco_brute:provider
anthropic = myco_brute:provider

[brute_nb.tools]
weather = myco_brute:weather
shell = myco_brute:weather
wrong = myco_brute:misnamed
missing = myco_brute:no_such_name
"""


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "myco_brute.py").write_text(PLUGIN)
    info = tmp_path / "myco_brute-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myco-brute\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("myco_brute", None)


def test_the_builtin_table_is_pyprojects_in_a_checkout_and_the_metadatas_in_a_wheel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert {g: plugins.builtin(g) for g in (plugins.PROVIDERS, plugins.TOOLS)} == declared
    monkeypatch.setattr(plugins, "SOURCE", tmp_path / "absent" / "pyproject.toml")  # as installed from a wheel
    plugins._cache.clear()
    installed = {ep.name: ep.value for ep in metadata.distribution("brute_nb").entry_points
                 .select(group=plugins.TOOLS)}
    assert plugins.builtin(plugins.TOOLS) == installed
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')  # brute_nb inside another project
    monkeypatch.setattr(plugins, "SOURCE", tmp_path / "pyproject.toml")
    assert plugins.builtin(plugins.TOOLS) == installed


@pytest.mark.parametrize("name", sorted(plugins.builtin(plugins.TOOLS)))
def test_every_builtin_tool_loads_under_its_own_name(name: str) -> None:
    tool = plugins.load(plugins.TOOLS, name)
    assert isinstance(tool, Tool) or (isinstance(tool, type) and issubclass(tool, Tool))
    assert tool.name == name


def test_brutes_twelve_are_registered_in_the_one_table() -> None:
    """``tools.ALL`` is Brute's API (its twelve, in its order), not a second registry: each is found by its name."""
    from brute_nb.tools import ALL

    assert all(plugins.load(plugins.TOOLS, cls.name) is cls for cls in ALL)


def test_every_builtin_provider_is_a_factory() -> None:
    for name in plugins.builtin(plugins.PROVIDERS):
        assert callable(plugins.load(plugins.PROVIDERS, name)), name


def test_builtins_resolve_with_no_metadata_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stale or missing package metadata (an old editable install) still finds every built-in."""
    monkeypatch.setattr(plugins.metadata, "entry_points", lambda **_: [])
    assert plugins.names(plugins.TOOLS) == list(plugins.builtin(plugins.TOOLS))
    assert [t.name for t in select_tools("read,+python")] == ["read", "python"]
    assert type(build("anthropic", "claude-x", api_key="k")).__name__ == "AnthropicMessages"


def test_an_unknown_name_lists_what_is_installed(third_party: None) -> None:
    with pytest.raises(SettingsError, match=r"unknown tool nope; available: .*\bweather\b"):
        select_tools("nope")
    with pytest.raises(SettingsError, match=r"providers: .*\bmyco\b"):
        parse_model("nope:model")


def test_a_third_party_provider_is_found_by_its_prefix(third_party: None) -> None:
    assert "myco" not in plugins.builtin(plugins.PROVIDERS)
    assert parse_model("myco:big-1") == "myco:big-1"
    provider: Any = auto("myco:big-1", temperature=0.5)
    assert type(provider).__name__ == "Provider"
    assert (provider.model, provider.options) == ("big-1", {"temperature": 0.5})


def test_a_third_party_tool_is_found_by_its_name(third_party: None) -> None:
    chosen = select_tools("read,weather")
    assert [t.name for t in chosen] == ["read", "weather"]
    assert "weather" in [t.name for t in select_tools("+weather")]
    assert "weather" not in [t.name for t in select_tools("all")]  # a plugin is opt-in, never in "all"


def test_a_plugin_never_replaces_a_builtin(third_party: None) -> None:
    listed = {(p.name, p.distribution): p for p in plugins.installed(plugins.TOOLS)}
    assert listed["shell", "myco_brute"].shadowed
    assert not listed["shell", "brute_nb"].shadowed
    assert select_tools("shell")[0].__name__ == "Shell"
    assert type(build("anthropic", "claude-x", api_key="k")).__name__ == "AnthropicMessages"


def test_a_bad_plugin_is_named_with_its_package(third_party: None) -> None:
    with pytest.raises(SettingsError, match=r"plugin 'wrong' is a FunctionTool named 'misnamed'"):
        select_tools("wrong")
    with pytest.raises(SettingsError, match=r"'missing' \(myco_brute:no_such_name, installed by myco_brute\) "
                                            r"failed to load: AttributeError"):
        select_tools("missing")


def test_plugins_lists_builtins_and_third_parties(third_party: None, capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook.commands.model_commands import installed

    installed()
    out = capsys.readouterr().out
    assert "providers (-m PREFIX:MODEL" in out and "tools (--tools NAME" in out
    assert "myco             myco_brute   myco_brute:provider" in out
    assert "weather" in out and "(ignored: a built-in has this name)" in out
    assert "python           brute_nb     brute_nb.notebook.kernel_tools.python_tool:PYTHON" in out
