"""``df.brute`` from the moment pandas is there, without importing pandas for it.

The accessor is registered when ``brute_nb.map.accessor`` is imported, which imports pandas; ``%load_ext`` must
not (it would cost every kernel pandas' import). So a notebook that imported pandas and then wrote ``df.brute.map``
got ``AttributeError: 'DataFrame' object has no attribute 'brute'`` until some other use of the engine had loaded
it. Here the accessor follows pandas: at once if pandas is loaded, else as pandas' own import finishes (a one-shot
finder that wraps pandas' loader and leaves ``sys.meta_path`` as it found it).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

_lock = threading.Lock()


def register_with_pandas() -> None:
    """``df.brute`` as soon as pandas is importable and imported: now, or when it is."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and not _initializing(pandas):
        _register()
        return
    with _lock:
        if not any(isinstance(finder, _AfterPandas) for finder in sys.meta_path):
            sys.meta_path.insert(0, _AfterPandas())


def _initializing(module: ModuleType) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _register() -> None:
    importlib.import_module("brute_nb.map.accessor")


class _AfterPandas:
    """Finds nothing itself: for ``pandas``, the spec the rest of ``sys.meta_path`` finds, whose loader then
    registers the accessor once pandas has run."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
                  ) -> ModuleSpec | None:
        if name != "pandas":
            return None
        with _lock:
            if self in sys.meta_path:
                sys.meta_path.remove(self)  # one shot, and no recursion below
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            spec: ModuleSpec | None = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None  # no pandas here: the import fails as it would have
        loader: Any = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module: ModuleType) -> None:
            if module.__name__ != "pandas":  # a loader shared by a whole archive: only pandas is ours
                run(module)
                return
            with contextlib.suppress(AttributeError):
                del loader.exec_module  # the loader's own method again, for whatever it loads next
            run(module)
            try:
                _register()
            except Exception as exc:  # the user's `import pandas` worked: it must not fail for df.brute
                warnings.warn(f"brute_nb could not add df.brute to pandas ({type(exc).__name__}: {exc}); "
                              "brute_nb.map(template, df) works without it", stacklevel=2)

        # A loader that takes no attributes keeps its own: df.brute then waits for the engine's first use.
        with contextlib.suppress(AttributeError):
            loader.exec_module = exec_module
        return spec
