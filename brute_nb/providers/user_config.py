"""brute_nb's folder in the user's config, where model aliases and stored keys live (one place for both).

The platform's user config folder through ``platformdirs`` (``$XDG_CONFIG_HOME/brute_nb``, by default
``~/.config/brute_nb``, on Linux); ``BRUTE_NB_CONFIG_DIR`` names another folder (tests, a shared machine).
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_VARIABLE = "BRUTE_NB_CONFIG_DIR"


def config_dir() -> Path:
    given = os.environ.get(CONFIG_VARIABLE)
    if given:
        return Path(given).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("brute_nb", appauthor=False))
