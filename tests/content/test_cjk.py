"""Chinese typesetting (qkvsite.hooks.cjk, qkvsite.hooks.math): no space where a source line breaks
between two Chinese characters, upright captions, and no line that starts with Chinese punctuation
after a formula."""

import re

import pytest

from qkvsite import config
from qkvsite.hooks.cjk import join_cjk_lines
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


@pytest.mark.site
@pytest.mark.parametrize("page", ZH_PAGES, ids=[p.name for p in ZH_PAGES])
def test_no_chinese_page_shows_a_space_from_a_source_line_break(site, page):
    url = config.page_url(config.page_name(page), config.language_of(page))
    html = (site / url / "index.html").read_text(encoding="utf-8")
    article = html[html.index("<article") : html.index("</article>")]
    article = re.sub(r"<pre\b.*?</pre>", "", article, flags=re.S)  # code keeps its lines
    # two characters with only a line break between them, no tag: one paragraph's text, shown with
    # a space
    assert not re.findall(f".{{0,8}}[{CJK}]\\n\\s*[{CJK}].{{0,8}}", article)


def test_chinese_captions_are_upright():
    css = (config.DOCS / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r":lang\(zh\) \.md-typeset figcaption \{\s*font-style: normal;", css)
