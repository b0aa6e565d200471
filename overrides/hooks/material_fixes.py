"""MkDocs hook: Where Material for MkDocs and mkdocs-static-i18n need help, and no template block offers it.

The handlers live in qkvsite.hooks.material_fixes; this file only hands them to MkDocs.
"""

from qkvsite.hooks.material_fixes import on_post_page, on_post_template, on_template_context  # noqa: F401
