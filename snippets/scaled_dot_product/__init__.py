"""Chapter 3: scaled dot-product attention (docs/scaled-dot-product.*.md)."""
