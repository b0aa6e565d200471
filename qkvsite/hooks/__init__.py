"""What the MkDocs hooks do. ``overrides/hooks/*.py`` only import these handlers.

Each module handles one concern; ``building(config)`` says which language the
current pass of mkdocs-static-i18n builds.
"""

from qkvsite import config as site


def building(config) -> str:
    """The language of the current build pass."""
    i18n = config.plugins.get("i18n")
    return getattr(i18n, "current_language", None) or site.default_language()
