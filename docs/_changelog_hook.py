"""MkDocs hook: the site's changelog page is CHANGELOG.md at the repository root.

The file stays at the root, where a reader of the repository (and the README's link) finds it;
this hook gives its text to ``docs/changelog.md`` at build time, with its links into ``docs/``
made relative to the site, so there is one changelog and no copy to keep in step.
"""

from __future__ import annotations

from pathlib import Path

PAGE = "changelog.md"


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri != PAGE:
        return markdown
    root = Path(config.config_file_path).resolve().parent
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    return text.replace("](docs/", "](").replace("]: docs/", "]: ")
