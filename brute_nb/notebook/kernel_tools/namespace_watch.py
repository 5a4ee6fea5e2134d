"""What a piece of code did to a namespace: which names it created, rebound, deleted or changed in place.

The kernel's undo and ``%brute why`` need the value a name held before the agent's code ran, and which names the
code changed. Two views are combined, because neither is enough alone:

* the namespace itself, before and after, compared by identity: it sees every rebinding and deletion, however it
  was made (``exec``, ``globals()[...]``, a function the code called); the value before is the old object itself,
  kept by reference (no copy is needed for a name that was rebound);
* the code's syntax tree: the names it binds, deletes or augments (``x += 1``), and the names it mentions at all.
  A mentioned object may be changed in place (``lst.append``, ``df.drop(..., inplace=True)``, ``obj.attr = 1``), so
  it is deep-copied before the run (within ``COPY_LIMIT``) and compared after: a difference is a change in place,
  and the copy is what undo restores.

Limits, said plainly where they show: an object changed in place through a name the code does not mention (a
function that appends to a global list) is not seen; an object that cannot be copied (an open connection, a
module, a lock) or is over the size limit is named with the reason, and a change made to it in place cannot be
undone. Names IPython manages (``In``, ``Out``, ``_``, ``_i3``) and dunder names are ignored.
"""

from __future__ import annotations

import ast
import copy
import gc
import pickle
import re
import sys
import types
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

COPY_LIMIT: Final = 64 * 1024 * 1024
"""Bytes (estimated) of one value that is deep-copied before the code runs; a larger one is only noted."""
RUN_LIMIT: Final = 256 * 1024 * 1024
"""Bytes (estimated) copied before one run in all; the values past it are only noted."""
SAME_DEPTH: Final = 4
"""Levels of containers and plain objects compared item by item (deeper ones by their pickled bytes)."""
WALK_LIMIT: Final = 200_000
"""Objects the size estimate visits before it gives up and calls a value too large to copy."""

ARRAY_LIBRARIES: Final = frozenset({"numpy", "torch", "jax", "jaxlib", "cupy", "tensorflow", "xarray"})
IMMUTABLE: Final = (int, float, complex, str, bytes, bool, type(None), range, type(Ellipsis))
CODE_LIKE: Final = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
_IPYTHON_NAME = re.compile(r"^(_+|_i+|_i\d+|_\d+|_ih|_oh|_dh|In|Out|Err|exit|quit|get_ipython)$")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""A name that did not exist (before the run, or after it)."""


def ignored(name: str) -> bool:
    """Names IPython keeps for itself, and dunders: never the agent's assignment to undo or explain."""
    return bool(_IPYTHON_NAME.match(name)) or (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True)
class Names:
    """What the code's syntax says about names at module level."""

    bound: frozenset[str] = frozenset()
    deleted: frozenset[str] = frozenset()
    augmented: frozenset[str] = frozenset()
    mentioned: frozenset[str] = frozenset()
    """Every name the code reads or writes, in any scope: what it may change in place."""


def names_in(code: str) -> Names:
    """The names ``code`` binds, deletes, augments and mentions; nothing for code that does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return Names()
    bound: set[str] = set()
    deleted: set[str] = set()
    augmented: set[str] = set()
    mentioned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    declared_global = {name for n in ast.walk(tree) if isinstance(n, ast.Global) for name in n.names}
    for node in _module_scope(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            deleted.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            augmented.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.MatchAs, ast.MatchStar))
              and node.name):
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    # ``global x`` in a function the code defines (and maybe calls) rebinds the namespace's x.
    bound |= declared_global & mentioned
    return Names(frozenset(bound), frozenset(deleted), frozenset(augmented), frozenset(mentioned))


def _module_scope(tree: ast.AST) -> list[ast.AST]:
    """The nodes that run in the module's scope: not the bodies of functions, classes, lambdas or comprehensions
    (their names are their own), but a walrus in a comprehension binds the module's name, so it is kept."""
    found: list[ast.AST] = []
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend([*node.decorator_list, *getattr(node, "bases", []), *getattr(node, "keywords", [])])
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            found.extend(w.target for w in ast.walk(node) if isinstance(w, ast.NamedExpr))
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def size_of(value: Any, limit: int) -> int | None:
    """The bytes a deep copy of ``value`` would take, estimated; None when over ``limit`` (or too many objects to
    count). pandas and polars frames say their own size; anything else is walked through its references, an array
    of an array library (numpy, torch, ...) counted by its ``nbytes``, which ``sys.getsizeof`` misses for a view or
    a tensor whose data lives outside Python."""
    kind = type(value).__module__.split(".")[0]
    try:
        if kind == "pandas" and hasattr(value, "memory_usage"):
            used = value.memory_usage(deep=True)
            total = int(used.sum()) if hasattr(used, "sum") else int(used)
            return total if total <= limit else None
        if kind == "polars" and hasattr(value, "estimated_size"):
            total = int(value.estimated_size())
            return total if total <= limit else None
    except Exception:  # a broken object says nothing useful: walk it like any other
        pass
    total, seen = 0, set()
    todo: deque[Any] = deque([value])
    while todo:
        item = todo.popleft()
        if id(item) in seen or isinstance(item, CODE_LIKE):
            continue
        seen.add(id(item))
        total += max(sys.getsizeof(item, 64), _array_bytes(item))
        if total > limit or len(seen) > WALK_LIMIT:
            return None
        if not isinstance(item, IMMUTABLE):
            todo.extend(gc.get_referents(item))
    return total


