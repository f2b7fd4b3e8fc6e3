#!/usr/bin/env bash
# The tests' tiny study (tests/helpers.make_study), cold, in each checkout: one run each, in turn,
# ROUNDS times, with this repository's venv and each checkout's own src/ and tests/helpers.py.
#   bench/tiny_side_by_side.sh ROUNDS CHECKOUT_A CHECKOUT_B ...   (a checkout: `git worktree add`)
# One line per run: checkout, commit, round, exit status, wall s, CPU s (Snakemake and its jobs),
# then the same for a dry run of a fresh copy (Snakemake's start: parse, code walk, DAG).
set -u
python=${PYTHON:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python}
rounds=$1
shift
printf "checkout\tcommit\tround\trun\trc\twall_s\tcpu_s\n"
for i in $(seq 1 "$rounds"); do
    for d in "$@"; do
        d=$(cd "$d" && pwd)
        for run in full dry; do
            root=$(mktemp -d)
            cache=$(mktemp -d)
            PYTHONPATH="$d/src" "$python" -c "import sys; sys.path.insert(0, '$d/tests')
from pathlib import Path
from helpers import make_study
make_study(Path('$root'))"
            flag=""
            [ "$run" = dry ] && flag="-n"
            timing=$(mktemp)
            /usr/bin/time -f "%e %U %S" -o "$timing" env HF_HUB_OFFLINE=1 \
                THEMESIM_EMBED_CACHE="$cache" PYTHONPATH="$d/src" "$python" -m snakemake \
                -s "$d/Snakefile" -d "$root" --cores 2 $flag >"$root/run.log" 2>&1
            rc=$?
            read -r wall usr sys <"$timing"
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%.1f\n" "$d" "$(git -C "$d" rev-parse --short HEAD)" \
                "$i" "$run" "$rc" "$wall" "$(echo "$usr + $sys" | bc)"
            rm -rf "$root" "$cache" "$timing"
        done
    done
done
