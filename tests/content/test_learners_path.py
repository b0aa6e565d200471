"""The learner's path: the home page's first screen, the reading times, the notation table and the
corrections."""

import re

import pytest
from pymdownx.slugs import slugify as slugs

from qkvsite import config
from qkvsite.config import DOCS
from qkvsite.hooks import chapters as hook

LANGS = ["zh", "en"]
slugify = slugs(case="lower")  # mkdocs.yml's toc slugify


def text(name, lang):
    return (DOCS / f"{name}.{lang}.md").read_text(encoding="utf-8")


def first_screen(lang):
    """The home page up to its first section: what a reader sees before scrolling."""
    return text("index", lang).split("\n## ", 1)[0]


# --- reading time ---


def test_words_are_counted_in_the_text_only():
    page = """---
description: not counted
---

# 1. A title

Two words, `code` and $d_k$ [a link](https://example.org/long/url).

<!--pytest-codeblocks:expected-output-->
```text
many words that the reader does not read
```

## References and further reading

- not counted either
"""
    # the title "1. A title", then "Two words, `code` and $d_k$ a link": a code span or a formula
    # is one word
    assert hook.count_words(page) == 3 + 7


def test_chinese_is_counted_in_characters_and_its_latin_words_apart():
    page = """# 1. 点积

两个向量的 `q · k` 越大，softmax 给的权重越大。$d_k$ [链接](https://example.org)。
"""
    # 点积 两个向量的 越大 给的权重越大 链接: 17 characters; "1." softmax `q · k` $d_k$: 4 words
    assert hook.count_chinese(page) == (17, 4)


@pytest.mark.parametrize("chapter", config.chapters())
def test_reading_time_counts_each_editions_own_text_at_the_stated_rates(chapter):
    words = hook.count_words(text(chapter, "en"))
    assert words > 500, chapter  # a chapter, not a stub
    assert hook.reading_minutes(chapter, "en") == round(words / hook.WORDS_PER_MINUTE)
    characters, latin = hook.count_chinese(text(chapter, "zh"))
    assert characters > 1000, chapter
    minutes = characters / hook.CHARACTERS_PER_MINUTE + latin / hook.WORDS_PER_MINUTE
    assert hook.reading_minutes(chapter, "zh") == round(minutes)


@pytest.mark.parametrize("chapter", config.chapters())
def test_code_time_counts_the_lines_and_blocks_of_the_page(chapter):
    blocks, lines = hook.code_size(chapter)
    assert blocks >= 5 and lines > 5 * blocks, chapter
    assert hook.code_size(chapter, "zh") == (blocks, lines)  # the same code in both editions
    per_block = hook.MINUTES_PER_BLOCK
    expected = round(lines / hook.CODE_LINES_PER_MINUTE + blocks * per_block)
    assert hook.code_minutes(chapter) == expected


RATES = {
    "en": [
        f"{hook.WORDS_PER_MINUTE} words a minute",
        f"lines at {hook.CODE_LINES_PER_MINUTE} a minute",
        f"{hook.MINUTES_PER_BLOCK} minute to run each block",
    ],
    "zh": [
        f"每分钟 {hook.CHARACTERS_PER_MINUTE} 个汉字",
        f"每分钟 {hook.WORDS_PER_MINUTE} 个计",
        f"每分钟读 {hook.CODE_LINES_PER_MINUTE} 行",
        f"每段代码再加 {hook.MINUTES_PER_BLOCK} 分钟",
    ],
}


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_states_the_times_and_their_rates(lang):
    home = text("index", lang)
    for placeholder in [
        hook.READING_TIME,
        hook.CHAPTER_TIME,
        hook.TOTAL_READING,
        hook.TOTAL_TIME,
    ]:
        assert placeholder in first_screen(lang), placeholder
    for rate in RATES[lang]:  # the rates are said, not hidden
        assert rate in home, rate


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_times_are_the_chapters_ranges_and_totals(lang):
    reading = [hook.reading_minutes(chapter, lang) for chapter in config.chapters()]
    code = [hook.code_minutes(chapter, lang) for chapter in config.chapters()]
    both = [r + c for r, c in zip(reading, code, strict=True)]
    times = hook.times(lang)
    assert times[hook.READING_TIME] == f"{min(reading)}–{max(reading)}"
    assert times[hook.CHAPTER_TIME] == f"{min(both)}–{max(both)}"
    assert float(times[hook.TOTAL_READING]) == pytest.approx(sum(reading) / 60, abs=0.25)
    assert float(times[hook.TOTAL_TIME]) == pytest.approx(sum(both) / 60, abs=0.25)
    assert float(times[hook.TOTAL_TIME]) > 2 * float(times[hook.TOTAL_READING])


