"""The fast paths' table (``docs/architecture.md``, "Fast paths") cannot rot: every shortcut it lists names code that
exists, a benchmark row one of ``bench/``'s scripts writes (the row that shows what the shortcut saves), and a test
that exists (the proof that it equals the plain way). Read from the sources, not run: the bench is not the suite's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r'^\| (?P<name>[^|]+) \| `(?P<code>[^`]+)` \| [^|]+ \| `(?P<bench>bench/[^`]+)` "(?P<label>[^"]+)" \| '
                 r"`(?P<test>tests/[^`:]+)::(?P<function>\w+)` \|$")


def table() -> list[dict[str, str]]:
    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page.split("\n## Fast paths\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| fast path")]
    rows = [match.groupdict() for line in lines if (match := ROW.match(line))]
    assert len(rows) == len(lines), [line for line in lines if not ROW.match(line)]
    return rows


def _pattern(node: ast.expr) -> str | None:
    """A row label as a regular expression: a string as itself, an f-string's fields as any text."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(re.escape(str(part.value)) if isinstance(part, ast.Constant) else ".+?" for part in node.values)
    return None


def bench_labels(path: Path) -> list[str]:
    """Every label a bench script gives a row: ``Row(label, ...)``, ``row(label, ...)``, or a ``name=`` the row
    takes its label from."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.id if isinstance(node.func, ast.Name) else ""
        candidates = node.args[:1] if called in ("Row", "row") else []
        candidates += [k.value for k in node.keywords if k.arg == "name"]
        found += [p for c in candidates if (p := _pattern(c)) is not None]
    return found


def test_the_table_lists_the_fast_paths() -> None:
    names = [row["name"] for row in table()]
    assert len(names) == len(set(names)) >= 8
    for needed in ("session line reader", "frame builder", "read-ahead", "coalesced views", "Anthropic stream"):
        assert any(needed in name for name in names), needed


def test_every_row_names_code_a_bench_row_and_a_test_that_exist() -> None:
    missing = []
    for row in table():
        if not (ROOT / row["code"]).is_file():
            missing.append(f"{row['name']}: no {row['code']}")
        bench = ROOT / row["bench"]
        if not bench.is_file() or not any(re.fullmatch(p, row["label"]) for p in bench_labels(bench)):
            missing.append(f"{row['name']}: no row {row['label']!r} in {row['bench']}")
        test = ROOT / row["test"]
        defined = {n.name for n in ast.parse(test.read_text()).body if isinstance(n, ast.FunctionDef)} \
            if test.is_file() else set()
        if row["function"] not in defined:
            missing.append(f"{row['name']}: no {row['test']}::{row['function']}")
    assert missing == []


def test_the_check_sees_a_row_that_is_not_there() -> None:
    """The label match is only worth something if a wrong label fails it."""
    labels = bench_labels(ROOT / "bench" / "run.py")
    assert any(re.fullmatch(p, "tool loop, anthropic: 20 calls then an answer (astart)") for p in labels)
    assert not any(re.fullmatch(p, "tool loop, anthropic: a row nobody writes") for p in labels)
