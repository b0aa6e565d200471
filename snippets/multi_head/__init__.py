"""Chapter 4: multi-head attention (docs/multi-head.md)."""
