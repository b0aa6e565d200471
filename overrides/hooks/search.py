"""MkDocs hook: Search: each page indexed once per content, and one index per language.

The handlers live in qkvsite.hooks.search; this file only hands them to MkDocs.
"""

from qkvsite.hooks.search import on_post_build, on_pre_build  # noqa: F401
