"""Chapter 7: decoding, causal masks and the KV cache (docs/decoding.*.md)."""