def _array_bytes(item: Any) -> int:
    """An array's data size, for the libraries that keep it outside the Python object; 0 for anything else (no
    other object's attributes are read: a property may do anything)."""
    if type(item).__module__.split(".")[0] not in ARRAY_LIBRARIES:
        return 0
    try:
        return int(getattr(item, "nbytes", 0) or 0)
    except Exception:
        return 0


def needs_copy(value: Any) -> bool:
    """Whether ``value`` could be changed in place: not an immutable scalar, not code (a module, a function, a
    class), and not a tuple or frozenset of such."""
    if isinstance(value, (*IMMUTABLE, *CODE_LIKE)):
        return False
    if isinstance(value, (tuple, frozenset)):
        return any(needs_copy(v) for v in value)
    return True


@dataclass
class Before:
    """The namespace before a run: every name by reference, and deep copies of the ones the code mentions."""

    refs: dict[str, Any]
    copies: dict[str, Any] = field(default_factory=dict)
    uncopied: dict[str, str] = field(default_factory=dict)
    """Name -> why it was not copied (cannot be copied, too large): a change in place to it cannot be undone."""
    names: Names = field(default_factory=Names)


def before(namespace: dict[str, Any], code: str, *, limit: int | None = None, budget: int | None = None) -> Before:
    """What ``namespace`` holds before ``code`` runs in it (see the module's docstring); ``limit`` and ``budget``
    default to ``COPY_LIMIT`` and ``RUN_LIMIT`` as they are when it runs."""
    limit = COPY_LIMIT if limit is None else limit
    budget = RUN_LIMIT if budget is None else budget
    names = names_in(code)
    taken = Before(dict(namespace), names=names)
    for name in sorted(names.mentioned):
        if ignored(name) or name not in namespace or not needs_copy(namespace[name]):
            continue
        value = namespace[name]
        size = size_of(value, min(limit, budget))
        if size is None:
            taken.uncopied[name] = (f"too large to copy (over {_megabytes(min(limit, budget))})" if budget >= limit
                                    else "not copied: this run's copies reached their limit")
            continue
        try:
            taken.copies[name] = copy.deepcopy(value)
        except Exception as exc:  # an open connection, a lock, a generator: say which and why
            taken.uncopied[name] = f"cannot be copied ({type(exc).__name__}: {exc})"
            continue
        budget -= size
    return taken


def left(found: list[Changed], *, limit: int | None = None, budget: int | None = None) -> dict[str, Kept]:
    """Per changed name whose value the run left could be changed in place later (a list, a frame), a deep copy of
    that value as the run left it: undo compares it with the value then, so a row the user added since is seen
    (the name still holds the same object) and left alone. Bounded like ``before``'s copies."""
    limit = COPY_LIMIT if limit is None else limit
    budget = RUN_LIMIT if budget is None else budget
    kept: dict[str, Kept] = {}
    for change in found:
        if change.after is MISSING or not needs_copy(change.after):
            continue
        size = size_of(change.after, min(limit, budget))
        if size is None:
            kept[change.name] = Kept(why=f"too large to copy (over {_megabytes(min(limit, budget))})"
                                     if budget >= limit else "not copied: this run's copies reached their limit")
            continue
        try:
            kept[change.name] = Kept(copy.deepcopy(change.after))
        except Exception as exc:
            kept[change.name] = Kept(why=f"cannot be copied ({type(exc).__name__}: {exc})")
            continue
        budget -= size
    return kept


