"""What a session may be called: a name that is a safe file name in the session folder, checked in one place.

The notebook's sessions, a map run's ``name=`` and a comparison's are all file names under ``<stem>.brute/``; the
rule lives here, with how sessions are stored, so ``map`` and the notebook share it without one importing the other.
"""

from __future__ import annotations

import re

from brute_nb.errors import SessionNameError

DEFAULT_SESSION = "default"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def check_session_name(name: str) -> str:
    """Return ``name`` if it can be a session file name, else raise ``SessionNameError`` saying what is allowed."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith(".archive"):
        raise SessionNameError(
            f"bad session name {name!r}: use 1-100 letters, digits, '-', '_' or '.', starting with a letter or "
            f"digit and not ending in '.archive' (e.g. {DEFAULT_SESSION!r} or 'data-cleaning')"
        )
    return name
