"""MkDocs hook: Every code block labelled with where it comes from, linked to that source in the repository.

The handlers live in qkvsite.hooks.sources; this file only hands them to MkDocs.
"""

from qkvsite.hooks.sources import on_page_content, on_page_context, on_page_markdown  # noqa: F401
