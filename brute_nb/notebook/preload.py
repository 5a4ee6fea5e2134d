"""Read the notebook's current session ahead, while the user types the first ``%%brute`` cell (issue 29 §5).

The first turn of a kernel reads and parses the whole session file: ~0.15 s for 50,000 messages, the same again
for each 50,000 more. ``%load_ext`` hands this to the warm-up thread (``warm.py``, a lower layer), which runs it
right after its first phase has imported the stack, so that turn finds the file parsed (``sessions.file.preload``)
and a cell waits for it as it waits for the SDK.

The invariant: reading ahead changes nothing a turn sees or writes. It only reads, through the same confinement
as a turn (the session's root, links refused), keeps nothing for a file a turn would treat differently (a torn
last line), and a turn uses what it read only if the file is byte for byte as it was then (its signature). It
never fails anything: a session that cannot be read ahead is read by its turn, which reports the real error.
"""

from __future__ import annotations

import contextlib
import warnings

READ_AHEAD_MAX = 256 * 2**20
"""Bytes of session file read ahead at most (a realistic 50,000-message session is ~26 MiB, parsed ~2.6x that in
memory): a larger one is read by its turn, if one comes, not on a guess at ``%load_ext``."""


def current_session() -> bool:
    """Read the registry's current session file ahead; whether it was kept."""
    from brute_nb.notebook.paths import session_path, session_root
    from brute_nb.notebook.registry import registry
    from brute_nb.sendable import ReadCheck
    from brute_nb.sessions.file import SessionFile, preload

    with contextlib.suppress(Exception), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a warning is the turn's to show, in its cell
        reg = registry()
        path = session_path(reg.location, reg.current_name)
        return preload(SessionFile(path, root=session_root(path)), ReadCheck(), max_bytes=READ_AHEAD_MAX)
    return False
