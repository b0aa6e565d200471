# Page blocks (docs/**/*.md) are collected by this plugin; see its docstring.
pytest_plugins = ["tests.page_blocks"]
