"""Re-record the demo notebooks' cassettes, then re-run the notebooks in replay mode to store their outputs.

No model API is called: the replies below are scripted and served by brute_nb's local fake provider
(``brute_nb.testing.FakeProvider``), speaking Anthropic's wire format to the real ``anthropic`` SDK. The
cassette holds that traffic; the notebooks replay it through the same SDK client. A cassette is one model
connection's traffic in order, so a notebook with more than one (a sub-agent's, a second kernel life's) records
``cassettes/<name>.<part>.jsonl`` beside ``cassettes/<name>.jsonl``; the script serves them all, in the order asked.
A notebook that asks the user (an approval) is recorded once more per answer in ``BRANCHES``, in a kernel that
answers its ``input()``, and each continuation is merged into the cassette as a branch that replay follows.

    .venv/bin/python notebooks/record.py            # all demos
    .venv/bin/python notebooks/record.py quickstart # one
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from brute_nb.testing import FakeProvider, Reply, call, reply

HERE = Path(__file__).resolve().parent

# The quickstart's agent adds this function twice: once allowed, then again under write=deny.
ADD_VARIANCE = call("patch", {
    "file_path": "stats.py", "old_string": "def median(values):",
    "new_string": "def variance(values):\n    \"\"\"The population variance of a non-empty list of numbers.\"\"\"\n"
                  "    m = mean(values)\n    return sum((v - m) ** 2 for v in values) / len(values)\n\n\n"
                  "def median(values):"})

SCRIPTS = {
    "quickstart": [
        reply("I'll start by looking at what is in the project.", call("read", {"file_path": "."})),
        reply(
            "A small statistics module with its tests and a runner. Let me read the code and the tests.",
            call("read", {"file_path": "stats.py"}),
            call("read", {"file_path": "test_stats.py"}),
        ),
        reply("Now let me run the tests to see what fails.", call("shell", {"command": "python3 run_tests.py"})),
        reply(
            "`median` of an even-length list averages the wrong pair: with `mid = len // 2` the two middle "
            "values are `ordered[mid - 1]` and `ordered[mid]`, not `ordered[mid]` and `ordered[mid + 1]`. "
            "Fixing that line:",
            call("patch", {"file_path": "stats.py",
                           "old_string": "return (ordered[mid] + ordered[mid + 1]) / 2",
                           "new_string": "return (ordered[mid - 1] + ordered[mid]) / 2"}),
        ),
        reply("Running the tests again:", call("shell", {"command": "python3 run_tests.py"})),
        reply(
            "All three tests pass now.\n\n**The bug:** in `stats.median`, an even-length list averaged "
            "`ordered[mid]` and `ordered[mid + 1]`, one place too far to the right (for `[1, 2, 3, 4]` it gave "
            "3.5 instead of 2.5).\n\n**The fix:** average `ordered[mid - 1]` and `ordered[mid]` (a one-line "
            "patch in `stats.py`)."
        ),
        reply(
            "I'll add a single-value case next to the other median tests.",
            call("patch", {"file_path": "test_stats.py",
                           "old_string": "    def test_median_even(self):",
                           "new_string": "    def test_median_single(self):\n"
                                         "        self.assertEqual(median([7]), 7)\n\n"
                                         "    def test_median_even(self):"}),
        ),
        reply("And the tests once more:", call("shell", {"command": "python3 run_tests.py"})),
        reply("Added `test_median_single`; all four tests pass, so the fix from before also holds for a "
              "one-element list."),
    ],
    "tools": [
        reply("I'll outline `stats.py` with the outline tool.", call("outline", {"file_path": "stats.py"})),
        reply("It defines `mean` and `median`. Now the percentile:",
              call("percentile", {"values": [120, 135, 150, 210, 480], "q": 90})),
        reply("`stats.py` defines two functions:\n\n- `mean(values)`: the arithmetic mean of a non-empty list\n"
              "- `median(values)`: the middle value (the mean of the two middle values for an even count)\n\n"
              "The 90th percentile of your response times is **372 ms**: it falls 60% of the way between "
              "210 ms and 480 ms, so the one slow request dominates it."),
        reply("Let me read the README first.", call("read", {"file_path": "README.md"})),
        reply("Counting its words:", call("word_count", {
            "text": "# sample_project\n\nA tiny package the quickstart notebook's agent works on: `stats.py` and "
                    "its tests (`python3 -m unittest`)."})),
        reply("And the temperature:", call("convert_temperature", {"value": 98.6, "unit": "fahrenheit"})),
        reply("The unit has to be `C` or `F`; trying again:",
              call("convert_temperature", {"value": 98.6, "unit": "F"})),
        reply("The README has **18 words** (counting the heading), and **98.6 °F is 37.0 °C**."),
        reply("I'll hand this to the explore helper.", call("explore", {
            "task": "In the project in the workspace root, find where the tests live and what each test checks. "
                    "Report the file and one line per test."})),
        reply("Listing the project first.", call("read", {"file_path": "."})),
        reply("The tests are probably in `test_stats.py`:", call("read", {"file_path": "test_stats.py"})),
        reply("The tests live in `test_stats.py` (a `unittest` case, `StatsTest`; `run_tests.py` runs them):\n"
              "- `test_mean`: `mean([1, 2, 3, 4])` is 2.5\n"
              "- `test_median_odd`: `median([3, 1, 2])` is 2\n"
              "- `test_median_even`: `median([4, 1, 3, 2])` is 2.5"),
        reply("The tests live in `test_stats.py`: one checks `mean([1, 2, 3, 4]) == 2.5`, and two check `median`, "
              "for an odd-length list (`[3, 1, 2]` gives 2) and an even-length one (`[4, 1, 3, 2]` gives 2.5)."),
        reply("I'll add `variance` just before `median`.", ADD_VARIANCE),
        reply("Added `variance(values)` to `stats.py`, just before `median`: the mean of the squared deviations "
              "from `mean(values)`."),
        reply("Adding `variance` back before `median`:", ADD_VARIANCE),
        reply("I couldn't: the approval policy denies file changes in this cell (`write=deny`), so `stats.py` is "
              "unchanged. If you want the function back, run the cell again with `--approve write=allow`."),
        reply("Running the tests:", call("shell", {"command": "python3 run_tests.py"})),
        reply("I couldn't run them: shell commands need your approval (`shell=ask`), and nobody can answer an "
              "approval prompt in this run. Allow them with `%%brute --approve shell=allow` and I'll try again."),
    ],
    "sessions_and_compaction": [
        reply("Running the tests:", call("shell", {"command": "python3 run_tests.py"})),
        reply("One of the three tests fails: `test_median_even` expects `median([4, 1, 3, 2])` to be 2.5 and gets "
              "3.5. `test_mean` and `test_median_odd` pass. I haven't changed anything."),
        reply("Let me look at `median`.", call("read", {"file_path": "stats.py"})),
        reply("Line 15 of `stats.py`: `return (ordered[mid] + ordered[mid + 1]) / 2`. For an even count the two "
              "middle values are `ordered[mid - 1]` and `ordered[mid]`; this averages the pair one place to the "
              "right (for `[1, 2, 3, 4]`, 3 and 4, hence 3.5)."),
        reply("Fixing line 15 as discussed, so it averages `ordered[mid - 1]` and `ordered[mid]`:",
              call("patch", {"file_path": "stats.py",
                             "old_string": "return (ordered[mid] + ordered[mid + 1]) / 2",
                             "new_string": "return (ordered[mid - 1] + ordered[mid]) / 2"})),
        reply("Running the tests:", call("shell", {"command": "python3 run_tests.py"})),
        reply("Fixed: `median` now averages the two middle values, and all three tests pass."),
        reply("Let me look at `median` as it is now.", call("read", {"file_path": "stats.py"})),
        reply("The arithmetic is already fixed on disk (a change made outside this conversation), but I'll do what "
              "you asked and hand the work to the standard library. First the import:",
              call("patch", {"file_path": "stats.py",
                             "old_string": "(it has a bug for the agent to find).\"\"\"\n",
                             "new_string": "(it has a bug for the agent to find).\"\"\"\n\nimport statistics\n"})),
        reply("Now the body of `median`:",
              call("patch", {"file_path": "stats.py",
                             "old_string": "    ordered = sorted(values)\n    mid = len(ordered) // 2\n"
                                           "    if len(ordered) % 2:\n        return ordered[mid]\n"
                                           "    return (ordered[mid - 1] + ordered[mid]) / 2",
                             "new_string": "    return statistics.median(values)"})),
        reply("Running the tests:", call("shell", {"command": "python3 run_tests.py"})),
        reply("`median` now returns `statistics.median(values)` (with `import statistics` at the top of "
              "`stats.py`), and all three tests pass."),
        reply("I'll go through them one at a time, starting with the README.",
              call("read", {"file_path": "README.md"})),
        reply("Next, the test runner.", call("read", {"file_path": "run_tests.py"})),
        reply("Now the module itself.", call("read", {"file_path": "stats.py"})),
        reply("And the tests.", call("read", {"file_path": "test_stats.py"})),
        reply("- `README.md`: says what the project is, a tiny package for the quickstart demo.\n"
              "- `run_tests.py`: runs the unittest suite with one line a test and exits 1 on any failure.\n"
              "- `stats.py`: `mean` and `median`, with the even-count fix to `median` from earlier.\n"
              "- `test_stats.py`: three tests, one for `mean` and two for `median` (odd and even length)."),
    ],
    "transports": [
        # Chat Completions through the openai SDK, a hand-written handler
        reply("I'll check both items.", call("stock", {"item": "apples"}), call("stock", {"item": "pears"})),
        reply("You have **19** altogether: 12 apples and 7 pears."),
        # Responses API through the same client
        reply("", call("stock", {"item": "apples"}), call("stock", {"item": "pears"})),
        reply("19 in total (12 apples + 7 pears)."),
        # Anthropic Messages through the anthropic SDK
        reply("I'll look up both items in the stock.", call("stock", {"item": "apples"}),
              call("stock", {"item": "pears"})),
        reply("Together there are 19: 12 apples and 7 pears."),
        # the ready-made providers, streamed: OpenAIChat, OpenAIResponses, AnthropicMessages
        reply("Let me check.", call("stock", {"item": "plums"})),
        reply("No, plums are sold out: the stock shows 0."),
        reply("", call("stock", {"item": "plums"})),
        reply("We're out of plums (0 in stock)."),
        reply("I'll check the plum stock.", call("stock", {"item": "plums"})),
        reply("Sorry, no plums left: the stock tool reports 0."),
    ],
    "plots_and_structured": [
        reply("The line climbs steadily, by about one unit a month from January to May, then falls by half in "
              "June: June is the one that stands out. Worth checking whether June's data is complete before "
              "reading it as a real drop."),
        reply('{"months": [{"month": "January", "sales": 3.0}, {"month": "February", "sales": 4.0}, '
              '{"month": "March", "sales": 5.0}, {"month": "April", "sales": 6.0}, '
              '{"month": "May", "sales": 7.0}, {"month": "June", "sales": 3.5}]}'),
    ],
    "widget": [
        # turn 1, sent from the chat panel
        reply("I'll read it.", call("read", {"file_path": "stats.py"})),
        reply(
            "`stats.py` has two helpers: `mean`, the arithmetic mean, and `median`, the middle value (for an even "
            "count, the mean of the two middle values).\n\nOne thing stands out: for an even count `median` averages "
            "`ordered[mid]` and `ordered[mid + 1]`, one place too far to the right. It should average "
            "`ordered[mid - 1]` and `ordered[mid]`."
        ),
        # turn 2, a %%brute cell
        reply("Line 15:\n\n```python\nreturn (ordered[mid] + ordered[mid + 1]) / 2\n```"),
        # turn 3, the panel again
        reply("Let me look at the tests.", call("read", {"file_path": "test_stats.py"})),
        reply(
            "Yes: `test_median_even` expects `median([4, 1, 3, 2])` to be 2.5. With the bug it returns 3.5, so "
            "that test fails until line 15 is fixed."
        ),
    ],
    "map_over_rows": [
        # one word a review, in row order (the demo runs one row at a time)
        "mixed", "negative", "positive", "mixed", "positive",
        # schema=Complaint: a JSON object a review
        '{"product": "blender", "problem": "it is loud"}',
        '{"product": "unknown (the order arrived broken)", "problem": "arrived broken; support never answered"}',
        '{"product": "kettle", "problem": null}',
        '{"product": "headphones", "problem": "the case broke within a week"}',
        '{"product": "unknown", "problem": null}',
        # %%brute --over reviews
        "A quieter blender", "A replacement and an answer", "Nothing; happy with the kettle",
        "A sturdier case", "Nothing more",
    ],
    "fix_my_error": [
        # %brute fix: a bug in a file
        reply(
            "`median` reads one place too far to the right for an even count: with two values `mid` is 1, so "
            "`ordered[mid + 1]` is `ordered[2]`, past the end of the list (for longer lists it silently averages "
            "the wrong pair). The two middle values are `ordered[mid - 1]` and `ordered[mid]`:",
            call("patch", {"file_path": "stats.py",
                           "old_string": "return (ordered[mid] + ordered[mid + 1]) / 2",
                           "new_string": "return (ordered[mid - 1] + ordered[mid]) / 2"}),
        ),
        reply("The module is already imported, so the cell has to reload it:",
              call("propose_cell", {"code": "import importlib\n\nimportlib.reload(stats)\nstats.median(prices)",
                                    "explanation": "reload the patched stats module and run the median again"})),
        reply("Fixed `stats.py`: `median([120, 80])` is now 100.0. The cell below reloads the module and runs it "
              "again (it is not run yet)."),
        # %brute fix keep the grouping: a bug in the cell
        reply("Let me look at the columns of `sales`.", call("variables", {"name": "sales"})),
        reply("The column is `revenue`; the cell asks for `revenu`.",
              call("propose_cell", {"code": "sales.groupby(\"region\")[\"revenue\"].sum()",
                                    "explanation": "the same grouping, with the column name spelled right"})),
        reply("A typo: `sales` has a `revenue` column, the cell asked for `revenu`. The corrected cell, same "
              "grouping, is below (not run)."),
        # %%brute --context 2 --code
        reply("Each region's revenue divided by the total, from the `revenue` column of `sales`:\n\n```python\n"
              "revenue = sales.groupby(\"region\")[\"revenue\"].sum()\n(revenue / revenue.sum()).round(3)\n```"),
        # edit_cell and run_cell on a notebook in the workspace
        reply("Cell [1] of `analysis.ipynb` divides by `len(price)`, a name that does not exist; it means `prices`.",
              call("edit_cell", {"cell": "1", "source": "average = sum(prices) / len(prices)\naverage",
                                 "notebook": "analysis.ipynb"})),
        reply("Running the fixed cell:", call("run_cell", {"cell": "1", "notebook": "analysis.ipynb"})),
        reply("Fixed and run: cell [1] now divides by `len(prices)`, and the average price is 100.0."),
    ],
}


SEARCHED = [
    {"type": "text", "text": "I'll search for that."},
    {"type": "server_tool_use", "id": "srvtoolu_01WebSearch", "name": "web_search",
     "input": {"query": "capital of France"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01WebSearch", "content": [
        {"type": "web_search_result", "url": "https://en.wikipedia.org/wiki/Paris", "title": "Paris - Wikipedia",
         "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2MSDG", "page_age": None}]},
    {"type": "text", "text": "The capital of France is Paris.", "citations": [
        {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Paris",
         "title": "Paris - Wikipedia", "cited_text": "Paris is the capital and largest city of France.",
         "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJhZC1lODlkLTRlNjMtYjQ5Yi1h"}]},
    {"type": "text", "text": " It is also the country's largest city."},
]
"""A web search turn as the Messages API sends it: the call, its encrypted result, text blocks with citations."""
SCRIPTS["server_tools_and_batches"] = [
    Reply(blocks=tuple(SEARCHED)),
    "About 2.1 million people live in Paris itself, and over 12 million in its metropolitan area.",
    "positive", "negative", "mixed",
]


SCRIPTS["cost_and_compare"] = [
    # map(TEMPLATE, reviews.head(2)); the estimates before and after only count tokens (no reply)
    "positive", "negative",
    # the rest of the rows, once within confirm_above
    "mixed", "positive", "negative", "negative",
    # schema=Sentiment, one row at a time; Haiku answers 1045 in prose, so Sonnet (escalate=) is asked right after
    '{"label": "positive", "reason": "crushes ice and is quiet"}',
    '{"label": "negative", "reason": "arrived broken, no answer from support"}',
    '{"label": "mixed", "reason": "loud, but it works"}',
    '{"label": "positive", "reason": "the best kettle they have owned"}',
    "Mixed: the lid cracked, but the heating works.",
    '{"label": "mixed", "reason": "the lid cracked, the heating is fine"}',
    '{"label": "negative", "reason": "they returned it"}',
    # compare(sentiment, models=[sonnet]): each row's prompt on Sonnet
    "positive", "negative", "mixed", "positive", "mixed", "negative",
    # two %%brute turns on Haiku
    "Hush Blend",
    "Crushes ice, not conversations.",
    # compare("default", models=[sonnet]): the same two prompts, Sonnet's own conversation
    "QuietCore",
    "Full power, none of the noise.",
]


BRANCHES: dict[str, dict[str, tuple[str, int, list[Any]]]] = {
    # The last %%brute cell asks before it runs the tests (shell=ask). Headless runs cannot answer (the main
    # recording); a person in JupyterLab answers, and each answer gets its own recorded continuation.
    "tools": {
        "allow": ("y", -1, [
            reply("The tests ran: `test_mean` and `test_median_odd` pass, and `test_median_even` fails "
                  "(`median([4, 1, 3, 2])` gives 3.5, not 2.5), so the even-count bug in `median` is still there."),
        ]),
        "deny": ("n", -1, [
            reply("You declined, so I didn't run the tests. Allow shell commands (answer `y`, or use "
                  "`--approve shell=allow`) and I'll run them."),
        ]),
    },
    # confirm_above asks in JupyterLab. "n" sends what a headless run sends (the refusal); "y" sends the six rows at
    # once, and every later map finds them cached: the same replies, in the same order, from another request on.
    "cost_and_compare": {
        "allow": ("y", len(SCRIPTS["cost_and_compare"]), []),
    },
}
"""Per notebook, continuations recorded with another answer to its ``input()`` question: (answer, where the
branch's replies replace the main script's, replies). ``Replay`` follows the one a run's answer leads to."""


