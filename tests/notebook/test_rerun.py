"""A demo run twice in one kernel (issue 32 item 2): its setup cell deletes ``<notebook>.brute/`` under the live
agent, and the next turn must recreate the folder and start the session afresh, never fail on the lock file; the
replay starts over with the conversation."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import ROOT, kernel, run

from brute_nb.event_loop import run_sync
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider

NOTEBOOKS = ROOT / "notebooks"


def test_a_session_folder_deleted_under_a_live_agent_is_recreated(tmp_path: Path,
                                                                   fake_provider: FakeProvider) -> None:
    fake_provider.add("first reply")
    fake_provider.add("second reply")
    folder = tmp_path / "demo.brute"
    nb = NotebookAgent("default", folder / "default.jsonl", settings=Settings(root=tmp_path, tools="none"))
    nb.provider = OpenAIChat("gpt-fake", base_url=fake_provider.openai_base_url, api_key=fake_provider.api_key,
                             max_retries=0)
    run_sync(lambda: nb.aask("hello"))
    shutil.rmtree(folder)  # what the demos' setup cell does on a second Run All

    env = run_sync(lambda: nb.aask("hello again"))

    lines = (folder / "default.jsonl").read_text().splitlines()
    assert [m.content for m in env["messages"] if m.role != "system"] == ["hello again", "second reply"]
    assert len(lines) == 2 and "hello again" in lines[0]
    sent = fake_provider.requests[-1]["json"]["messages"]
    assert not any("first reply" in str(m.get("content")) for m in sent)  # the deleted history is not sent


def run_notebook(kc: Any, path: Path) -> dict[int, str]:
    """Every code cell of ``path`` in order, as Run All would (no stdin); the errors of cells not tagged
    ``raises-exception``, by cell index."""
    import nbformat

    failed = {}
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        reply, _ = run(kc, cell.source, timeout=120)
        if reply["status"] != "ok" and "raises-exception" not in cell.metadata.get("tags", []):
            failed[index] = f"{reply.get('ename')}: {reply.get('evalue')}"
    return failed


@pytest.mark.kernel
@pytest.mark.timeout(600)
@pytest.mark.parametrize("demo", ["tools", "fix_my_error", "quickstart", "map_over_rows", "plots_and_structured",
                                  "transports", "sessions_and_compaction", "widget"])
def test_a_demo_runs_twice_in_one_kernel(tmp_path: Path, demo: str) -> None:
    """Run All twice (issue 32 items 2 and 7): the second run replays from the start, its setup cell's deleted
    session folder comes back, no error, and no cell gains a copy."""
    root = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns("scratch*", "*.brute", ".ipynb_checkpoints"))
    env = {"BRUTE_MODEL": "", "BRUTE_NB_DEMO": "replay"}  # keys as the test run has them (none)
    with kernel(root, **env) as (_, kc):
        kc.allow_stdin = False  # as nbclient: the approval question becomes deny (the browser test answers it)
        assert run_notebook(kc, root / f"{demo}.ipynb") == {}
        assert run_notebook(kc, root / f"{demo}.ipynb") == {}


def cell_texts(kc: Any, path: Path) -> dict[int, str]:
    """Every code cell of ``path`` run in order, as Run All would: what each showed (streams, plain text, errors),
    by cell index."""
    import nbformat

    shown = {}
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "code":
            _, outputs = run(kc, cell.source, timeout=120)
            shown[index] = "".join(str(o["content"].get("text") or o["content"].get("data", {}).get("text/plain")
                                       or o["content"].get("evalue") or "") for o in outputs)
    return shown


@pytest.mark.kernel
@pytest.mark.timeout(600)
def test_cost_and_compare_traces_its_second_run_all_as_its_first(tmp_path: Path) -> None:
    """OpenTelemetry lets a process set its tracer provider once: the demo's second Run All printed "Overriding of
    current TracerProvider is not allowed" and its spans cell showed none (issue 39 §2, Also)."""
    import nbformat

    root = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns("scratch*", "*.brute", ".ipynb_checkpoints"))
    path = root / "cost_and_compare.ipynb"
    spans_cell = next(i for i, c in enumerate(nbformat.read(path, as_version=4).cells)
                      if "get_finished_spans" in c.source)
    with kernel(root, BRUTE_MODEL="", BRUTE_NB_DEMO="replay") as (_, kc):
        kc.allow_stdin = False
        first = cell_texts(kc, path)
        second = cell_texts(kc, path)
    assert "invoke_agent brute_nb" in first[spans_cell]
    assert second[spans_cell] == first[spans_cell]
    assert not [text for text in second.values() if "Overriding" in text]
