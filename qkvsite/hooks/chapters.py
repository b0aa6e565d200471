"""The notebook section of the nav, made from the chapter list (``qkvsite.config.chapters``)."""

from mkdocs.plugins import event_priority

from qkvsite import config as site

NOTEBOOKS = "笔记本"  # translated by nav_translations in mkdocs.yml


@event_priority(100)  # before mkdocs-static-i18n reads the nav
def on_config(config):
    nav = [item for item in config.nav if not (isinstance(item, dict) and NOTEBOOKS in item)]
    config.nav = nav + [{NOTEBOOKS: [f"notebooks/{chapter}.md" for chapter in site.chapters()]}]
    return config
