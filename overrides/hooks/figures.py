"""MkDocs hook: render every registered figure to SVG at build time.

Figures come from ``snippets.figures``: each runs a chapter's example and draws
the values it computed. Each is added to the build as a generated file,
``figures/<name>.svg``, with labels in the language being built; pages of both
languages link to that same path. No image is ever committed.
"""

import sys
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from snippets.figures import load_all, render  # noqa: E402


@event_priority(-200)  # after mkdocs-static-i18n (-100) has sorted the files by language
def on_files(files, config):
    i18n = config.plugins.get("i18n")
    lang = i18n.current_language if i18n else config.theme["language"]
    prefix = "" if i18n is None or lang == i18n.default_language else f"{lang}/"
    for name in load_all():
        file = File.generated(config, f"figures/{name}.svg", content=render(name, lang))
        file.dest_uri = prefix + file.dest_uri
        files.append(file)
    return files
