"""Chapter 6: positional encoding (docs/positional-encoding.{zh,en}.md)."""
