"""MkDocs hook: The chapter list, written once (the first section of mkdocs.yml's nav, ``qkvsite.config.chapters``).

The handlers live in qkvsite.hooks.chapters; this file only hands them to MkDocs.
"""

from qkvsite.hooks.chapters import on_config, on_page_markdown  # noqa: F401
