#!/usr/bin/env bash
# make test's pytest command in each checkout, one after the other, with this repository's venv.
#   bench/tests_side_by_side.sh CHECKOUT_A CHECKOUT_B ...   (a checkout: `git worktree add`)
# Each checkout's tests import its own src/ (PYTHONPATH, inherited by Snakemake's jobs). One line
# per checkout on stdout: checkout, commit, exit status, wall s, CPU s (user + system of pytest,
# its workers and their children), 1-min load average at the end, pytest's summary line; each
# test's duration is in CHECKOUT/tests_side_by_side.log (--durations=0).
set -u
python=${PYTHON:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python}
printf "checkout\tcommit\trc\twall_s\tcpu_s\tload\tsummary\n"
for d in "$@"; do
    d=$(cd "$d" && pwd)
    log="$d/tests_side_by_side.log"
    timing=$(mktemp)
    (cd "$d" && /usr/bin/time -f "%e %U %S" -o "$timing" env HF_HUB_OFFLINE=1 PYTHONPATH="$d/src" \
        "$python" -m pytest -m "not slow" -n 2 --dist loadfile --timeout 900 -q \
        -p no:cacheprovider --durations=0 >"$log" 2>&1)
    rc=$?
    read -r wall usr sys <"$timing"
    printf "%s\t%s\t%s\t%s\t%.1f\t%s\t%s\n" "$d" "$(git -C "$d" rev-parse --short HEAD)" "$rc" \
        "$wall" "$(echo "$usr + $sys" | bc)" "$(cut -d' ' -f1 /proc/loadavg)" \
        "$(grep -E '(passed|failed)' "$log" | tail -1)"
    rm -f "$timing"
done
