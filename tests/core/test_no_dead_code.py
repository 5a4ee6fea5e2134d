"""Every function and class brute_nb defines is used somewhere: by the package, its tests, examples, demos,
benchmarks or documentation. A function nothing calls is code a reader must understand for nothing, and it rots
(three such, ``confine.fsync_folder``, ``event_loop.loop_running`` and ``cells.running_in_kernel``, were found by
hand and removed; issue 40).

A use is the name read in the package's code (a call, an attribute, an import, a string naming it, as a plugin
table or a lazy export does), in its ``.js`` files, or as a word anywhere in tests/, examples/, notebooks/, bench/,
docs/ or README.md (public API a user calls is documented or tested). Not counted as unused: dunder and IPython
protocol methods (``_repr_*_``, ``_ipython_*_``, ``_cmd_*``), decorated definitions (a decorator registers them)
and methods a base class from another library declares (``HTMLParser.handle_starttag``), which that library calls.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import Counter
from pathlib import Path

import brute_nb

PACKAGE = Path(brute_nb.__file__).parent
ROOT = PACKAGE.parent
USERS = ("tests", "examples", "notebooks", "bench", "docs")
PLAIN_DECORATORS = {"property", "staticmethod", "classmethod", "cached_property"}
PROTOCOL = re.compile(r"^(__\w+__|_repr_\w+_|_ipython_\w+_|_cmd_\w+)$")


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _definitions() -> list[tuple[str, str, str | None, int]]:
    """(module, name, enclosing class or None, line) for every top-level and class-level def and class."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        for node in ast.parse(path.read_text()).body:
            found.extend(_named(module, node, None))
            if isinstance(node, ast.ClassDef):
                for inner in node.body:
                    found.extend(_named(module, inner, node.name))
    return found


def _named(module: str, node: ast.stmt, owner: str | None) -> list[tuple[str, str, str | None, int]]:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []
    decorators = {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in node.decorator_list}
    if PROTOCOL.match(node.name) or decorators - PLAIN_DECORATORS:
        return []
    return [(module, node.name, owner, node.lineno)]


def _uses() -> tuple[Counter[str], str]:
    """Names read in the package's code, and every other text a use may be written in."""
    read: Counter[str] = Counter()
    texts = [p.read_text() for p in PACKAGE.rglob("*.js")]
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name):
                read[node.id] += 1
            elif isinstance(node, ast.Attribute):
                read[node.attr] += 1
            elif isinstance(node, ast.alias):
                read[node.name.rsplit(".", 1)[-1]] += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append(node.value)
    for folder in USERS:
        texts.extend(p.read_text(errors="replace") for p in (ROOT / folder).rglob("*")
                     if p.suffix in {".py", ".ipynb", ".md"} and p.is_file())
    texts.append((ROOT / "README.md").read_text())
    return read, "\n".join(texts)


def _overrides(module: str, owner: str, name: str) -> bool:
    """Whether ``owner.name`` overrides a method of a base class (which calls it), read from the class itself."""
    cls = getattr(importlib.import_module(module), owner)
    return any(name in vars(base) for base in cls.__mro__[1:])


def test_every_definition_is_used_somewhere() -> None:
    read, text = _uses()
    words = Counter(re.findall(r"\w+", text))
    unused = [f"{module}:{line} {owner + '.' if owner else ''}{name}"
              for module, name, owner, line in _definitions()
              if not read[name] and not words[name] and not (owner and _overrides(module, owner, name))]
    assert unused == [], "nothing calls these; remove them (or test the public API they are): " + ", ".join(unused)


def test_the_check_sees_a_definition_and_its_exceptions() -> None:
    tree = ast.parse("def lonely():\n    return 1\n\n\n@register\ndef hooked():\n    pass\n\n\n"
                     "def _repr_html_():\n    pass\n")
    assert [n for node in tree.body for n in _named("m", node, None)] == [("m", "lonely", None, 1)]
    assert _overrides("brute_nb.errors", "BruteError", "__str__")  # Exception's, which Python calls
    assert not _overrides("brute_nb.plugins", "Plugin", "value")
