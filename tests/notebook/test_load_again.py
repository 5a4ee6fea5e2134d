"""A setup cell run again (issue 41 item 4): ``%load_ext brute_nb`` a second time says nothing, where IPython printed
"The brute_nb extension is already loaded. To reload it, use: %reload_ext brute_nb" on every re-run."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell


def test_loading_again_is_quiet_and_unloading_gives_ipython_its_magic_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(tmp_path / "nb.ipynb"))
    ip = InteractiveShell.instance()
    try:
        ip.run_line_magic("load_ext", "brute_nb")
        capsys.readouterr()
        assert ip.run_cell("%load_ext brute_nb").success
        assert capsys.readouterr().out == ""
        assert "brute" in ip.magics_manager.magics["cell"]  # still loaded, once
        ip.run_line_magic("load_ext", "autoreload")  # any other extension is IPython's, as before
        ip.run_line_magic("load_ext", "autoreload")
        assert "IPython.extensions.autoreload" in ip.extension_manager.loaded
        assert "already loaded" in capsys.readouterr().out
        ip.run_line_magic("reload_ext", "brute_nb")
        assert "brute" in ip.magics_manager.magics["cell"]
        ip.run_line_magic("unload_ext", "brute_nb")
        assert not getattr(ip.magics_manager.magics["line"]["load_ext"], "brute_nb_quiet", False)  # IPython's again
    finally:
        if "brute_nb" in ip.extension_manager.loaded:
            ip.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()
