"""Names that moved out of a module keep their old import path, and the package itself uses only the new one.

``brute_nb.message`` was once the values module, the log and the sendability rules at once; what moved out is
forwarded by its ``MOVED`` table, so a notebook's ``from brute_nb.message import Log`` and a ``Log`` pickled before
the move still work, while inside the package every import names the module that owns the name.
"""

from __future__ import annotations

import ast
import importlib
import pickle
from pathlib import Path

import pytest

import brute_nb
from brute_nb import message
from brute_nb.log import Log
from tests.import_graph import read_modules

ROOT = Path(brute_nb.__file__).parent

MOVED = sorted(message.MOVED.items())


@pytest.mark.parametrize(("name", "home"), MOVED)
def test_a_moved_name_imports_from_its_old_module_as_the_same_object(name: str, home: str) -> None:
    assert getattr(message, name) is getattr(importlib.import_module(home), name)


@pytest.mark.parametrize(("name", "home"), MOVED)
def test_a_moved_name_has_left_its_old_module(name: str, home: str) -> None:
    """Forwarded, not defined twice: the old module's source no longer binds it."""
    tree = ast.parse(Path(message.__file__).read_text())
    bound = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)}
    bound |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    assert name not in bound


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Logg'"):
        message.Logg  # noqa: B018


def test_a_log_pickled_before_the_move_still_loads() -> None:
    # pickle.dumps(Log([user "hi"]), protocol=4) made when Log lived in brute_nb.message
    old = (b"\x80\x04\x95i\x00\x00\x00\x00\x00\x00\x00\x8c\x10brute_nb.message\x94\x8c\x0c_rebuild_log\x94\x93\x94]"
           b"\x94h\x00\x8c\x10_rebuild_message\x94\x93\x94(h\x00\x8c\x04Role\x94\x93\x94\x8c\x04user\x94\x85\x94R"
           b"\x94\x8c\x02hi\x94NN)}\x94t\x94R\x94a\x89\x86\x94R\x94.")
    loaded = pickle.loads(old)
    assert type(loaded) is Log and [(m.role, m.content) for m in loaded] == [("user", "hi")]


def test_the_package_imports_each_moved_name_from_its_new_home() -> None:
    found = []
    for module, path in read_modules(ROOT).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "brute_nb.message":
                found += [f"{module}: {a.name} (from {message.MOVED[a.name]})" for a in node.names
                          if a.name in message.MOVED]
    assert found == []
