"""Every registered figure rendered to SVG at build time (``qkvsite.figures``).

Each is added to the build as a generated file, ``figures/<name>.svg``, with
labels in the language being built; pages of both languages link to that same
relative path. No image is ever committed.
"""

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from qkvsite import config as site
from qkvsite.figures import load_all, render
from qkvsite.hooks import building


@event_priority(-200)  # after mkdocs-static-i18n (-100) has sorted the files by language
def on_files(files, config):
    lang = building(config)
    for name in load_all():
        file = File.generated(config, f"figures/{name}.svg", content=render(name, lang))
        file.dest_uri = site.url_prefix(lang) + file.dest_uri
        files.append(file)
    return files
