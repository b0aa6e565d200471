"""Chapter 2: where Q, K and V come from (docs/qkv.{zh,en}.md)."""
