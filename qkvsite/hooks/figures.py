"""Every registered figure rendered to SVG at build time (``qkvsite.figures``), light and dark.

Each is added to the build as generated files, ``figures/<name>.svg`` and
``figures/<name>.dark.svg``, with labels in the language being built; pages of
both languages link to the same relative paths. No image is ever committed.

On a page, the author writes ``![alt](figures/<name>.svg)``; it becomes both
variants, each a link to itself (a tap on a phone opens the figure full size),
of which the page shows the one of its colour scheme (docs/stylesheets/extra.css)
and loads it lazily.
"""

import re

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from qkvsite import config as site
from qkvsite.dialect import FIGURE
from qkvsite.figure_cache import SCHEMES, file_name, registered, svg
from qkvsite.hooks import building

OPEN = {"zh": "点击查看原图", "en": "Open the figure full size"}


@event_priority(-200)  # after mkdocs-static-i18n (-100) has sorted the files by language
def on_files(files, config):
    lang = building(config)
    for name in registered():
        for scheme in SCHEMES:
            file = File.generated(config, f"figures/{file_name(name, scheme)}", content=svg(name, lang, scheme))
            file.dest_uri = site.url_prefix(lang) + file.dest_uri
            files.append(file)
    return files


def figure_markdown(alt: str, name: str, lang: str) -> str:
    links = []
    for scheme in SCHEMES:
        path = f"figures/{file_name(name, scheme)}"
        links.append(f'[![{alt}]({path}){{ loading=lazy }}]({path} "{OPEN[lang]}"){{ .qkv-figure .qkv-{scheme} }}')
    return "".join(links)


def on_page_markdown(markdown, page, config, files):
    lang = building(config)
    return re.sub(
        FIGURE.pattern, lambda m: figure_markdown(m["alt"], m["name"], lang), markdown, flags=FIGURE.flags | re.M
    )
