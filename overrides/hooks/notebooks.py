"""MkDocs hook: The notebook edition: each chapter executed once, rendered in both languages (``qkvsite.notebooks``).

The handlers live in qkvsite.hooks.notebooks; this file only hands them to MkDocs.
"""

from qkvsite.hooks.notebooks import (  # noqa: F401
    on_config,
    on_files,
    on_post_build,
    on_pre_build,
    on_pre_page,
    on_serve,
)