def openai_env(fake: FakeProvider) -> dict[str, str]:
    """For notebooks that also talk to OpenAI: the openai SDK reads these, as the anthropic SDK reads its own."""
    return {"OPENAI_API_KEY": fake.api_key or "fake", "OPENAI_BASE_URL": fake.openai_base_url}


EXTRA_ENV: dict[str, Callable[[FakeProvider], dict[str, str]]] = {
    "transports": openai_env,
}
"""Environment a notebook needs in record mode beyond the Anthropic variables every notebook gets."""


def run(name: str, mode: str, env: dict[str, str]) -> nbformat.NotebookNode:
    path = HERE / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(HERE)}}).execute()
        for cell in nb.cells:  # no timestamps: a demo run again stores the same notebook, not a diff of times
            cell.metadata.pop("execution", None)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def run_answering(name: str, env: dict[str, str], answer: str) -> None:
    """Run every code cell of ``name`` in a new kernel as a person would in JupyterLab: stdin allowed, each
    ``input()`` answered with ``answer`` (nbclient never allows stdin)."""
    from jupyter_client.manager import start_new_kernel

    nb = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(HERE), env={**os.environ, **env})
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            msg_id = kc.execute(cell.source, allow_stdin=True)
            while True:
                with contextlib.suppress(queue.Empty):
                    request = kc.get_stdin_msg(timeout=0.05)
                    if request["msg_type"] == "input_request":
                        kc.input(answer)
                with contextlib.suppress(queue.Empty):
                    done = kc.get_shell_msg(timeout=0.05)
                    if done["parent_header"].get("msg_id") == msg_id:
                        if done["content"]["status"] != "ok" and "raises-exception" not in cell.metadata.get(
                                "tags", []):
                            raise SystemExit(f"{name}: a cell failed answering {answer!r}: {done['content']}")
                        break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def drop_replaced(name: str) -> None:
    """A recorder keeps a cassette it records over as ``<name>.replaced-<time>.jsonl`` (a user's recording is paid
    for); this script records over its own on purpose, from scripted replies, so it keeps none."""
    for path in (HERE / "cassettes").glob(f"{name}.*replaced-*.jsonl"):
        path.unlink()