@dataclass(frozen=True)
class Kept:
    """A copy of the value a run left under a name, or why none could be kept."""

    value: Any = MISSING
    why: str = ""

    def unchanged(self, now: Any) -> str:
        """'' when ``now`` still equals the copy; else why undo must leave it (changed, or it cannot tell)."""
        if self.why:
            return f"whether it changed since the agent's turn cannot be told ({self.why}); left as it is"
        found = same(self.value, now)
        if found is None:
            return "whether it changed since the agent's turn cannot be told (it cannot be compared); left as it is"
        return "" if found else "changed since the agent's turn (the value now is not the one it left); left as it is"


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.3g} MB"


@dataclass(frozen=True)
class Changed:
    """One name the run changed, and what undo puts back."""

    name: str
    how: str
    """``created``, ``assigned``, ``augmented`` (``x += ...``), ``deleted`` or ``changed in place``."""
    before: Any
    """The value before (the old object, or a deep copy for a change in place), or ``MISSING``."""
    after: Any
    """The value the run left (by reference), or ``MISSING``: undo leaves a name the user changed since alone."""


def changes(taken: Before, namespace: dict[str, Any]) -> tuple[list[Changed], dict[str, str]]:
    """The names the run changed, in name order, and the mentioned ones it may have changed in place that cannot
    be restored (name -> why)."""
    found: list[Changed] = []
    unknown: dict[str, str] = {}
    for name in sorted(set(taken.refs) | set(namespace)):
        if ignored(name):
            continue
        old, new = taken.refs.get(name, MISSING), namespace.get(name, MISSING)
        earlier = taken.copies.get(name, old)  # a copy is truer when the object was changed before rebinding
        if old is MISSING and new is not MISSING:
            found.append(Changed(name, "created", MISSING, new))
        elif new is MISSING and old is not MISSING:
            found.append(Changed(name, "deleted", earlier, MISSING))
        elif old is not new:
            found.append(Changed(name, "augmented" if name in taken.names.augmented else "assigned", earlier, new))
        elif name in taken.copies and same(taken.copies[name], new) is not True:
            how = "augmented" if name in taken.names.augmented else "changed in place"
            found.append(Changed(name, how, taken.copies[name], new))
        elif name in taken.uncopied:
            unknown[name] = taken.uncopied[name]
    return found, unknown


def same(a: Any, b: Any, depth: int = 0) -> bool | None:
    """Whether a copy ``a`` still equals ``b``; None when that cannot be told (undo then restores the copy).

    ``==`` where the type defines it; containers and plain objects (whose ``==`` is identity, so a copy never equals
    them) item by item, a few levels deep; pickled bytes as the last resort."""
    try:
        if type(a) is not type(b):
            return False
        kind = type(b).__module__.split(".")[0]
        if kind == "pandas" and hasattr(b, "equals"):
            return bool(b.equals(a))
        if kind == "numpy" and hasattr(b, "shape"):
            import numpy as np

            nan = a.dtype.kind in "fc"
            return bool(a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=nan))
        if _has_own_eq(b):
            result = a == b
            if result is True or (result is False and not isinstance(b, (dict, list, tuple, set))):
                return result
        if depth < SAME_DEPTH:
            if isinstance(b, dict):
                return list(a) == list(b) and _all(same(a[k], b[k], depth + 1) for k in b)
            if isinstance(b, (list, tuple)):
                return len(a) == len(b) and _all(same(x, y, depth + 1) for x, y in zip(a, b, strict=True))
            if not _has_own_eq(b) and hasattr(b, "__dict__"):
                return same(vars(a), vars(b), depth + 1)
    except Exception:  # an __eq__ that raises (a list of arrays): the bytes decide
        pass
    try:
        return pickle.dumps(a) == pickle.dumps(b)
    except Exception:
        return None


def _all(results: Iterable[bool | None]) -> bool | None:
    """``all`` over answers that may be unknown: False wins, then unknown."""
    unknown = False
    for result in results:
        if result is False:
            return False
        unknown = unknown or result is None
    return None if unknown else True


def _has_own_eq(value: Any) -> bool:
    """Whether ``==`` compares contents: an object with ``object``'s ``__eq__`` is equal only to itself, so a copy
    would never equal it."""
    eq: Any = type(value).__eq__
    return eq is not object.__eq__
