"""The figures a reader can move (``qkvsite.widgets``): their data as files of each edition, and
their viewer on the pages that show one.

A page marks where a widget goes, right after the static figure it extends::

    <div class="qkv-widget" data-widget="<name>"></div>

The build adds ``widgets/<name>.json`` to each edition (``en/widgets/<name>.json`` for English),
with labels in its language; gives each marked ``div`` the relative URL of its JSON
(``data-src``); and loads ``javascripts/widgets.js`` on those pages only. A page that names a
widget nobody declared fails the build.
"""

import re

from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from qkvsite import config as site
from qkvsite import widgets
from qkvsite.hooks import building

MARK = re.compile(r'<div class="qkv-widget" data-widget="(?P<name>[a-z0-9-]+)"')
SCRIPT = "javascripts/widgets.js"


def json_path(name: str, lang: str) -> str:
    """Where a widget's data lies in the built site."""
    return f"{site.url_prefix(lang)}widgets/{name}.json"


def add_widget_files(files, config) -> None:
    """Every declared widget's JSON, labelled in the pass's language, as a file of the site."""
    lang = building(config)
    for name in widgets.declared():
        file = File.generated(
            config, f"widgets/{name}.json", content=widgets.widget_json(name, lang)
        )
        file.dest_uri = json_path(name, lang)
        files.append(file)


def point_to_data(html: str, page, config) -> str:
    """Each widget mark with the relative URL of its JSON (``data-src``)."""
    lang, known = building(config), widgets.declared()

    def with_source(match):
        name = match["name"]
        if name not in known:
            raise ValueError(f"{page.file.src_uri}: no widget {name!r} in figures/widgets.py")
        src = get_relative_url(json_path(name, lang), page.url or "./")
        return f'{match[0]} data-src="{src}"'

    return MARK.sub(with_source, html)


def load_viewer(output: str, page) -> str:
    """The viewer's script, at the end of a page that shows a widget (and only there)."""
    if not MARK.search(output):
        return output
    src = get_relative_url(SCRIPT, page.url or "./")
    return output.replace("</body>", f'<script src="{src}" defer></script></body>', 1)


def evict() -> None:
    """Drop the cached JSON no pass of this build used (after the last pass)."""
    widgets.CACHE.evict()
