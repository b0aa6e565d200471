"""MkDocs hook: Every registered figure rendered to SVG at build time (``qkvsite.figures``).

The handlers live in qkvsite.hooks.figures; this file only hands them to MkDocs.
"""

from qkvsite.hooks.figures import on_files  # noqa: F401
