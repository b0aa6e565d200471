"""Where the build relies on other packages beyond their documented interfaces
(qkvsite.upstream), a change upstream fails with the package and the versions, not a symptom."""

import json
import re
from types import SimpleNamespace

import pytest

from qkvsite import upstream
from qkvsite.config import ROOT
from qkvsite.upstream import UpstreamChanged


def changed(package: str) -> str:
    """The start of the message a broken contract with ``package`` fails with."""
    return (
        re.escape(f"{package} ")
        + r"\S+ \(the build was written against "
        + re.escape(upstream.WRITTEN_AGAINST[package])
    )


def test_each_contract_names_the_version_pinned_in_requirements():
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    )
    pins = {name.lower(): version.strip() for name, version in pins.items()}
    # a pin moved: read each place of qkvsite.upstream's list again, then move its version here
    assert {name: pins[name] for name in upstream.WRITTEN_AGAINST} == upstream.WRITTEN_AGAINST


def test_an_i18n_plugin_without_the_pass_language_fails_naming_mkdocs_static_i18n():
    from qkvsite.hooks import building, whole_build_ends

    config = SimpleNamespace(plugins={"i18n": object()})
    with pytest.raises(UpstreamChanged, match=changed("mkdocs-static-i18n") + ".*current_language"):
        building(config)
    with pytest.raises(UpstreamChanged, match=changed("mkdocs-static-i18n") + ".*building"):
        whole_build_ends(config)


def test_a_notebook_plugin_without_should_include_fails_naming_mkdocs_jupyter():
    from qkvsite.hooks.notebooks import notebook_pages_are_pages

    files = SimpleNamespace(documentation_pages=lambda: [], __iter__=lambda: iter([]))
    config = SimpleNamespace(plugins={"mkdocs-jupyter": object()})
    with pytest.raises(UpstreamChanged, match=changed("mkdocs-jupyter") + ".*should_include"):
        notebook_pages_are_pages(files, config)


def test_a_search_index_of_another_format_fails_naming_mkdocs_material(tmp_path):
    from qkvsite.hooks.search import one_index_per_language

    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "search_index.json").write_text(json.dumps({"config": {}, "items": []}))
    with pytest.raises(UpstreamChanged, match=changed("mkdocs-material") + ".*search index"):
        one_index_per_language(SimpleNamespace(site_dir=str(tmp_path)))


def test_a_page_without_materials_config_script_fails_naming_mkdocs_material():
    from qkvsite.hooks.material_fixes import set_search_base

    with pytest.raises(UpstreamChanged, match=changed("mkdocs-material") + ".*__config"):
        set_search_base("<html><head></head><body></body></html>", "en")


def test_the_installed_packages_hold_every_contract_checked_without_a_build():
    import inspect

    from mkdocs_jupyter.plugin import NotebookFile, Plugin

    assert list(inspect.signature(NotebookFile).parameters)[:3] == [
        "file",
        "use_directory_urls",
        "site_dir",
    ]
    assert hasattr(Plugin, "should_include")
