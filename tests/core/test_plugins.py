"""Providers and tools by name through entry points: the built-ins, and a third-party package installed for real.

The third party is a temporary ``.dist-info`` folder on ``sys.path`` with an ``entry_points.txt``, which is what
``pip install`` leaves behind, so ``importlib.metadata`` finds it by the same route as any installed plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from brute_nb import plugins
from brute_nb.errors import BruteError, SettingsError
from brute_nb.notebook import kernel_tools
from brute_nb.notebook.settings import parse_model
from brute_nb.notebook.stack import select_tools
from brute_nb.providers import auto
from brute_nb.providers.auto import build
from brute_nb.tools.base import Tool
from tests import distributions

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
    distributions.install(tmp_path, "myco-brute", ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("myco_brute", None)


def test_the_core_table_names_no_notebook_module_and_pyproject_declares_none() -> None:
    """The built-ins are ``plugins.BUILTINS`` in code, not a table in ``pyproject.toml`` read at run time (which
    named the notebook's modules from the core's table); the kernel's tools are the notebook's own table."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("entry-points", {})
    assert not {plugins.PROVIDERS, plugins.TOOLS} & set(declared)
    core = [value for table in plugins.BUILTINS.values() for value in table.values()]
    assert core and not [v for v in core if v.startswith("brute_nb.notebook")]
    assert all(v.startswith("brute_nb.notebook.kernel_tools.") for v in kernel_tools.TOOLS.values())
    assert not set(kernel_tools.TOOLS) & set(plugins.BUILTINS[plugins.TOOLS])


REGISTERED_AT_LOAD = """
import json, IPython
from brute_nb import plugins
before = sorted(plugins.builtin(plugins.TOOLS))
IPython.InteractiveShell.instance().run_line_magic('load_ext', 'brute_nb')
print(json.dumps([before, sorted(plugins.builtin(plugins.TOOLS))]))
"""


def test_the_kernels_tools_are_registered_at_load_ext(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BRUTE_NB_OVERFLOW_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", REGISTERED_AT_LOAD], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout.splitlines()[-1])
    assert before == sorted(plugins.BUILTINS[plugins.TOOLS])
    assert after == sorted([*before, *kernel_tools.TOOLS])


def test_a_name_registered_twice_must_mean_the_same_thing() -> None:
    plugins.register(plugins.TOOLS, "read", plugins.BUILTINS[plugins.TOOLS]["read"])  # again: nothing changes
    with pytest.raises(BruteError, match=r"'read' is already 'brute_nb.tools.builtin.fs_read:FSRead', not 'x:y'"):
        plugins.register(plugins.TOOLS, "read", "x:y")
    with pytest.raises(BruteError, match=r"unknown group 'brute_nb.widgets'"):
        plugins.register("brute_nb.widgets", "w", "x:y")
    assert plugins.load(plugins.TOOLS, "read").__name__ == "FSRead"


@pytest.mark.parametrize("name", sorted({**plugins.BUILTINS[plugins.TOOLS], **kernel_tools.TOOLS}))
def test_every_builtin_tool_loads_under_its_own_name(name: str) -> None:
    kernel_tools.register()
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
    monkeypatch.setattr(metadata, "entry_points", lambda **_: [])
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

    kernel_tools.register()  # as %load_ext does
    installed()
    out = capsys.readouterr().out
    assert "providers (-m PREFIX:MODEL" in out and "tools (--tools NAME" in out
    assert "myco             myco_brute   myco_brute:provider" in out
    assert "weather" in out and "(ignored: a built-in has this name)" in out
    assert "python           brute_nb     brute_nb.notebook.kernel_tools.python_tool:PYTHON" in out
