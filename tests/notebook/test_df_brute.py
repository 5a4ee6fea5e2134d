"""``df.brute`` right after ``%load_ext``, whichever came first, pandas or the extension: it was there only after
some other use of the engine had imported it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SHELL = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
{before}
shell.run_line_magic("load_ext", "brute_nb")
{after}
import pandas as pd
df = pd.DataFrame({{"review": ["good", "bad"]}})
print(type(df.brute).__name__, callable(df.brute.map), callable(df.brute.estimate))
"""


@pytest.mark.parametrize("pandas_first", [False, True], ids=["extension-first", "pandas-first"])
def test_df_brute_is_there_once_the_notebook_has_pandas(pandas_first: bool, tmp_path: Path) -> None:
    code = SHELL.format(before="import pandas" if pandas_first else "",
                        after="" if pandas_first else "assert 'brute_nb.map.accessor' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["BruteAccessor", "True", "True"]


def test_pandas_imports_as_before_with_the_hook_in_place(tmp_path: Path) -> None:
    """The hook hands pandas its own spec and loader and leaves ``sys.meta_path`` as it found it."""
    code = SHELL.format(before="finders = list(sys.meta_path)", after="") + (
        "import importlib.util\n"
        "assert sys.meta_path == finders, (sys.meta_path, finders)\n"
        "assert pd.__spec__.origin == importlib.util.find_spec('pandas').origin\n"
        "assert 'exec_module' not in vars(pd.__loader__)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
