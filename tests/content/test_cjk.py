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
# elements that start a new line of their own: text on both sides of one is never run together
BLOCKS = set(
    "p li ul ol dl dt dd div table thead tbody tr td th h1 h2 h3 h4 h5 h6 pre details summary "
    "figure figcaption blockquote aside section article nav header footer hr br".split()
)


def inline_runs(element) -> list[str]:
    """The text of ``element`` as a reader sees it, one string per run of inline content: code,
    formulas and buttons stand for one non-Chinese word; a block element ends a run."""
    from bs4 import NavigableString

    runs, run = [], []
    for child in element.children:
        if isinstance(child, NavigableString):
            run.append(str(child))
        elif child.name in ("script", "style") or "headerlink" in child.get("class", []):
            continue
        elif child.name in ("code", "math") or "md-button" in child.get("class", []):
            run.append(" X ")
        elif child.name in BLOCKS:
            runs.append("".join(run))
            run = []
            if child.name != "pre":
                runs.extend(inline_runs(child))
        else:
            inner = inline_runs(child)
            run.append(inner[0])
            if len(inner) > 1:  # a block inside an inline element ends the run
                runs.append("".join(run))
                runs.extend(inner[1:-1])
                run = [inner[-1]]
    runs.append("".join(run))
    return runs


def test_runs_of_inline_text_end_at_block_elements_and_see_through_links():
    from bs4 import BeautifulSoup

    html = (
        "<div><p>见<a href='x'>代码仓库</a>\n写明。</p>\n"
        "<ul><li>列表\n<ul><li>项</li></ul></li></ul></div>"
    )
    runs = inline_runs(BeautifulSoup(html, "html.parser").div)
    assert "见代码仓库\n写明。" in runs
    assert not any(
        re.search(f"[{CJK}]\\s*\\n\\s*[{CJK}]", r) for r in runs if "列表" in r and "项" in r
    )


@pytest.mark.site
@pytest.mark.parametrize(
    "url",
    [config.page_url(config.page_name(p), "zh") for p in ZH_PAGES] + ZH_NOTEBOOK_PAGES,
)
def test_no_chinese_page_shows_a_space_from_a_source_line_break(site, url):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((site / url / "index.html").read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup.body
    # two Chinese characters with a line break between them in one run of text: shown with a space
    found = [
        m[0]
        for run in inline_runs(article)
        for m in re.finditer(f".{{0,8}}[{CJK}][ \\t]*\\n\\s*[{CJK}].{{0,8}}", run)
    ]
    assert found == []


def test_chinese_captions_are_upright():
    css = (config.DOCS / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r":lang\(zh\) \.md-typeset figcaption \{\s*font-style: normal;", css)
