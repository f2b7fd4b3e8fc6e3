"""Two `make test` runs' durations side by side (pytest --durations=0 logs, as
bench/tests_side_by_side.sh writes them): the seconds of the tests both runs hold, of those
only one holds, and the files whose common tests moved most.

    python bench/tests_compare.py A/tests_side_by_side.log B/tests_side_by_side.log [--top 15]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

LINE = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+)")


def durations(path: Path) -> dict[str, float]:
    """Seconds per test id (setup, call and teardown together)."""
    out: Counter = Counter()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(3)] += float(m.group(1))
    return dict(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    a, b = durations(args.a), durations(args.b)
    if not a or not b:
        raise SystemExit("a log holds no durations: run pytest with --durations=0")
    common = a.keys() & b.keys()
    print(f"tests: {len(a)} in A, {len(b)} in B, {len(common)} in both")
    print(f"both:   A {sum(a[k] for k in common):8.1f} s   B {sum(b[k] for k in common):8.1f} s")
    print(f"A only: {sum(v for k, v in a.items() if k not in common):8.1f} s")
    print(f"B only: {sum(v for k, v in b.items() if k not in common):8.1f} s")
    by_file: Counter = Counter()
    for k in common:
        by_file[k.split("::")[0]] += b[k] - a[k]
    print("files whose common tests moved most (B - A, s):")
    for name, delta in sorted(by_file.items(), key=lambda kv: -abs(kv[1]))[: args.top]:
        print(f"  {delta:+8.1f}  {name}")


if __name__ == "__main__":
    main()
