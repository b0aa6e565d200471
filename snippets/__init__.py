"""Runnable examples shown on the site.

Each module is a small, complete script. Pages include parts of it through
named sections (``# --8<-- [start:name]`` ... ``# --8<-- [end:name]``).
"""
