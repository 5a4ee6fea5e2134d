"""What code did to a namespace: names bound, deleted, augmented and changed in place, seen by identity and by the
code's syntax, with deep copies of what the code mentions (and a note for what cannot be copied)."""

from __future__ import annotations

import socket
import sqlite3
from typing import Any

import pytest

from brute_nb.notebook.kernel_tools import namespace_watch as watch
from brute_nb.notebook.kernel_tools.namespace_watch import MISSING, before, changes, names_in, same, size_of


def run(ns: dict[str, Any], code: str, **limits: int) -> tuple[dict[str, watch.Changed], dict[str, str]]:
    taken = before(ns, code, **limits)
    exec(code, ns)
    found, unknown = changes(taken, ns)
    return {c.name: c for c in found}, unknown


def test_the_syntax_names_what_module_level_code_binds_deletes_and_augments() -> None:
    code = """
import os.path, numpy as np
from math import pi as PI
a = b = 1
(c, [d, *e]) = 1, [2, 3]
f += 1
for g in range(2): pass
with open('x') as h: pass
del k
def fn(x):
    inner = x
    global gl
    gl = inner
class C: attr = 1
[w := y for y in range(3)]
lambda z: z
match subject:
    case {"k": m, **rest}: pass
    case [n, *others]: pass
"""
    names = names_in(code)
    assert names.bound >= {"os", "np", "PI", "a", "b", "c", "d", "e", "g", "h", "fn", "gl", "C", "w", "m", "rest",
                           "n", "others"}
    assert not {"inner", "x", "attr", "y", "z"} & names.bound  # the names of a function, class or comprehension
    assert names.deleted == {"k"} and names.augmented == {"f"}
    assert {"subject", "inner", "range", "open"} <= names.mentioned
    assert names_in("def (") == watch.Names()


def test_created_rebound_augmented_and_deleted_names_keep_the_old_objects() -> None:
    old_list, old_text = [1, 2], "before"
    ns: dict[str, Any] = {"lst": old_list, "text": old_text, "n": 1, "gone": {"k": 1}, "kept": 5}
    found, unknown = run(ns, "new = 3\ntext = 'after'\nn += 1\ndel gone\nkept")
    assert {name: c.how for name, c in found.items()} == {"new": "created", "text": "assigned", "n": "augmented",
                                                          "gone": "deleted"}
    assert found["new"].before is MISSING and found["new"].after == 3
    assert found["text"].before is old_text and found["gone"].after is MISSING
    assert found["gone"].before == {"k": 1} and unknown == {}


def test_a_change_in_place_is_found_by_comparing_a_copy_taken_before() -> None:
    import pandas as pd

    df = pd.DataFrame({"a": [1, 2, 3]})
    ns: dict[str, Any] = {"lst": [1, 2], "df": df, "cfg": {"lr": 0.1}, "lst2": [9], "untouched": [7]}
    found, _ = run(ns, "lst.append(3)\ndf['b'] = df['a'] * 2\ncfg['lr'] = 0.2\nlst2 += [10]\nlen(untouched)")
    assert {name: c.how for name, c in found.items()} == {"lst": "changed in place", "df": "changed in place",
                                                          "cfg": "changed in place", "lst2": "augmented"}
    assert found["lst"].before == [1, 2] and found["lst"].after is ns["lst"]
    assert list(found["df"].before["a"]) == [1, 2, 3] and found["df"].after is df
    assert found["cfg"].before == {"lr": 0.1} and found["lst2"].before == [9]


def test_an_object_with_identity_equality_is_compared_by_its_bytes() -> None:
    class Model:
        def __init__(self) -> None:
            self.weights = [0.0]

    model = Model()
    ns: dict[str, Any] = {"model": model, "other": Model(), "Model": Model}
    found, _ = run(ns, "model.weights.append(1.0)\nother.weights")
    assert list(found) == ["model"] and found["model"].before.weights == [0.0]


def test_what_cannot_be_copied_or_is_too_large_is_named_with_the_reason() -> None:
    conn = sqlite3.connect(":memory:")
    sock = socket.socket()
    try:
        ns: dict[str, Any] = {"conn": conn, "sock": sock, "big": list(range(100_000)), "small": [1]}
        found, unknown = run(ns, "conn.execute('select 1')\nsock.fileno()\nbig.append(1)\nsmall.append(2)",
                             limit=100_000)
        assert set(unknown) == {"conn", "sock", "big"}
        assert "cannot be copied" in unknown["conn"] and "Connection" in unknown["conn"]
        assert "too large to copy" in unknown["big"]
        assert list(found) == ["small"]
        rebound, unknown = run(ns, "conn = None")  # rebinding keeps the old object itself: nothing to copy
        assert rebound["conn"].before is conn and "conn" not in unknown
    finally:
        conn.close()
        sock.close()


def test_modules_functions_and_ipython_names_are_never_copied_or_reported() -> None:
    import math

    ns: dict[str, Any] = {"math": math, "len": len, "_": 1, "_i3": "x", "Out": {}, "__name__": "__main__"}
    found, unknown = run(ns, "math.pi\n_ = 2\n_i4 = 'y'\nOut[1] = 3")
    assert found == {} and unknown == {}


def test_the_copies_of_one_run_stop_at_its_budget() -> None:
    ns: dict[str, Any] = {"a": list(range(1000)), "b": list(range(1000))}
    taken = before(ns, "a; b", limit=1_000_000, budget=50_000)
    assert set(taken.copies) == {"a"} and "reached their limit" in taken.uncopied["b"]


def test_size_estimates_and_comparisons() -> None:
    import numpy as np
    import pandas as pd

    assert 80 <= (size_of(np.zeros(10), 1000) or 0) <= 1000 and size_of(np.zeros(1000), 1000) is None
    # A view's data is not in its sys.getsizeof, but its copy holds it: counted by nbytes.
    assert (size_of({"v": np.zeros(10_000)[::2]}, 10**6) or 0) >= 40_000
    assert size_of(pd.DataFrame({"a": range(10)}), 10_000) is not None
    assert size_of({"k": [1, 2, 3]}, 10_000) is not None and size_of(list(range(10_000)), 1000) is None
    a = np.array([1.0, np.nan])
    assert same(a.copy(), a) is True and same(np.array([1.0, 2.0]), a) is False
    assert same([np.zeros(2)], [np.zeros(2)]) is True  # == raises on a list of arrays: the bytes decide
    assert same([1], (1,)) is False
    assert same(iter(range(2)), iter(range(2))) is True  # picklable: its bytes
    assert same((x for x in ()), (x for x in ())) is None  # neither comparable nor picklable: cannot be told
    assert same({"a": [object()]}, {"a": [object()]}) is True  # plain objects item by item, not by identity


@pytest.mark.parametrize("name", ["_", "__", "_i", "_ii", "_i12", "_12", "In", "Out", "Err", "__builtins__"])
def test_ipython_names_are_ignored(name: str) -> None:
    assert watch.ignored(name)
    assert not watch.ignored("df") and not watch.ignored("_private")
