"""The archive bundle of a study and its verification."""
