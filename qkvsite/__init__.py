"""Build and test tooling of the site: everything that is not an example readers see.

``snippets/`` holds the examples; this package holds what turns them into a tested site.
"""
