"""Chapter 5: shape cheat sheet and common shape bugs (docs/shapes.*.md)."""
