"""The built site: pages, notebooks, publishing, search, verification, every page in the browser."""
