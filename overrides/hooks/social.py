"""MkDocs hook: Link previews: OpenGraph and Twitter card data for every page, and a card image drawn at build time.

The handlers live in qkvsite.hooks.social; this file only hands them to MkDocs.
"""

from qkvsite.hooks.social import on_env, on_files, on_page_content, on_pre_build  # noqa: F401
