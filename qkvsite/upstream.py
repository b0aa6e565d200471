"""What the build relies on in other packages beyond their documented interfaces.

Each such place asks ``require`` whether what it relies on still holds, naming the package. When an
upgrade breaks it, the build fails with that package, its installed version and the version the
code was written against, rather than with a symptom several steps later (a notebook page without
a language switcher, a search that finds nothing). The places:

- mkdocs-static-i18n: the language of the pass (``current_language``) and whether the default pass
  is building the others (``building``), read from its plugin object (``qkvsite.hooks``); its
  ``extra_alternate`` for the 404 page (``hooks.material_fixes``); each page file's ``alternates``,
  which its language switcher reads, made by hand for the notebook pages (``hooks.notebooks``).
- mkdocs-jupyter: its ``NotebookFile(file, use_directory_urls, site_dir)`` and ``should_include``,
  to make notebook pages of the files i18n rebuilt (``hooks.notebooks``).
- mkdocs-material: the search index's format (``config.lang``, ``config.pipeline``, ``docs``), which
  ``hooks.search`` splits by language; the page's ``__config`` script and hreflang links
  (``hooks.material_fixes``).
- pymdown-extensions: the ``snippet`` preprocessor's registry name (``qkvsite.dialect``).
"""

from __future__ import annotations

from importlib.metadata import version

# the version of each package these contracts were written against (requirements.txt pins them)
WRITTEN_AGAINST = {
    "mkdocs-static-i18n": "1.3.1",
    "mkdocs-jupyter": "0.26.3",
    "mkdocs-material": "9.8.2",
    "pymdown-extensions": "13.1.2",
}


class UpstreamChanged(RuntimeError):
    """Another package no longer has what the build relies on."""


def require(holds: bool, package: str, what: str) -> None:
    """Fail, naming ``package`` and the versions, unless ``holds``: ``what`` says what is relied
    on."""
    if not holds:
        raise UpstreamChanged(
            f"{package} {version(package)} (the build was written against"
            f" {WRITTEN_AGAINST[package]}) no longer has {what}"
        )
