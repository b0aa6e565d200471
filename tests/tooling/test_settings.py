"""The site's settings have one source: MkDocs' config of mkdocs.yml (``qkvsite.config``)."""

from pathlib import Path

from mkdocs.config import load_config

from qkvsite import config


def test_outside_a_build_the_settings_are_mkdocs_own_config_of_mkdocs_yml():
    loaded = load_config(str(config.MKDOCS_YML))
    assert config.settings()["nav"] == loaded["nav"]
    assert config.DOCS == Path(loaded["docs_dir"])
    assert config.site_name("zh") == loaded["site_name"]
    assert config.snippet_settings()["base_path"] == [str(config.ROOT)]


def test_in_a_build_every_setting_comes_from_the_builds_config(tmp_path):
    built = load_config(str(config.MKDOCS_YML))
    built["docs_dir"] = str(tmp_path)  # docs_dir honoured
    built["nav"] = [{"Chapters": ["one.md", "two.md"]}, "glossary.md"]
    (tmp_path / "one.zh.md").write_text("# 1. One\n", encoding="utf-8")
    config.use(built)
    try:
        assert config.DOCS == tmp_path
        assert config.source_pages() == [tmp_path / "one.zh.md"]
        assert config.chapters() == ["one", "two"]
    finally:
        config.use(None)
    assert config.DOCS != tmp_path
