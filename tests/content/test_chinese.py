"""The Chinese edition reads as written in Chinese: its recurring titles and labels are the ones a
Chinese author would write, the same on every page (the rules that can be stated as rules)."""

import re

import pytest

from qkvsite import config

ZH_PAGES = [page for page in config.source_pages() if config.language_of(page) == "zh"]
IDS = [page.name for page in ZH_PAGES]

# literal box titles and templates, calques, and the words that replaced them
RETIRED = {
    "真实代码里的这个错误": "真实项目踩过的坑",
    "这个错误在公开项目里真实出现过": "公开项目里真出现过“…”这个错误",
    "我们怎么知道": "结果怎么核对",
    "接上一段代码，需先运行上一段": "接上一段运行",
    "错误陈列馆": "错误案例集",
    "哪个都不像的混合": "四不像",
    "参照答案很好算": "正确结果很容易得到",
    "（推理）": "（理解）",
    "（编程）": "（动手）",
}
EXERCISE_LABELS = {"Recall": "（回忆）", "Reasoning": "（理解）", "Coding": "（动手）"}


def text(page) -> str:
    return page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", ZH_PAGES, ids=IDS)
def test_no_retired_box_title_template_or_calque(page):
    found = [f"{old} (write {new})" for old, new in RETIRED.items() if old in text(page)]
    assert found == [], page.name


@pytest.mark.parametrize("page", ZH_PAGES, ids=IDS)
def test_every_bug_box_has_the_one_chinese_title(page):
    titles = re.findall(r'^[!?]{3}\+? bug "([^"]*)"', text(page), re.M)
    assert set(titles) <= {"真实项目踩过的坑"}, page.name


@pytest.mark.parametrize("page", ZH_PAGES, ids=IDS)
def test_exercise_labels_are_the_three_of_the_english_edition(page):
    labels = re.findall(r"^\*\*\d+\.\s*(（[^）]*）)", text(page), re.M)
    assert set(labels) <= set(EXERCISE_LABELS.values()), page.name
    english = page.with_name(page.name.replace(".zh.md", ".en.md"))
    theirs = re.findall(r"^\*\*\d+\.\s*\((\w+)\)", english.read_text(encoding="utf-8"), re.M)
    assert labels == [EXERCISE_LABELS[label] for label in theirs], page.name
