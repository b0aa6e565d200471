"""Chapter 4: multi-head attention (docs/multi-head.{zh,en}.md)."""
