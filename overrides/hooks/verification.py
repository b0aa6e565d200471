"""MkDocs hook: The Verification page and the footer's claim, both generated from the committed records.

The handlers live in qkvsite.hooks.verification; this file only hands them to MkDocs.
"""

from qkvsite.hooks.verification import on_config, on_page_markdown  # noqa: F401
