"""An in-process IPython shell with brute_nb loaded, for tests of the magics that need no kernel."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def loaded_shell(folder: Path) -> Iterator[Any]:
    """``%load_ext brute_nb`` in a fresh ``InteractiveShell``, its notebook and root in ``folder``; unloaded after."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "brute_nb")
        shell.run_line_magic("brute", f"config notebook={folder / 'nb.ipynb'} root={folder}")
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()
