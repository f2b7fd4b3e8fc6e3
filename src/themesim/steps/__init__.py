"""One function per workflow rule, called by scripts/; the only code that knows paths."""