def record_env(name: str, fake: FakeProvider) -> dict[str, str]:
    extra = EXTRA_ENV[name](fake) if name in EXTRA_ENV else {}
    return {"BRUTE_NB_DEMO": "record", "ANTHROPIC_API_KEY": fake.api_key or "fake",
            "ANTHROPIC_BASE_URL": fake.base_url, **extra}


def record_branches(name: str, cassette: Path) -> None:
    """Record each answer's continuation (the notebook writes to the same cassettes) and merge it in as a branch;
    the main recordings are put back as they were."""
    from brute_nb.providers.replay import merge_branch

    saved = {p: p.read_bytes() for p in cassette.parent.glob(f"{name}.*jsonl")}
    for branch, (answer, cut, replies) in BRANCHES.get(name, {}).items():
        with FakeProvider([*SCRIPTS[name][:cut], *replies]) as fake:
            run_answering(name, record_env(name, fake), answer)
            left = len(fake.script)
        drop_replaced(name)
        if left:
            raise SystemExit(f"{name}/{branch}: {left} scripted replies were not used")
        other = cassette.with_name(f"{name}.{branch}.recording")
        cassette.replace(other)
        for path, data in saved.items():
            path.write_bytes(data)
        added = merge_branch(cassette, other, branch)
        other.unlink()
        saved[cassette] = cassette.read_bytes()
        print(f"{name}: branch {branch!r} ({answer!r}) adds {added} exchanges")


def record(name: str) -> None:
    cassette = HERE / "cassettes" / f"{name}.jsonl"
    cassette.unlink(missing_ok=True)
    with FakeProvider(SCRIPTS[name]) as fake:
        run(name, "record", record_env(name, fake))
        left = len(fake.script)
    drop_replaced(name)
    if left:
        raise SystemExit(f"{name}: {left} scripted replies were not used; the notebook and script disagree")
    record_branches(name, cassette)
    nb = run(name, "replay", {"BRUTE_NB_DEMO": "replay"})
    nbformat.write(nb, HERE / f"{name}.ipynb")
    print(f"{name}: recorded {cassette.relative_to(HERE.parent)} and stored the replayed outputs")


if __name__ == "__main__":
    for demo in sys.argv[1:] or list(SCRIPTS):
        record(demo)

