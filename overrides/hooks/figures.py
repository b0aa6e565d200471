"""MkDocs hook: every registered figure rendered to SVG at build time, light and dark.

The handlers live in qkvsite.hooks.figures; this file only hands them to MkDocs.
"""

from qkvsite.hooks.figures import on_files, on_page_markdown  # noqa: F401
