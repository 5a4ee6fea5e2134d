"""The map engine takes a context and imports nothing of the notebook: plain Python runs it with the default one,
the notebook's front door hands it the kernel's, and a context given to the call wins over both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import brute_nb
from brute_nb.map.context import MapContext, default_context
from brute_nb.testing import FakeProvider
from tests.map.conftest import MODEL, paid

PLAIN = """
import json, sys
import pandas as pd
from brute_nb.map.api import map_rows
from brute_nb.testing import Scripted

out = map_rows("Say {w}", pd.DataFrame({"w": ["a"]}), model=Scripted(["hi"]), progress=False, name="plain")
loaded = sorted(m for m in sys.modules if m.startswith("brute_nb.notebook."))
print(json.dumps({"reply": out["reply"].tolist(), "session": out["session"].tolist(), "notebook": loaded}))
"""


def test_plain_python_runs_the_engine_with_the_default_context_and_no_notebook_module(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "BRUTE_NB_NOTEBOOK"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(brute_nb.__file__).parent.parent), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", PLAIN], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["reply"] == ["hi"] and result["notebook"] == []
    assert Path(result["session"][0]).is_relative_to(tmp_path / "notebook.brute" / "map" / "plain")
    assert (tmp_path / "notebook.brute" / "map" / "plain.jsonl").is_file()  # the row was cached as it finished


def test_the_default_folder_is_the_one_a_kernel_that_cannot_find_its_notebook_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.notebook.paths import locate_notebook, session_dir

    for name in ("BRUTE_NB_NOTEBOOK", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    located = locate_notebook()
    assert located.source == "cwd" and default_context().sessions == session_dir(located)


def test_load_ext_hands_the_kernels_context_to_every_run(notebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from brute_nb.map import context as contexts

    monkeypatch.setattr(contexts, "_driver", None)  # a fresh kernel: nothing has driven the engine yet
    assert contexts.current().sessions != notebook.with_suffix(".brute")
    shell = InteractiveShell()
    try:
        shell.extension_manager.load_extension("brute_nb")
        shell.run_line_magic("brute", f"config model={MODEL} approve=shell=deny confirm_above=0.25")
        ctx = contexts.current()  # what a run not handed a context gets, however the engine was imported
        assert ctx.sessions == notebook.with_suffix(".brute") and ctx.model == MODEL
        assert ctx.approve == (("shell", "deny"),) and ctx.confirm_above == 0.25
    finally:
        shell.extension_manager.unload_extension("brute_nb")
        InteractiveShell.clear_instance()


def test_the_kernels_settings_reach_the_accessor(server: FakeProvider, notebook: Path) -> None:
    brute_nb.configure(model=MODEL, confirm_above="none")
    assert callable(brute_nb.map)  # the public name's first use registers df.brute, as %%brute --over does
    out = pd.DataFrame({"review": ["r0", "r1"]}).brute.map("Say {review}", progress=False)  # no model= given
    assert list(out["reply"]) == ["echo: Say r0", "echo: Say r1"] and len(paid(server)) == 2
    assert {r["json"]["model"] for r in server.requests} == {MODEL.split(":", 1)[1]}
    assert all(Path(s).is_relative_to(notebook.with_suffix(".brute") / "map") for s in out["session"])


def test_a_context_handed_to_the_call_wins_over_the_kernels(server: FakeProvider, notebook: Path,
                                                             tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "run.brute"
    out = brute_nb.map("Say {review}", pd.DataFrame({"review": ["r0"]}), progress=False,
                       context=MapContext(sessions=elsewhere, model=MODEL))
    assert list(out["reply"]) == ["echo: Say r0"]
    assert Path(out["session"].iloc[0]).is_relative_to(elsewhere / "map")
    assert not notebook.with_suffix(".brute").exists()
