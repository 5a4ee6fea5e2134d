"""Lazy public names for packages (PEP 562), so ``%load_ext brute_nb`` imports almost nothing.

A package lists ``{name: "module"}`` (public names) and its public submodules, and forwards its module
``__getattr__`` and ``__dir__`` here; ``from brute_nb import agent`` then imports ``brute_nb.agent`` on first use,
and ``brute_nb.middleware`` imports the subpackage on first touch (SPEC 1's lazy submodules).
Invariant: a resolved name is cached in the package's namespace, so each is imported once and later lookups are
plain attribute reads; and a public name is never replaced by a submodule of the same name (see ``guard``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any


def exports(groups: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{module: names}`` (the way the eager imports read) turned into ``{name: module}``."""
    return {name: module for module, names in groups.items() for name in names}


def load(package: str, table: Mapping[str, str], name: str, submodules: Iterable[str] = ()) -> Any:
    """The package's ``__getattr__``: import the module that defines ``name``, cache and return it.

    A name in ``submodules`` is the submodule itself (``brute_nb.middleware``); importing it binds the attribute.
    """
    module = table.get(name)
    if module is None:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    ModuleType.__setattr__(sys.modules[package], name, value)  # bypasses guard: this is the public value
    return value


def names(package: str, table: Mapping[str, str], submodules: Iterable[str] = ()) -> list[str]:
    """The package's ``__dir__``: what is loaded plus what can be (tab completion shows every public name)."""
    return sorted({*vars(sys.modules[package]), *table, *submodules})


class _Guarded(ModuleType):
    """A package whose public names survive the import of a same-named submodule.

    Importing ``brute_nb.agent`` makes the import system run ``setattr(brute_nb, "agent", <module>)``. With eager
    imports the package rebound the name right after; with lazy ones nothing would, and ``from brute_nb import
    agent`` would hand out the module instead of the builder function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and value.__name__ == f"{self.__name__}.{name}" \
                and name in getattr(self, "__all__", ()):
            return  # the submodule stays reachable through sys.modules and ``from brute_nb.agent import ...``
        super().__setattr__(name, value)


def guard(package: str) -> None:
    """Keep the package's ``__all__`` names from being shadowed by submodules (call at the end of its body)."""
    sys.modules[package].__class__ = _Guarded
