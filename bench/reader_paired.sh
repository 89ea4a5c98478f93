#!/bin/bash
# Two pulse binaries sample one synthetic directory alternately, the order
# swapped every trial (the paired protocol of reference/upstream-ros2_pulse.md
# §3): each sample is one recorder step, CPU per sample and peak RSS from a
# child process per run (`pulse bench reader-sample`).
#
#   bench/reader_paired.sh BEFORE AFTER [TRIALS] [PROCS] [ENDPOINTS] > out.txt
#
# Output: "trial binary cpu_ms=mean,sem maxrss_kib=N anon_kib=N" per run,
# then the paired difference's mean and SEM.
set -euo pipefail
before=$1 after=$2 trials=${3:-16} procs=${4:-100} eps=${5:-50}
dir=$(mktemp -d /dev/shm/pulse-reader-paired-XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$after" bench reader-dir --procs "$procs" --endpoints "$eps" "$dir"
for ((t = 1; t <= trials; t++)); do
    order="before after"
    ((t % 2)) && order="after before"
    for b in $order; do
        bin=$before
        [[ $b == after ]] && bin=$after
        echo "$t $b $("$bin" bench reader-sample --dir "$dir" --samples 40)"
    done
done | tee /dev/stderr | awk '
    { split($3, c, "[=,]"); cpu[$1 " " $2] = c[2]; split($4, r, "="); rss[$2] += r[2]; n[$2]++ }
    END {
        for (k in cpu) { split(k, f, " "); if (f[2] == "after") { d = cpu[k] - cpu[f[1] " before"]; s += d; ss += d * d; m++ } }
        mean = s / m; sem = sqrt((ss / m - mean * mean) / (m - 1))
        printf "paired difference (after - before): %+.4f ± %.4f ms per sample over %d trials; peak RSS before %.1f MiB, after %.1f MiB\n", mean, sem, m, rss["before"] / n["before"] / 1024, rss["after"] / n["after"] / 1024
    }'
