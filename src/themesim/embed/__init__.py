"""Models, the content-addressed vector cache, encoding and isotropy correction."""
