# Page blocks (docs/<page>.<lang>.md) are collected by this plugin; see its docstring.
pytest_plugins = ["qkvsite.pytest_plugin"]
