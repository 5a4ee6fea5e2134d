"""``confirm_above=``: a map whose estimate may cost more than the user's ceiling asks before it sends anything.

The question is the estimate itself (rows, tokens, the cost range) and one yes/no: ``input()`` in a cell where a
person can answer (a kernel whose client allows stdin, or a terminal). Where no one can (nbclient, nbval,
papermill, a script with no terminal) the run is refused with ``CostNotConfirmedError`` saying what to change,
never sent on the chance that it was fine. The chat panel's buttons cannot answer here: a map runs in a cell, and a
cell that is running receives no widget clicks until it ends.

An estimate whose upper end is unknown (a model the price table does not know, or replies with no ``max_tokens``
and no context window known to bound them) counts as above any ceiling: a ceiling is a promise that cannot be kept
blind. The upper end never comes from the rows already answered (``map.cost_estimate``): a short reply on three
rows promises nothing of the rest.
"""

from __future__ import annotations

from brute_nb.cost import format_usd
from brute_nb.errors import BruteError
from brute_nb.map.context import Ask
from brute_nb.map.cost_estimate import Estimate


class CostNotConfirmedError(BruteError):
    """A map above ``confirm_above`` that no one agreed to (the answer was no, or no one could answer)."""


def needs_asking(estimate: Estimate, limit: float, *, batch: bool) -> str | None:
    """Why the run must be confirmed (None when its estimate stays within ``limit``)."""
    if estimate.requests == 0:
        return None
    cost = estimate.batch_cost if batch else estimate.cost
    high = None if cost is None else cost[1]
    if high is None:
        why = ("the price table does not know the model" if cost is None else
               "nothing bounds the replies: give the provider a max_tokens (or -o max_completion_tokens=...)")
        return f"its cost cannot be bounded ({why}), and confirm_above is {format_usd(limit)}"
    if high > limit:
        return f"it may cost up to {format_usd(high)}, above confirm_above={format_usd(limit)}"
    return None


def confirm(estimate: Estimate, limit: float, *, ask: Ask | None, batch: bool = False) -> None:
    """Return when the run may go ahead; raise ``CostNotConfirmedError`` when it may not. ``ask`` puts the question
    to a person (the run's context's: ``input`` where one can answer); None when no one can."""
    reason = needs_asking(estimate, limit, batch=batch)
    if reason is None:
        return
    nothing = ("Nothing was sent. Run a smaller slice (df.head(10)), bound the replies with a lower max_tokens, or "
               "raise the ceiling: confirm_above=... in the call or %brute config confirm_above=...")
    if ask is None:
        raise CostNotConfirmedError(f"this map was not run: {reason}, and no one can answer a question here (no "
                                    f"stdin: nbclient, nbval or papermill). {nothing}\n\n{estimate!r}")
    print(repr(estimate), flush=True)
    answer = ask(f"{reason[:1].upper()}{reason[1:]}. Send {estimate.requests:,} requests? [y]es / [n]o: ")
    if answer.strip().lower()[:1] != "y":
        raise CostNotConfirmedError(f"this map was not run: you answered {answer.strip()[:20]!r}. {nothing}")

