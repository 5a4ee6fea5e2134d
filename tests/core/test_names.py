"""No two classes of the package share a name (issue 26 item 7: two ``OpenAIResponses``, a provider and a transport,
and two ``Reply``, the fake's and the stream builder's, each read as the other where both were in view).

A class is named for what it holds, so a second one with the same name is either the same idea written twice or a
name that says too little. The pairs left are in different layers and never in view together; each says why.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import brute_nb
from tests.import_graph import read_modules

ROOT = Path(brute_nb.__file__).parent

SAME_NAME = {
    "Outcome": {"brute_nb.testing.outcome", "brute_nb.notebook.kernel_tools.python_tool"},
    # The fake server's scripted HTTP answer (testing/) and what running a cell's code gave (kernel_tools/);
    # neither is exported from its package.
    "Turn": {"brute_nb.map.comparison_frame", "brute_nb.notebook.kernel_tools.kernel_journal"},
    # A compared turn's row (map/) and a kernel turn's journal entry (kernel_tools/), each used only inside its
    # own folder and exported from neither package.
    "ServerTool": {"brute_nb.transports.server_tools", "brute_nb.tools.server"},
    # The transport's Protocol is what it reads of the tools' class, in a layer beside it that it may not import.
}


def classes() -> dict[str, set[str]]:
    """Every public top-level class name and the modules that define one."""
    found: dict[str, set[str]] = defaultdict(set)
    for module, path in read_modules(ROOT).items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].add(module)
    return found


def test_no_two_classes_share_a_name() -> None:
    twice = {name: modules for name, modules in classes().items() if len(modules) > 1}
    assert twice == SAME_NAME, "name the new class for what it holds (or, if it must, say why in SAME_NAME)"


def test_the_renamed_pairs_stay_apart() -> None:
    found = classes()
    assert found["OpenAIResponses"] == {"brute_nb.providers.openai"}  # the transport is ResponsesItems
    assert found["Reply"] == {"brute_nb.testing.script"}  # the stream builder is StreamedReply
