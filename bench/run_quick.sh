#!/usr/bin/env bash
# Quick figures: hot path (CPU ns per message, probe vs none, paired and
# alternated inside the binary) and the stress graph's CPU with and without
# the probe (paired, order alternated each trial, mean ± SEM of differences).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=$root/build
N=${N:-6}
DUR=${DUR:-10}
seg=$(mktemp -d /dev/shm/ros2_pulse-bench-XXXXXX)
trap 'rm -rf "$seg"' EXIT
export ROS_PULSE_DIR=$seg ROS_TOPIC_STATS_QUIET=1

echo "== hot path ($(date -u +%F), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-))"
ROS_PULSE_MAX_ENDPOINTS=20000 "$b/bin/hotpath" --legs none,probe --threads 1,2 --endpoints 1,4,64 --msgs 20000000 --reps 6 |
  awk -F, 'NR > 1 { k = $2 " " $3; s[$1 " " k] += $5; n[$1 " " k]++; keys[k] = 1 }
    END { for (k in keys) printf "threads/endpoints %s: none %.2f ns/msg probe %.2f ns/msg added %.2f\n", k,
      s["none " k] / n["none " k], s["probe " k] / n["probe " k], s["probe " k] / n["probe " k] - s["none " k] / n["none " k] }' | sort

# CPU seconds (user+sys) of the whole graph: simgraph waits for its children,
# so its rusage of children covers every process.
cpu() { # arm
  local pre=(env)
  [[ $1 == probe ]] && pre=(env "LD_PRELOAD=$b/lib/libros2_pulse.so")
  [[ $1 == null ]] && pre=(env "LD_PRELOAD=$b/lib/libros2_pulse_null.so")
  "${pre[@]}" env LD_LIBRARY_PATH="$b/lib/sim/jazzy" \
    "$b/bin/simgraph" --graph stress --duration "$DUR" --rusage 2>&1 >/dev/null | sed -n 's/^RESULT cpu_s=//p'

  rm -f "$seg"/*.pulse
}
echo "== stress graph, ${DUR}s per run, N=$N paired trials, arm order alternated"
diffs=()
for ((i = 0; i < N; i++)); do
  if ((i % 2 == 0)); then a=$(cpu none); p=$(cpu probe); else p=$(cpu probe); a=$(cpu none); fi
  diffs+=("$a $p")
  echo "trial $i: none ${a}s probe ${p}s"
done
printf '%s\n' "${diffs[@]}" | awk -v dur="$DUR" '
  { n++; d[n] = $2 - $1; sa += $1; sp += $2 }
  END {
    m = 0; for (i = 1; i <= n; i++) m += d[i]; m /= n
    v = 0; for (i = 1; i <= n; i++) v += (d[i] - m) ^ 2; v /= (n - 1); sem = sqrt(v / n)
    msgs = 4900 * dur * 2  # publishes plus deliveries
    printf "mean none %.3fs probe %.3fs  paired diff %+.4fs ± %.4f (SEM)  = %+.2f%% ± %.2f%%  = %+.0f ± %.0f ns per message event\n",
      sa / n, sp / n, m, sem, 100 * m / (sa / n), 100 * sem / (sa / n), 1e9 * m / msgs, 1e9 * sem / msgs
  }'
