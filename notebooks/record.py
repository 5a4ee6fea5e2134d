"""Re-record the demo notebooks' cassettes, then re-run the notebooks in replay mode to store their outputs.

No model API is called: the replies below are scripted and served by brute_nb's local fake provider
(``brute_nb.testing.FakeProvider``), speaking Anthropic's wire format to the real ``anthropic`` SDK. The
cassette holds that traffic; the notebooks replay it through the same SDK client.

    .venv/bin/python notebooks/record.py            # all demos
    .venv/bin/python notebooks/record.py quickstart # one
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from brute_nb.testing import FakeProvider, call, reply

HERE = Path(__file__).resolve().parent

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
}


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
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def record(name: str) -> None:
    cassette = HERE / "cassettes" / f"{name}.jsonl"
    cassette.unlink(missing_ok=True)
    with FakeProvider(SCRIPTS[name]) as fake:
        extra = EXTRA_ENV[name](fake) if name in EXTRA_ENV else {}
        run(name, "record", {"BRUTE_NB_DEMO": "record", "ANTHROPIC_API_KEY": fake.api_key or "fake",
                             "ANTHROPIC_BASE_URL": fake.base_url, **extra})
        left = len(fake.script)
    if left:
        raise SystemExit(f"{name}: {left} scripted replies were not used; the notebook and script disagree")
    nb = run(name, "replay", {"BRUTE_NB_DEMO": "replay"})
    nbformat.write(nb, HERE / f"{name}.ipynb")
    print(f"{name}: recorded {cassette.relative_to(HERE.parent)} and stored the replayed outputs")


if __name__ == "__main__":
    for demo in sys.argv[1:] or list(SCRIPTS):
        record(demo)
