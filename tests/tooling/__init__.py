"""The build layer: caches, processes, layers, the page-block runner, the author's loop."""
