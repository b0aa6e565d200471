"""MkDocs hook: render every registered figure to SVG at build time.

Figures come from ``snippets.figures``: each runs a chapter's example and draws
the values it computed. They are added to the build as generated files
(``figures/<lang>/<name>.svg``), so no image is ever committed.
"""

import sys
from pathlib import Path

from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from snippets.figures import load_all, render, run_example  # noqa: E402

LANGUAGES = ["zh", "en"]


def on_files(files, config):
    run_example.cache_clear()  # `mkdocs serve` rebuilds in one process: rerun edited examples
    for name in load_all():
        for lang in LANGUAGES:
            files.append(File.generated(config, f"figures/{lang}/{name}.svg", content=render(name, lang)))
    return files
