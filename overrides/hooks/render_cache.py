"""MkDocs hook: Work every build repeats, done once: Jinja's compiled templates and Pygments' highlighting.

The handlers live in qkvsite.hooks.render_cache; this file only hands them to MkDocs.
"""

from qkvsite.hooks.render_cache import on_env, on_post_build  # noqa: F401
