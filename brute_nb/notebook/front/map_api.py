"""``brute_nb.map``, ``brute_nb.estimate`` and ``brute_nb.compare`` driven by the kernel: the notebook's front door
to the map engine.

The engine (``brute_nb.map``) imports nothing of the notebook: it takes a ``MapContext``. ``kernel_context`` builds
one from the current session's settings and the notebook's folder, at every run; ``install`` makes it the context
of every run not handed one. ``%load_ext`` installs it (this module is light: the engine and pandas load with the
first of its names), and so does the first use of a public name from plain Python, so ``brute_nb.map``,
``df.brute.map`` and ``%%brute --over`` all run with the kernel's settings. A run handed a context uses that one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from brute_nb.map import context as contexts
from brute_nb.map.pandas_hook import register_with_pandas

if TYPE_CHECKING:
    from brute_nb.map import compare, estimate, map
    from brute_nb.map.context import MapContext

ENGINE = ("compare", "estimate", "map")


def kernel_context() -> MapContext:
    """The current session's settings (model, root, approvals, cassette, ``confirm_above``), its notebook's
    ``<stem>.brute`` folder, the notebook's reading of ``tools=`` and ``input`` where a person can answer."""
    from brute_nb.notebook import approvals
    from brute_nb.notebook.paths import session_dir
    from brute_nb.notebook.registry import registry
    from brute_nb.notebook.stack import select_tools

    reg = registry()
    session = reg.current()
    s = session.settings
    return contexts.MapContext(
        sessions=session_dir(reg.location), model=s.model, root=session.root,
        approve=tuple(sorted(s.approve.items())), replay=s.replay, record=s.record, confirm_above=s.confirm_above,
        session_model=session.model_provider if s.replay or s.record else None,
        select=select_tools, ask=input if approvals.stdin_available() else None)


def install() -> None:
    contexts.drive(kernel_context)
    register_with_pandas()  # df.brute as soon as the notebook has pandas, which %load_ext does not import


def __getattr__(name: str) -> Any:
    """The engine's public functions, with the kernel's context installed first."""
    if name not in ENGINE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    install()
    return getattr(importlib.import_module("brute_nb.map"), name)


__all__ = ["compare", "estimate", "install", "kernel_context", "map"]
