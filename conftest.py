# Page blocks (docs/<page>.<lang>.md) are collected by this plugin; see its docstring.
pytest_plugins = ["qkvsite.pytest_plugin"]


def pytest_addoption(parser):
    parser.addoption(
        "--chapter",
        metavar="SLUG",
        help="a chapter author's loop (CONTRIBUTING.md): of the checks that run an example (marked "
        "`example`), keep those whose example uses snippets/<chapter>/ (tests/conftest.py)",
    )