@pytest.mark.parametrize("minutes, hours", [(133, "2"), (150, "2.5"), (740, "12.5"), (5, "0.5")])
def test_hours_are_rounded_to_the_half_hour(minutes, hours):
    assert hook.hours(minutes) == hours


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_list_gives_each_chapter_its_reading_and_code_time(lang):
    listed = hook.chapter_list(lang).split("\n")
    assert len(listed) == len(config.chapters())
    for line, chapter in zip(listed, config.chapters(), strict=True):
        minutes = (hook.reading_minutes(chapter, lang), hook.code_minutes(chapter, lang))
        assert hook.MINUTES[lang].format(*minutes) in line


# --- what you will build, the routes ---

OUTCOMES = {
    "en": "## What you will build",
    "zh": "## 学完你会做出什么",
}
ROUTES = {
    "en": ["Core", "Engineering", "Reference"],
    "zh": ["核心", "工程", "查阅"],
}


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_lists_what_you_will_build_each_item_linking_its_chapter(lang):
    home = text("index", lang)
    section = home.split(OUTCOMES[lang], 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^- (.+(?:\n  .+)*)", section, re.M)
    assert len(items) >= 6
    for item in items:
        assert re.search(r"\]\((?:" + "|".join(config.chapters()) + r")\.md\)", item), item
    for promise in ["nn.MultiheadAttention", "F.scaled_dot_product_attention"]:
        assert promise in section


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_has_a_route_map_with_core_engineering_and_reference(lang):
    home = text("index", lang)
    rows = [line for line in home.split("\n") if line.startswith("| ")]
    firsts = [row.split(" | ")[0].removeprefix("| ") for row in rows]
    for route in ROUTES[lang]:
        assert route in firsts, route
    reference = rows[firsts.index(ROUTES[lang][2])]
    for page in ["faq.md", "bug-gallery.md", "glossary.md", "cheatsheet.md"]:
        assert f"]({page})" in reference, page
    assert "](transformer.md)" in home


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_says_verification_in_one_line_with_a_link(lang):
    home = text("index", lang)
    lines = [line for line in home.split("\n") if "](verification.md)" in line]
    assert len(lines) == 1
    assert "## How the pages are checked" not in home and "## 页面怎样核对" not in home


# --- the first screen ---

FIRST_SCREEN = {
    "en": [
        "For programmers",
        "Python",
        "PyTorch tensors",
        "matrix product",
        "Start with chapter 1",
    ],
    "zh": ["程序员", "Python", "PyTorch 张量", "矩阵乘法", "从第 1 章开始"],
}


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_first_screen_has_audience_prerequisites_time_start_link_and_a_figure(lang):
    screen = first_screen(lang)
    for words in FIRST_SCREEN[lang]:
        assert words in screen, words
    assert re.search(r"\]\(dot-product\.md\)\{ \.md-button \.md-button--primary \}", screen)
    assert re.search(r"^!\[[^\]]+\]\(figures/[\w-]+\.svg\)\n/// caption$", screen, re.M)
    for promise in ["test", "测试", "record", "记录"]:  # the promise about tests comes later
        assert promise not in screen
    # the hero picture is the idea (one token looking at the others), not a grid of numbers
    assert "](figures/attention-idea.svg)" in screen


@pytest.mark.parametrize("lang", LANGS)
def test_home_page_says_that_code_and_outputs_are_in_english(lang):
    said = {
        "en": "code, comments and printed outputs are in English",
        "zh": "代码、注释和打印的输出都是英文",
    }
    assert said[lang] in text("index", lang)


def test_home_page_figure_is_one_the_build_draws():
    from qkvsite.figure_cache import declared

    for lang in LANGS:
        for name in re.findall(r"\]\(figures/([\w-]+)\.svg\)", text("index", lang)):
            assert name in declared()


# --- the notation table ---

SYMBOLS = (
    r"$L$ $L_q$ $L_k$ $B$ $d_{\text{model}}$ $H$ $d_k$ $d_v$ $d$ $G$ $S$ $A$ $Z$ $i$ $j$ $m$"
).split()


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_has_the_notation_table(lang):
    glossary = text("glossary", lang)
    table = glossary[glossary.index("{#notation}") :]
    rows = [line for line in table.split("\n") if line.startswith("| $")]
    firsts = " ".join(row.split(" | ")[0] for row in rows)
    for symbol in SYMBOLS:
        assert symbol in firsts, symbol
    for other in ["n", "h", "N", "E", "embed_dim"]:  # what the paper and PyTorch write instead
        assert re.search(rf"(?<![\w$]){other}(?![\w$])", table), other


@pytest.mark.parametrize(
    "term", ["token", "logits", "embedding", "pre-norm", "positional encoding"]
)
def test_glossary_defines_the_terms_learners_meet(term):
    assert re.search(rf"^\| [^|]+ \| {term} \| ", text("glossary", "en"), re.M)


def test_glossary_positional_encoding_covers_rope_and_alibi():
    row = next(
        line for line in text("glossary", "en").split("\n") if "| positional encoding |" in line
    )
    assert "RoPE" in row and "ALiBi" in row and "Q and K" in row and "scores" in row


# --- corrections ---

HEADING = re.compile(r"^(#{2,6}) (.*?)(?: \{ ?#([\w-]+)[^}]*\})?$", re.M)


def anchors(name, lang):
    """The ids of a page's headings: explicit ones, or the slug of the heading's text."""
    found = set()
    for _, title, explicit in HEADING.findall(text(name, lang)):
        found.add(explicit or slugify(re.sub(r"[`*]", "", title), "-"))
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_every_correction_has_a_fixed_anchor_and_links_where_the_site_shows_it(lang):
    page = text("corrections", lang)
    entries = re.split(r"^### ", page, flags=re.M)[1:]
    assert len(entries) >= 20
    for entry in entries:
        heading = entry.split("\n", 1)[0]
        assert re.search(r"\{ ?#[\w-]+", heading), heading
        assert re.search(r"\]\([\w-]+\.md(#[^)]+)?\)", entry), heading


@pytest.mark.parametrize("lang", LANGS)
def test_corrections_link_anchors_that_exist(lang):
    for target, anchor in re.findall(r"\]\(([\w-]+)\.md#([^)]+)\)", text("corrections", lang)):
        assert anchor in anchors(target, lang), f"corrections.{lang}.md links {target}.md#{anchor}"


def test_corrections_come_after_the_faq_and_the_bug_gallery_and_before_the_glossary_in_the_nav():
    nav = [
        next(iter(item)) if isinstance(item, dict) else item for item in config.settings()["nav"]
    ]
    assert nav.index("FAQ") + 1 == nav.index("bug-gallery.md") == nav.index("corrections.md") - 1
    assert nav.index("corrections.md") == nav.index("glossary.md") - 1


def test_english_corrections_page_says_where_the_site_came_from():
    intro = text("corrections", "en").split("\n## ", 1)[0]
    assert "grew out of a Chinese article" in intro
