"""Page rules: the skeleton of a chapter, notation, prose, formulas, the two editions in step."""
