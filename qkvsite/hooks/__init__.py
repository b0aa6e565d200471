"""What the site's MkDocs plugin (``qkvsite.plugin``) does at each event: a module per concern.

``building(config)`` says which language the current pass of mkdocs-static-i18n builds.
"""

from qkvsite import config as site


def building(config) -> str:
    """The language of the current build pass."""
    i18n = config.plugins.get("i18n")
    return getattr(i18n, "current_language", None) or site.default_language()


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
    return not getattr(i18n, "building", False)
