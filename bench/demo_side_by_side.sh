#!/usr/bin/env bash
# The demo study cold, side by side: checkouts run alternately, ROUNDS times each.
#   bench/demo_side_by_side.sh ROUNDS CHECKOUT_A CHECKOUT_B ...   (a checkout: `git worktree add`)
# Each run removes the checkout's results/, logs/, .snakemake/ and benchmarks/ and uses a fresh
# embedding cache, then runs `snakemake --cores 2` with that checkout's code. One line per run
# on stdout: time, checkout, commit, round, exit status, wall s, CPU s (user + system of
# Snakemake and its jobs), peak RSS MB of the largest process, 1-min load average at the end.
set -u
python=${PYTHON:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python}
rounds=$1
shift
printf "time\tcheckout\tcommit\tround\trc\twall_s\tcpu_s\tmax_rss_mb\tload\n"
for i in $(seq 1 "$rounds"); do
    for d in "$@"; do
        d=$(cd "$d" && pwd)
        cache=$(mktemp -d)
        rm -rf "$d/results" "$d/logs" "$d/.snakemake" "$d/benchmarks"
        timing=$(mktemp)
        (cd "$d" && /usr/bin/time -f "%e %U %S %M" -o "$timing" env HF_HUB_OFFLINE=1 \
            THEMESIM_EMBED_CACHE="$cache" PYTHONPATH="$d/src" "$python" -m snakemake --cores 2 \
            >"$d/side_by_side-$i.log" 2>&1)
        rc=$?
        read -r wall usr sys rss <"$timing"
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%d\t%s\n" "$(date -u +%FT%T)" "$d" \
            "$(git -C "$d" rev-parse --short HEAD)" "$i" "$rc" "$wall" \
            "$(echo "$usr + $sys" | bc)" "$((rss / 1024))" "$(cut -d' ' -f1 /proc/loadavg)"
        rm -rf "$cache" "$timing"
    done
done
