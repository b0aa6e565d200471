"""Chinese typesetting (qkvsite.cjk, qkvsite.hooks.math): no space where a source line breaks
between two Chinese characters, upright captions, and no line that starts with Chinese punctuation
after a formula."""

import re

import pytest

from qkvsite import config
from qkvsite.cjk import join_cjk_lines
from qkvsite.hooks.math import typeset

CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
ZH_PAGES = [page for page in config.source_pages() if config.language_of(page) == "zh"]


def test_a_line_break_between_chinese_characters_is_joined_outside_code():
    markdown = (
        "## 标题\n正文第一行，\n第二行。\n\n```python\n# 中文\n# 注释\n```\n    缩进，\n    "
        "继续\nEnglish\n中文"
    )
    assert join_cjk_lines(markdown) == (
        "## 标题\n正文第一行，第二行。\n\n```python\n# 中文\n# 注释\n```\n    "
        "缩进，继续\nEnglish\n中文"
    )


def test_chinese_punctuation_after_an_inline_formula_cannot_start_a_line():
    html = typeset(
        '<p>矩阵 <span class="arithmatex">\\(Q\\)</span>、<span class="arithmatex">\\(K\\)</span> '
        "和</p>"
    )
    assert re.search(r'<span class="nowrap"><math [^>]*>.*?</math>、</span>', html)
    assert html.count('class="nowrap"') == 1  # only where punctuation follows


def test_a_break_after_a_link_or_bold_text_ending_in_chinese_is_joined_too():
    markdown = "见[代码仓库](https://example.org)\n写明。**重点**\n在这里。\n- 列表\n- 项"
    assert join_cjk_lines(markdown) == (
        "见[代码仓库](https://example.org)写明。**重点**在这里。\n- 列表\n- 项"
    )


ZH_NOTEBOOK_PAGES = [f"notebooks/{chapter}/" for chapter in config.chapters()]


@pytest.mark.site
@pytest.mark.parametrize(
    "url",
    [config.page_url(config.page_name(p), "zh") for p in ZH_PAGES] + ZH_NOTEBOOK_PAGES,
)
def test_no_chinese_page_shows_a_space_from_a_source_line_break(site, url):
    html = (site / url / "index.html").read_text(encoding="utf-8")
    start = html.index("<article") if "<article" in html else html.index("<body")
    article = re.sub(r"<pre\b.*?</pre>|<code\b.*?</code>", "", html[start:], flags=re.S)
    # the text a reader sees: two Chinese characters with a line break between them (tags aside)
    # are shown with a space
    text = re.sub(r"<[^>]+>", "", article)
    assert not re.findall(f".{{0,8}}[{CJK}][ \\t]*\\n\\s*[{CJK}].{{0,8}}", text)


def test_chinese_captions_are_upright():
    css = (config.DOCS / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r":lang\(zh\) \.md-typeset figcaption \{\s*font-style: normal;", css)
