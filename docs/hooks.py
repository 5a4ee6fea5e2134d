"""MkDocs hook: the demo notebooks join the site from ``notebooks/`` where they live, at ``notebooks/<name>.ipynb``.

No copy or symlink to keep in step: the files are added to the build before mkdocs-jupyter looks for notebooks
(hence the high priority), and mkdocs-jupyter renders them with their saved outputs.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


@event_priority(100)
def on_files(files: Files, config: MkDocsConfig) -> Files:
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{notebook.name}", str(ROOT), config.site_dir, config.use_directory_urls))
    return files
