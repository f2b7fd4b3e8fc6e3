"""The archive of a study: `build` writes the zip, `verify` rechecks its checksums."""
