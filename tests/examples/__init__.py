"""Chapter unit tests: each chapter's snippets/ checked against PyTorch's own functions."""
