"""The run's progress bar: rows done (cached rows count as done from the start), failures, tokens, cost, ETA.

tqdm picks the notebook widget in Jupyter and a text bar elsewhere (``tqdm.auto``); its ETA comes from the rows
done this run, so cached rows do not make it optimistic. Failures look like failures: the bar turns amber at the
first failed row and red when every row so far failed, and the run ends with one line naming how many failed and
the commonest error. The cost shown is the frame's: the sum of the priced rows, absent while no row has a price
(the frame's ``cost`` is then ``<NA>``), never a ``$0.0000`` that reads as free.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from brute_nb.cost import format_usd
from brute_nb.map.cache import Record
from brute_nb.usage import Usage

SOME_FAILED = "#bf8700"
ALL_FAILED = "#cf222e"


class Progress:
    def __init__(self, total: int, cached: int, *, enabled: bool, name: str) -> None:
        self.failed = 0
        self.done = 0
        self.tokens = 0
        self.cost: float | None = None
        self.errors: Counter[str] = Counter()
        self._bar: Any = None
        self.name = name
        if enabled and total > cached:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=cached, desc=name, unit="row", dynamic_ncols=True)

    def update(self, record: Record, rows: int = 1) -> None:
        self.done += rows
        error = record.get("error")
        if error is not None:
            self.failed += rows
            self.errors[str(error).strip().split("\n", 1)[0][:200]] += rows
        self.tokens += Usage(record.get("input_tokens") or 0, record.get("output_tokens") or 0).tokens
        if record.get("cost") is not None:
            self.cost = (self.cost or 0.0) + float(record["cost"])
        if self._bar is not None:
            postfix: dict[str, Any] = {"failed": self.failed, "tokens": self.tokens}
            if self.cost is not None:
                postfix["cost"] = format_usd(self.cost)
            self._bar.set_postfix(postfix, refresh=False)
            if self.failed:
                self._bar.colour = ALL_FAILED if self.failed == self.done else SOME_FAILED
            self._bar.update(rows)

    def summary(self) -> str | None:
        """One line when rows failed: how many, and the commonest error with its count."""
        if not self.failed:
            return None
        error, times = self.errors.most_common(1)[0]
        rows = f"all {self.done} rows" if self.failed == self.done else f"{self.failed} of {self.done} rows"
        return (f"{rows} failed; the commonest error ({times}x): {error}. The frame's error column has each row's; "
                "failed rows run again on the next call")

    def status(self, text: str) -> None:
        """What the run is waiting for (a batch's status while it is polled), beside the run's name."""
        if self._bar is not None:
            self._bar.set_description(f"{self.name} ({text})", refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            line = self.summary()
            if line is not None:
                self._bar.write(line)
