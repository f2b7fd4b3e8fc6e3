"""The automatic coder of grounding: labels transcript segments with a set's themes."""
