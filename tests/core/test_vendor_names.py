"""Everything brute_nb knows about a vendor lives on its profile (``providers/profiles/``): no generic module names a
vendor in code (issue 40 item 1).

The rule, precisely. A *vendor word* is any known profile's ``kind``, its key name and its SDK package, lower case
(``profiles.vendor_words()``: a new profile extends the rule by itself). *Code* is every token of a module but its
comments and its docstrings, a docstring being any string that stands alone as a statement (a module's, a class's or
a function's, and the one under an assignment that documents it). In every module of ``brute_nb`` outside
``providers/`` (the profiles, the provider classes, their batch and token-count calls), ``transports/`` (the wire
formats, which are the vendors' own) and ``testing/`` (the fakes that simulate the vendors' wire), no token of code
contains a vendor word, case-insensitively: not a name (variable, function, class, attribute, argument, imported
module) and not a string literal. Prose may name a vendor; a help text or an error that names one builds it from the
profiles (``profiles.model_examples()``, ``Profile.title``), so it follows them.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

import brute_nb
from brute_nb.providers import profiles

ROOT = Path(brute_nb.__file__).parent
VENDOR_HOMES = ("providers", "transports", "testing")
"""The folders of ``brute_nb`` where vendors are named: their profiles and providers, their wire, their fakes."""


def docstring_starts(tree: ast.AST) -> set[tuple[int, int]]:
    """Where each string standing alone as a statement begins (row, column): docstrings, prose."""
    return {(node.lineno, node.col_offset) for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def vendor_tokens(source: str, words: frozenset[str]) -> list[tuple[int, str]]:
    """(line, token) of every token of code in ``source`` holding one of ``words``."""
    prose = docstring_starts(ast.parse(source))
    found = []
    for start, text in code_tokens(source):
        if start not in prose and any(word in text.lower() for word in words):
            found.append((start[0], text))
    return found


def code_tokens(source: str) -> list[tuple[tuple[int, int], str]]:
    """(start, text) of every name and string literal, an f-string whole: Python 3.12 tokenizes an f-string as
    FSTRING_START, its pieces and FSTRING_END, where 3.11 gives one STRING token."""
    lines = source.splitlines(keepends=True)
    tokens: list[tuple[tuple[int, int], str]] = []
    opened: list[tuple[int, int]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tokenize.tok_name[token.type]
        if kind == "FSTRING_START":
            opened.append(token.start)
        elif kind == "FSTRING_END":
            start = opened.pop()
            if not opened:
                tokens.append((start, span(lines, start, token.end)))
        elif token.type in (tokenize.NAME, tokenize.STRING) and not opened:
            tokens.append((token.start, token.string))
    return tokens


def span(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1]:end[1]]
    middle = lines[start[0]:end[0] - 1]
    return "".join([lines[start[0] - 1][start[1]:], *middle, lines[end[0] - 1][:end[1]]])


def generic_modules() -> list[Path]:
    return [path for path in sorted(ROOT.rglob("*.py"))
            if path.relative_to(ROOT).parts[0] not in VENDOR_HOMES]


def test_no_generic_module_names_a_vendor_in_code() -> None:
    words = profiles.vendor_words()
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]}" for path in generic_modules()
             for line, text in vendor_tokens(path.read_text(encoding="utf-8"), words)]
    assert not found, "ask the provider's profile instead (providers/profiles/):\n" + "\n".join(found)


def test_the_words_come_from_the_profiles() -> None:
    words = profiles.vendor_words()
    assert {"anthropic", "openai", "gemini", "ollama", "openrouter", "deepseek", "mistral"} <= words
    assert all(p.kind.lower() in words for p in profiles.every())
    assert len(generic_modules()) > 100  # the walk reaches the package, not an empty folder


@pytest.mark.parametrize(("source", "flagged"), [
    ('"""The reply, as Anthropic sends it."""\n', []),
    ('x = 1\n"""OpenAI\'s limit (an attribute\'s docstring)."""\n', []),
    ("def f():\n    '''Gemini's way.'''\n    return 1  # Mistral's too\n", []),
    ('LIMIT = "OpenAI\'s limit"\n', ["\"OpenAI's limit\""]),
    ("import anthropic\n", ["anthropic"]),
    ("def anthropic_format(schema): ...\n", ["anthropic_format"]),
    ("x = {'ollama': 1}\n", ["'ollama'"]),
    ('msg = f"use {name} or openrouter"\n', ['f"use {name} or openrouter"']),
    ("from brute_nb.transports.openai import OpenAI\n", ["openai", "OpenAI"]),
])
def test_the_rule_sees_code_and_spares_prose(source: str, flagged: list[str]) -> None:
    assert [text for _, text in vendor_tokens(source, profiles.vendor_words())] == flagged
