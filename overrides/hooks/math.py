"""MkDocs hook: formulas typeset as MathML at build time.

The handlers live in qkvsite.hooks.math; this file only hands them to MkDocs.
"""

from qkvsite.hooks.math import on_page_content  # noqa: F401
