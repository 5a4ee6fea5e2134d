"""The run's progress bar: rows done (cached rows count as done from the start), failures, tokens, cost, ETA.

tqdm picks the notebook widget in Jupyter and a text bar elsewhere (``tqdm.auto``); its ETA comes from the rows
done this run, so cached rows do not make it optimistic.
"""

from __future__ import annotations

from typing import Any

from brute_nb.map.cache import Record
from brute_nb.usage import Usage


class Progress:
    def __init__(self, total: int, cached: int, *, enabled: bool, name: str) -> None:
        self.failed = 0
        self.tokens = 0
        self.cost = 0.0
        self._bar: Any = None
        self.name = name
        if enabled and total > cached:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=cached, desc=name, unit="row", dynamic_ncols=True)

    def update(self, record: Record, rows: int = 1) -> None:
        self.failed += record.get("error") is not None
        self.tokens += Usage(record.get("input_tokens") or 0, record.get("output_tokens") or 0).tokens
        self.cost += float(record.get("cost") or 0.0)
        if self._bar is not None:
            self._bar.set_postfix(failed=self.failed, tokens=self.tokens, cost=f"${self.cost:.4f}", refresh=False)
            self._bar.update(rows)

    def status(self, text: str) -> None:
        """What the run is waiting for (a batch's status while it is polled), beside the run's name."""
        if self._bar is not None:
            self._bar.set_description(f"{self.name} ({text})", refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
