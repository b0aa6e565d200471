"""Chapter 1: from dot products to a weighted sum (docs/dot-product.*.md)."""
