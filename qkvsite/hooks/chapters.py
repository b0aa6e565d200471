"""The chapter list, written once (the first section of mkdocs.yml's nav, ``qkvsite.config.chapters``).

From it: the nav's notebook section, and the chapter list of each home page
(the line ``<!-- chapters -->``), made of each chapter's title and the
``description`` of its front matter.
"""

import re

from mkdocs.plugins import event_priority

from qkvsite import config as site
from qkvsite.dialect import Page
from qkvsite.hooks import building

NOTEBOOKS = site.NOTEBOOKS_SECTION
PLACEHOLDER = "<!-- chapters -->"


@event_priority(100)  # before mkdocs-static-i18n reads the nav
def on_config(config):
    nav = [item for item in config.nav if not (isinstance(item, dict) and NOTEBOOKS in item)]
    config.nav = nav + [{NOTEBOOKS: [f"notebooks/{chapter}.ipynb" for chapter in site.chapters()]}]
    return config


def chapter_list(lang: str) -> str:
    """1. [title](page.md): description, for every chapter in order."""
    items = []
    for number, chapter in enumerate(site.chapters(), start=1):
        page = Page(site.DOCS / f"{chapter}.{lang}.md")
        title = re.sub(r"^\d+\.\s*", "", page.title)
        separator = "：" if lang == "zh" else ": "
        items.append(f"{number}. [{title}]({chapter}.md){separator}{page.meta['description']}")
    return "\n".join(items)


def on_page_markdown(markdown, page, config, files):
    if site.page_name(page.file.src_uri) != "index":
        return markdown
    if PLACEHOLDER not in markdown:
        raise ValueError(f"{page.file.src_uri} lacks the line {PLACEHOLDER} where the chapter list goes")
    return markdown.replace(PLACEHOLDER, chapter_list(building(config)))
