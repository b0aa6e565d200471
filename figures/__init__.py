"""The chapters' figures: one module per chapter, each figure drawn from the values its example
computes.

Content, like ``snippets/``: a module declares its figures with ``@figure("<name>", "<example>")``
and draws them with the library in ``qkvsite/figures.py`` (see CONTRIBUTING, "Figures").
"""
