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


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
"""The bytes of an image a test's code displays (a PNG's signature is all the tools look at)."""


@contextmanager
def capturing_shell() -> Iterator[Any]:
    """A fresh ``InteractiveShell`` whose display publisher records what reaches it: what a kernel would send to
    the running ``%%brute`` cell, so a test sees what the tools' capture let through."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    made = InteractiveShell.instance()
    made.display_pub = CapturingDisplayPublisher()
    try:
        yield made
    finally:
        InteractiveShell.clear_instance()
