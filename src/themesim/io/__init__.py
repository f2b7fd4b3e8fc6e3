"""Reading the study's inputs (theme files, transcripts) and writing files atomically."""
