"""``{expr}`` in a %%brute prompt: filled from the namespace, but a prompt about code is never mangled."""

from __future__ import annotations

import pytest

from brute_nb.fill import expand


@pytest.mark.parametrize(("template", "expected"), [
    ("say {n + 1}", "say {n + 1}"),  # an operator is code (it may run __add__): text unless --eval
    ("{name!r} and {name}", "'ada' and ada"),
    ("{n:05d}|{n!r:>4}", "00041|  41"),
    ("{missing} stays", "{missing} stays"),
    ('send {"a": 1} as JSON', 'send {"a": 1} as JSON'),  # a literal is text, and its ": 1" is no format spec
    ('d = {"k": n}', 'd = {"k": n}'),
    ("s = {1, 2}", "s = {1, 2}"),
    ("{name:bogus}", "{name:bogus}"),  # a bad format spec leaves the field as written
    ("def f(): {", "def f(): {"),  # unbalanced braces
])
def test_expand(template: str, expected: str) -> None:
    assert expand(template, {"n": 41, "name": "ada"}) == expected


def test_a_dataframe_is_a_bounded_summary() -> None:
    import pandas as pd

    df = pd.DataFrame({"x": range(10_000), "y": ["v"] * 10_000})
    text = expand("look at {df}", {"df": df})
    assert "shape=(10000, 2)" in text and "dtypes:" in text and "9999" not in text
    assert len(text) < 1000
