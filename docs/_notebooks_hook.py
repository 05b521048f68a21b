"""MkDocs hook: publish every notebooks/*.ipynb (at the repository root) as a docs page.

The notebooks live outside ``docs/`` so that JupyterLab (``make explore``) opens them where
they are. This hook adds each one to the build as ``notebooks/<name>.ipynb`` before
mkdocs-jupyter looks at the files, and fills the nav's "Notebooks" section with them in file
name order, so a new notebook appears in the site without an edit to ``mkdocs.yml``.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

SECTION = "Notebooks"


def _notebooks(config) -> list[Path]:
    root = Path(config.config_file_path).resolve().parent
    return sorted((root / "notebooks").glob("*.ipynb"))


def on_config(config):
    found = [f"notebooks/{path.name}" for path in _notebooks(config)]
    for item in config.nav or []:
        if isinstance(item, dict) and SECTION in item:
            item[SECTION] = found
    return config


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config) -> Files:
    for path in _notebooks(config):
        files.append(
            File(
                f"notebooks/{path.name}",
                src_dir=str(path.parent.parent),
                dest_dir=config.site_dir,
                use_directory_urls=config.use_directory_urls,
            )
        )
    return files
