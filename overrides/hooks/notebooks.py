"""MkDocs hook: The notebook edition of every chapter, generated before each build (``qkvsite.notebooks``).

The handlers live in qkvsite.hooks.notebooks; this file only hands them to MkDocs.
"""

from qkvsite.hooks.notebooks import on_pre_build  # noqa: F401
