"""Chapter 1: from the dot product to a weighted sum (docs/dot-product.md)."""
