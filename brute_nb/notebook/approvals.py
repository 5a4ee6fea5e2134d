"""Asking a person in the notebook whether a tool call may run: ``input()`` in the cell, or in a terminal.

The policy and the ``Approvals`` middleware live in ``brute_nb.middleware.approvals``; this module is only the
question. Invariant: the person sees every character of what would run before answering (``describe``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from brute_nb.middleware.approvals import Asker


def stdin_available() -> bool:
    """Whether ``input()`` can reach a person: a kernel whose client allows stdin, or a terminal."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is not None:
        # nbclient, papermill and nbval send execute requests with allow_stdin=False.
        return bool(getattr(kernel, "_allow_stdin", False))
    stdin = sys.stdin
    return stdin is not None and stdin.isatty()


def describe(call: Any, risk: str) -> str:
    """The whole call, every character of every argument: what is approved is exactly what runs.

    Nothing is shortened or folded (a hidden tail such as ``&& touch ...`` would run after "y"); invisible and
    reordering characters (carriage returns, escapes, bidi overrides) show as ``\\uXXXX``; keys are redacted.
    """
    from brute_nb.notebook.views.render import visible
    from brute_nb.redact import redact

    parts = []
    for key, value in call.arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}={text}")
    return visible(redact(f"{call.name}({', '.join(parts)})  [{risk}]"))


def input_asker(call: Any, risk: str) -> str:
    """Asks in the cell with ``input()``: y (allow), n (deny), a (always allow this class).

    The call is printed in full first: a cell's output wraps long lines, while JupyterLab shows an ``input()``
    prompt on one line that does not wrap, so a long command in the prompt itself would be cut off from view.
    """
    print(f"brute wants to run {describe(call, risk)}", flush=True)
    answer = input(f"Allow {call.name}? [y]es / [n]o / [a]lways: ")
    key = answer.strip().lower()[:1]
    return {"y": "allow", "a": "always"}.get(key, "deny")


def default_asker() -> Asker | None:
    """``input()`` when someone can answer it, else None (so ``ask`` becomes ``deny``)."""
    return input_asker if stdin_available() else None
