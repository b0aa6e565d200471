"""Chapter 8: decoding, causal masks and the KV cache (docs/decoding.*.md)."""
