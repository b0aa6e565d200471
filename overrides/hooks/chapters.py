"""MkDocs hook: The notebook section of the nav, made from the chapter list (``qkvsite.config.chapters``).

The handlers live in qkvsite.hooks.chapters; this file only hands them to MkDocs.
"""

from qkvsite.hooks.chapters import on_config  # noqa: F401
