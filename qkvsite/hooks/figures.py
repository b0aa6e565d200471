"""Every figure in the site, light and dark, drawn at build time (``qkvsite.figures``,
``qkvsite.figure_cache``).

Each is added to the build as generated files, ``figures/<name>.svg`` and
``figures/<name>.dark.svg``, with labels in the language being built; pages of both languages
link to the same relative paths. No image is ever committed.

On a page, the author writes ``![alt](figures/<name>.svg)``; it becomes both variants, each a
link to itself (a tap on a phone opens the figure full size), of which the page shows the one of
its colour scheme (docs/stylesheets/extra.css) and loads it lazily.
"""

import logging
import re

from mkdocs.structure.files import File

from qkvsite import config as site
from qkvsite.dialect import FIGURE
from qkvsite.figure_cache import SCHEMES, Drawings, file_name
from qkvsite.hooks import building

log = logging.getLogger("mkdocs.plugins.qkv")

OPEN = {"zh": "点击查看原图", "en": "Open the figure full size"}


def draw_now(name: str, lang: str, scheme: str) -> bytes:
    """A figure the cache lacks, drawn in the build's process (matplotlib is imported only then).
    The prepare stage draws every figure before a page or a notebook shows one, so this happens
    only to an entry damaged since: it is logged."""
    from qkvsite.figures import render

    log.info(f"qkv: figure {name} ({lang}, {scheme}) drawn in the build's process")
    return render(name, lang, scheme)


def add_figure_files(files, config, drawings: Drawings) -> None:
    """Every figure in both schemes, labelled in the pass's language, as files of the site."""
    lang = building(config)
    for name in drawings.figures:
        for scheme in SCHEMES:
            content = drawings.svg(name, lang, scheme)
            file = File.generated(config, f"figures/{file_name(name, scheme)}", content=content)
            file.dest_uri = site.url_prefix(lang) + file.dest_uri
            files.append(file)


SIZE = re.compile(rb'<svg\b[^>]*\bwidth="([\d.]+)pt" height="([\d.]+)pt"')


def figure_markdown(alt: str, name: str, lang: str, svg: bytes) -> str:
    """Both schemes' images, each sized as drawn (the page keeps the figure's place while it loads:
    no layout shift) and linking to itself."""
    width, height = (round(float(pt) * 4 / 3) for pt in SIZE.search(svg).groups())
    links = []
    for scheme in SCHEMES:
        path, attributes = (
            f"figures/{file_name(name, scheme)}",
            f"loading=lazy width={width} height={height}",
        )
        links.append(
            f'[![{alt}]({path}){{ {attributes} }}]({path} "{OPEN[lang]}"){{ .qkv-figure '
            f".qkv-{scheme} }}"
        )
    return "".join(links)


def show_figures(markdown: str, config, drawings: Drawings) -> str:
    """Each ``![alt](figures/<name>.svg)`` as both schemes' images, each linking to itself."""
    lang = building(config)
    figure = lambda m: figure_markdown(m["alt"], m["name"], lang, drawings.svg(m["name"], lang))  # noqa: E731
    return re.sub(FIGURE.pattern, figure, markdown, flags=FIGURE.flags | re.M)
