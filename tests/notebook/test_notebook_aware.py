"""The agent sees the notebook, in a real kernel against the strict fake provider: ``%brute fix``, ``{Err[n]}``,
``--context N``, the ``notebook`` tool on an unsaved cell, ``--code`` and ``propose_cell`` payloads.

One kernel for the module; tests run in file order (the first needs a kernel where nothing has failed yet).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel, ok, run, text_of, value_of

from brute_nb.testing import API_KEY, FakeProvider, call, reply

pytestmark = pytest.mark.kernel

HELPER = '''\
def mean_price(rows):
    total = sum(r["price"] for r in rows)
    return total / len(rows)
'''


class Bench:
    def __init__(self, kc: Any, fake: FakeProvider, folder: Path) -> None:
        self.kc, self.fake, self.folder = kc, fake, folder
        self.session = folder / "demo.brute" / "default.jsonl"

    def sent(self, index: int = -1) -> str:
        return json.dumps(self.fake.requests[index]["json"]["messages"])

    def sent_text(self, index: int = -1) -> str:
        """The request's text blocks joined, as the model reads them."""
        texts = []
        for turn in self.fake.requests[index]["json"]["messages"]:
            for block in turn["content"] if isinstance(turn["content"], list) else [{"text": turn["content"]}]:
                texts.append(str(block.get("text") or block.get("content") or ""))
        return "\n".join(texts)

    def previous(self) -> int:
        """The execution count of the cell run just before this question (``In`` holds every cell run)."""
        n: int = value_of(self.kc, "len(In) - 2")
        return n


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    folder = tmp_path_factory.mktemp("aware")
    (folder / "shop.py").write_text(HELPER)
    with FakeProvider() as fake:
        env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(folder, **env) as (_km, kc):
            ok(kc, "%load_ext brute_nb")
            yield Bench(kc, fake, folder)


def test_fix_with_no_error_says_so_in_one_line(bench: Bench) -> None:
    before = len(bench.fake.requests)
    assert text_of(ok(bench.kc, "%brute fix")) == "No error yet: no cell in this kernel has failed since brute_nb " \
                                                  "was loaded.\n"
    assert len(bench.fake.requests) == before


def test_fix_sends_source_exception_and_values_and_its_patch_is_undoable(bench: Bench) -> None:
    ok(bench.kc, "from shop import mean_price\nrows = [{'price': 3}, {'price': 5}]")
    reply_, _ = run(bench.kc, "empty = rows[:0]\nmean_price(empty)")
    assert reply_["status"] == "error"
    failing = bench.previous()
    bench.fake.add(
        reply("`mean_price` divides by `len(rows)`, which is 0 for an empty list. Guarding it:",
              call("patch", {"file_path": "shop.py", "old_string": "    return total / len(rows)",
                             "new_string": "    return total / len(rows) if rows else 0.0"})),
        "Fixed: `mean_price([])` now returns 0.0.")
    ok(bench.kc, "%brute fix keep it short")
    sent = bench.sent_text(-2)
    assert f"In [{failing}] raised ZeroDivisionError: division by zero" in sent
    assert "empty = rows[:0]\nmean_price(empty)" in sent  # the failing cell's source
    assert f"In [{failing}], line 2, in <module>" in sent
    assert "shop.py\", line 3, in mean_price" in sent and "return total / len(rows)" in sent
    assert "rows = []" in sent and "total = 0" in sent  # the failing line's names, from its frame
    assert "My instructions: keep it short" in sent
    assert "if rows else 0.0" in (bench.folder / "shop.py").read_text()
    ok(bench.kc, "%brute undo")
    assert (bench.folder / "shop.py").read_text() == HELPER


def test_err_fills_a_prompt(bench: Bench) -> None:
    run(bench.kc, "{'a': 1}['b']")
    n = bench.previous()
    bench.fake.add("A missing key.")
    ok(bench.kc, f"%%brute\nwhy? {{Err[{n}]}}")
    sent = bench.sent_text()
    assert f"why? In [{n}] raised KeyError: 'b'" in sent and "{'a': 1}['b']" in sent
    assert value_of(bench.kc, f"Err[{n}].ename") == "KeyError"


