"""`themesim verify`: every checksum of a results archive rechecked."""

from __future__ import annotations

import sys

from themesim.archive.verify import format_verification, verify


def cmd_verify(args) -> int:
    result = verify(args.archive)
    sys.stdout.write(format_verification(args.archive, result, verbose=args.verbose))
    return 0 if result.ok else 1
