"""The site's MkDocs plugin (``plugins: - qkv`` in mkdocs.yml): every event the site handles, in
build order.

MkDocs 1.6 builds in this order: on_config, on_pre_build, on_files, then each page's Markdown and
HTML (on_page_markdown, on_page_content), on_env, the theme's own templates (404, sitemap:
on_template_context, on_post_template), then each page's template (on_page_context,
on_post_page), and on_post_build. On each event it calls every plugin, the highest
``event_priority`` first, then in mkdocs.yml's order (this plugin is listed last).
mkdocs-static-i18n (priority -100 on most events) builds the default language first, then each
other language from inside its own on_post_build, and every pass calls every event again:
``qkvsite.hooks.building(config)`` is the language of the pass. What each step does lives in
``qkvsite.hooks``.
"""

from __future__ import annotations

from mkdocs.plugins import BasePlugin, event_priority

from qkvsite import cjk, highlight, records
from qkvsite import config as site
from qkvsite.hooks import (
    building,
    chapters,
    figures,
    material_fixes,
    math,
    notebooks,
    search,
    social,
    sources,
    verification,
    whole_build_ends,
    widgets,
)
from qkvsite.prepare import prepare


class Site(BasePlugin):
    def __init__(self):
        self.drawings = None  # the figures' drawings, worked out by the default language's pass
        self.pages = None  # every page block's fingerprint (qkvsite.records), read once a build
        self.anchors = {}  # every page's heading ids per language, for the language switcher

    @event_priority(100)  # before mkdocs-static-i18n reconfigures the nav (-100)
    def on_config(self, config):
        site.use(config)  # the settings every part of the build reads
        highlight.require_page_lexer()
        sources.repo_from_git_remote(config)
        sources.no_repository_no_edit_links(config)
        chapters.add_notebook_nav(config)
        notebooks.set_up_rendering(config)
        search.quiet_word_cutter()
        return config

    def on_pre_build(self, config):
        # the first pass makes what every language needs
        if building(config) == site.default_language():
            self.drawings = prepare(config.site_url, config.repo_url, social.every_card())
            self.pages = records.fingerprint()
            self.anchors = {}
        notebooks.check_rendered_pages(config)
        verification.set_claim(config, self.pages)

    @event_priority(-150)  # after mkdocs-static-i18n (-100) has sorted the files by language
    def on_files(self, files, config):
        files = notebooks.notebook_pages_are_pages(files, config)
        figures.add_figure_files(files, config, self.drawings)
        widgets.add_widget_files(files, config)
        social.add_card_files(files, config)
        return files

    def on_page_markdown(self, markdown, page, config, files):
        markdown = chapters.add_chapter_links(markdown, page, config)
        markdown = figures.show_figures(markdown, config, self.drawings)
        markdown = sources.title_blocks(markdown, page, config)
        markdown = cjk.join_cjk_lines(markdown)
        return verification.add_records(markdown, page, config, self.pages)

    def on_page_content(self, html, page, config, files):
        # what search and descriptions read
        html = math.plain_formulas(notebooks.without_dead_style(html, page))
        search.leave_out_notebook_page(page)
        social.describe_page(html, page, config)
        html = widgets.point_to_data(html, page, config)
        return sources.link_titles(html, page)

    def on_template_context(self, context, template_name, config):
        return material_fixes.not_found_context(context, template_name, config)

    def on_post_template(self, output, template_name, config):
        return material_fixes.not_found_page(output, template_name, config)

    @event_priority(-50)  # after Material's search plugin (0) has indexed the page's text
    def on_page_context(self, context, page, config, nav):
        page.content = math.typeset_page(page.content, page)
        notebooks.edit_the_chapter_page(page)
        material_fixes.record_anchors(page, building(config), self.anchors)
        return context

    def on_post_page(self, output, page, config):
        output = material_fixes.fix_page(output, config)
        return widgets.load_viewer(output, page)

    # after mkdocs-static-i18n (-100) has built the other languages and the search index
    @event_priority(-200)
    def on_post_build(self, config):
        if whole_build_ends(config):
            search.one_index_per_language(config)
            material_fixes.write_anchors(config, self.anchors)
            notebooks.finish(config)
            widgets.evict()

    def on_serve(self, server, config, builder):
        return notebooks.watch(server, config)
