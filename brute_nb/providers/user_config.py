"""brute_nb's folder in the user's config, where model aliases and stored keys live (one place for both).

The platform's user config folder through ``platformdirs`` (``$XDG_CONFIG_HOME/brute_nb``, by default
``~/.config/brute_nb``, on Linux); ``BRUTE_NB_CONFIG_DIR`` names another folder (tests, a shared machine).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from brute_nb import confine

CONFIG_VARIABLE = "BRUTE_NB_CONFIG_DIR"


def config_dir() -> Path:
    given = os.environ.get(CONFIG_VARIABLE)
    if given:
        return Path(given).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("brute_nb", appauthor=False))


def read_object(file: Path, error: type[Exception], shape: str, *, limit: int, why: str) -> dict[str, str]:
    """The small JSON object of strings ``file`` holds (``{}`` when there is none), read through confinement; any
    other content raises ``error`` naming the file (and line) and what to do, never echoing what it holds."""
    try:
        data = json.loads(confine.read_file(file, limit=limit, why=why))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise error(f"{file}: cannot read it ({exc}); fix or remove the file") from None
    except json.JSONDecodeError as exc:
        raise error(f"{file}:{exc.lineno}: not valid JSON ({exc.msg}); fix or remove the file") from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise error(f"{file}: not valid JSON ({exc}); fix or remove the file") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise error(f"{file}: expected one JSON object of {shape}; fix or remove the file")
    return data