def test_context_sends_exactly_n_cells_and_the_session_does_not_grow_by_them(bench: Bench) -> None:
    for code in ("alpha = 1", "beta = alpha + 1", "beta * 10", "gamma = 'g'"):
        ok(bench.kc, code)
    size = len(bench.session.read_text().splitlines())
    bench.fake.add("Noted.")
    ok(bench.kc, "%%brute --context 3\nwhat did I just do?")
    sent = bench.sent_text()
    assert len(re.findall(r"^In \[\d+\]:$", sent, re.M)) == 3
    assert "beta = alpha + 1" in sent and "Out [" in sent and "gamma = 'g'" in sent and "alpha = 1\n" not in sent
    assert sent.index("notebook-context") < sent.index("what did I just do?")
    lines = bench.session.read_text().splitlines()
    assert len(lines) == size + 2  # the prompt and the reply, nothing else
    assert "notebook-context" not in "".join(lines)

    ok(bench.kc, "%brute config context=2")
    bench.fake.add("Again.")
    ok(bench.kc, "%%brute\nand now?")
    assert len(re.findall(r"^In \[\d+\]:$", bench.sent_text(), re.M)) == 2
    ok(bench.kc, "%brute config context=0")


def test_notebook_tool_reads_a_cell_run_since_the_last_save(bench: Bench) -> None:
    saved = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "alpha = 1", "outputs": []}]}
    (bench.folder / "demo.ipynb").write_text(json.dumps(saved))
    ok(bench.kc, "unsaved_marker = 'fresh'")
    n = bench.previous()
    bench.fake.add(reply("Reading it.", call("notebook", {"action": "read", "cell": f"In[{n}]"})), "It sets a marker.")
    ok(bench.kc, "%%brute\nwhat does my last cell do?")
    result = bench.sent_text()
    assert "unsaved_marker = 'fresh'" in result
    assert "the saved notebook" in result and "from the kernel's history" in result


def test_code_puts_the_reply_code_block_into_the_next_cell(bench: Bench) -> None:
    bench.fake.add("Here:\n\n```python\nprint(sum(r['price'] for r in rows))\n```")
    content, outputs = run(bench.kc, "%%brute --code\nsum the prices")
    assert content["status"] == "ok"
    payloads = [p for p in content["payload"] if p["source"] == "set_next_input"]
    assert payloads == [{"source": "set_next_input", "text": "print(sum(r['price'] for r in rows))",
                         "replace": False}]
    assert "new cell below (not run)" in text_of(outputs)
    assert "one new notebook cell" in bench.sent_text(-1)


def test_a_brute_cells_tool_error_is_what_fix_sends_and_propose_cell_inserts(bench: Bench) -> None:
    bench.fake.add(reply("Reading.", call("read", {"file_path": "no_such_file.py"})), "It is not there.")
    ok(bench.kc, "%%brute\nread no_such_file.py")
    n = bench.previous()
    assert value_of(bench.kc, f"Err[{n}].kind") == "tool"
    bench.fake.add(reply("The file does not exist; here is a cell that creates it.",
                         call("propose_cell", {"code": "open('no_such_file.py', 'w').close()",
                                               "explanation": "create the file"})), "Run the new cell below.")
    content, _ = run(bench.kc, "%%brute --fix\nthe file should exist")
    assert content["status"] == "ok", content
    sent = bench.sent_text(-2)
    assert f"In [{n}] (a %%brute cell) had failing tool calls:" in sent and "no_such_file.py" in sent
    assert "My instructions: the file should exist" in sent
    assert [p["text"] for p in content["payload"] if p["source"] == "set_next_input"] == [
        "open('no_such_file.py', 'w').close()"]
    assert not (bench.folder / "no_such_file.py").exists()  # proposed, never run
