"""What the site's MkDocs plugin (``qkvsite.plugin``) does at each event: a module per concern.

``building(config)`` says which language the current pass of mkdocs-static-i18n builds.
"""

from qkvsite import config as site
from qkvsite.upstream import require


def building(config) -> str:
    """The language of the current build pass."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return site.default_language()
    require(hasattr(i18n, "current_language"), "mkdocs-static-i18n", "current_language")
    return i18n.current_language or site.default_language()


def toc_items(toc):
    """Every entry of a page's table of contents, in page order (each heading before the ones under
    it)."""
    for item in toc:
        yield item
        yield from toc_items(item.children)


def whole_build_ends(config) -> bool:
    """Whether this pass's on_post_build ends the whole build: mkdocs-static-i18n builds the other
    languages from inside the default language's on_post_build, its ``building`` set meanwhile."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return True
    require(
        hasattr(i18n, "building"), "mkdocs-static-i18n", "building (its other languages' passes)"
    )
    return not i18n.building
