"""A vendor brute_nb has never heard of, added from outside: its profile, its transport and its provider, in a
package installed the way ``pip install`` leaves one (a ``.dist-info`` folder on ``sys.path`` with an
``entry_points.txt``), and no brute_nb file changed. It must work through ``-m toy:MODEL``, ``%brute models``, the
reply's cost, the warm-up and ``map`` (issue 40 item 1: a native provider is a profile, a transport and a provider).

The toy's "SDK" is a module of its own, so the warm-up can be seen importing it; its price is genai-prices' entry for
the model it names (a profile's ``price_id``), so a priced reply proves the cost went through the profile.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.cost import price
from brute_nb.providers import profiles
from tests import distributions

MODEL = "gpt-4o-mini"
"""A model genai-prices prices under the toy's ``price_id``."""

SDK = '''
"""The toy vendor's SDK: a client whose models endpoint answers (what ``%brute models`` lists)."""
MODELS = ["toy-small", "toy-large"]


class Page:
    data = [type("Model", (), {"id": name})() for name in MODELS]


class Models:
    async def list(self):
        return Page()


class Client:
    models = Models()
'''

PROFILE = '''
from brute_nb.providers.profiles import Profile

PROFILE = Profile(kind="toy", title="Toy", default_model="gpt-4o-mini", key_variables=("TOY_API_KEY",),
                  chosen_by=("TOY_API_KEY",), price_id="openai", sdk="toy_vendor_sdk",
                  warm_modules=("toy_vendor_sdk", "toy_vendor.provider"))
'''

TRANSPORT = '''
"""The toy's wire: a conversation is a list of {"who", "said"}; a reply is {"said", "read", "wrote"}. Pure."""
from brute_nb.message import Message, Role
from brute_nb.usage import Usage


def dump_all(messages):
    return [{"who": m.role, "said": m.content} for m in messages if m.role != "system"]


def wrap_one(reply, model):
    usage = Usage.reported(input_tokens=reply["read"], output_tokens=reply["wrote"])
    return Message(Role.ASSISTANT, reply["said"], meta={"model": model, **usage})
'''

PROVIDER = '''
from brute_nb.providers.base import Provider
from toy_vendor import transport


class ToyProvider(Provider):
    provider = "toy"

    @property
    def client(self):
        import toy_vendor_sdk

        return toy_vendor_sdk.Client()

    async def _complete(self, env):
        said = transport.dump_all(env["messages"])
        reply = {"said": "toy says: " + said[-1]["said"], "read": 1000, "wrote": 10}
        return transport.wrap_one(reply, self.model)


def provider(model, **options):
    return ToyProvider(model or "gpt-4o-mini", **options)
'''

ENTRY_POINTS = """\
[brute_nb.providers]
toy = toy_vendor.provider:provider

[brute_nb.profiles]
toy = toy_vendor.profile:PROFILE
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    package = site / "toy_vendor"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, source in (("profile", PROFILE), ("transport", TRANSPORT), ("provider", PROVIDER)):
        (package / f"{name}.py").write_text(textwrap.dedent(source))
    (site / "toy_vendor_sdk.py").write_text(SDK)
    distributions.install(site, "toy-vendor", ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("TOY_API_KEY", "toy-key-not-a-secret")
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(tmp_path / "demo.ipynb"))
    profiles.refresh()
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("toy_vendor")]:
        del sys.modules[name]
    profiles._registry.pop("toy", None)
    profiles.refresh()


def test_the_cell_reaches_the_toy_through_its_kind(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook import registry
    from tests.ipython_shell import loaded_shell

    with loaded_shell(toy) as shell:
        shell.run_cell_magic("brute", f"-m toy:{MODEL}", "hello there")
        reply = registry.current().log[-1]
        capsys.readouterr()
        shell.run_line_magic("brute", "models")
    out = capsys.readouterr().out
    assert reply.content == "toy says: hello there" and reply.meta["provider"] == "toy"
    assert reply.cost is not None and reply.cost == price({**reply.meta, "provider": "toy"}) > 0
    line = next((line for line in out.splitlines() if line.strip().startswith("toy ")), out)
    assert "TOY_API_KEY" in line and MODEL in line  # the key's source and the model it would use
    assert "toy-small" in out and "toy-large" in out  # the current model's provider lists its models


def test_the_toy_prices_as_its_profile_says(toy: Path) -> None:
    meta = {"provider": "toy", "model": MODEL, "input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": 0}
    assert price(meta) == price({**meta, "provider": "openai"}) > 0
    assert price({**meta, "provider": "toy-unknown"}) is None


def test_the_warm_up_imports_the_toys_sdk(toy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.notebook import warm

    monkeypatch.setenv("BRUTE_MODEL", f"toy:{MODEL}")
    assert "toy_vendor_sdk" not in sys.modules
    thread = warm.start()
    assert thread is not None
    thread.join(60)
    warm.request_out()
    assert {"toy_vendor_sdk", "toy_vendor.provider"} <= set(sys.modules)


def test_map_runs_its_rows_on_the_toy(toy: Path) -> None:
    from brute_nb.notebook import registry

    registry._registry = None
    df = pd.DataFrame({"word": ["one", "two"]}, index=[7, 3])
    out: Any = brute_nb.map("Say {word}", df, model=f"toy:{MODEL}", progress=False)
    assert list(out["reply"]) == ["toy says: Say one", "toy says: Say two"]
    assert out["error"].isna().all() and (out["input_tokens"] == 1000).all() and (out["cost"] > 0).all()


def test_a_builtin_kind_keeps_its_profile() -> None:
    """Another package's profile under a built-in's kind is never used (as a provider name: ``plugins``)."""
    impostor = profiles.Profile(kind="anthropic", title="Impostor", price_id="elsewhere")
    assert profiles.register(impostor).title == "Anthropic"
    found = profiles.of("anthropic")
    assert found is not None and found.title == "Anthropic"
    with pytest.raises(TypeError, match="no ':'"):
        profiles.register(profiles.Profile(kind="to:y", title="Toy"))
