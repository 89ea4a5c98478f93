#!/usr/bin/env bash
# What one active series costs a Prometheus server (the central one of a
# fleet), measured rather than guessed: the stress graph runs under the probe
# with gap tracking on, N pulse exports serve its segments (N robots' worth
# of series, told apart by instance), one Prometheus scrapes them all every
# 2 s. After 60 s its head series and Go heap are read, and the same for a
# Prometheus that scrapes nothing; the difference over the series is the
# bytes per series. Used for docs/PERFORMANCE.md §7 (the stress graph, N=20)
# and §19 (the robot, N=1: what one robot costs its Prometheus).
# usage: [GRAPH=robot] [JITTER=0] prometheus-ram.sh [N]   (from the repository, after make build)
set -euo pipefail
n=${1:-20}
cd "$(dirname "$0")/.."
b=${PULSE_BUILD:-$PWD/build}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/segs"
LD_PRELOAD=$b/lib/libros2_pulse.so LD_LIBRARY_PATH=$b/lib/sim/jazzy ROS_PULSE_DIR=$work/segs ROS_TOPIC_STATS_QUIET=1 \
  ROS_TOPIC_STATS_JITTER=${JITTER:-1} "$b/bin/simgraph" --graph "${GRAPH:-stress}" --duration 600 >/dev/null 2>&1 &
pids+=($!)
targets=""
for i in $(seq 1 "$n"); do
  port=$((19500 + i))
  ROS_PULSE_DIR=$work/segs "$b/bin/pulse" export --listen "127.0.0.1:$port" --period 1s >/dev/null 2>&1 &
  pids+=($!)
  targets+="\"127.0.0.1:$port\","
done
measure() { # NAME TARGETS: head series and heap in use after 60 s of scrapes
  local port=$2
  printf 'global: {scrape_interval: 2s}\nscrape_configs:\n  - job_name: r\n    static_configs: [{targets: [%s]}]\n' "$3" > "$work/$1.yml"
  prometheus --config.file="$work/$1.yml" --storage.tsdb.path="$work/$1-data" --web.listen-address="127.0.0.1:$port" \
    --log.level=error >/dev/null 2>&1 &
  local p=$!
  pids+=($p)
  sleep 60
  curl_metric() { python3 -c "import urllib.request,sys
for l in urllib.request.urlopen('http://127.0.0.1:$port/metrics').read().decode().splitlines():
    if l.startswith('$1 '): print(l.split()[1])"; }
  echo "$(curl_metric prometheus_tsdb_head_series) $(curl_metric go_memstats_heap_inuse_bytes) $(curl_metric process_resident_memory_bytes)"
  kill "$p"
}
read -r s0 h0 r0 < <(measure idle 19490 "")
read -r s1 h1 r1 < <(measure fleet 19491 "${targets%,}")
python3 - "$n" "$s0" "$h0" "$r0" "$s1" "$h1" "$r1" <<'PY'
import sys
n, s0, h0, r0, s1, h1, r1 = int(sys.argv[1]), *map(float, sys.argv[2:])
ds = s1 - s0
print(f"{n} exporters: {s1:.0f} head series (idle {s0:.0f}); Go heap in use {h1/2**20:.1f} MiB (idle {h0/2**20:.1f}), RSS {r1/2**20:.1f} MiB (idle {r0/2**20:.1f})")
print(f"per series: heap {(h1-h0)/ds:.0f} bytes, RSS {(r1-r0)/ds:.0f} bytes")
PY
