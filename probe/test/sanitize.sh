#!/usr/bin/env bash
# Sanitizer lanes over the probe and the simulator.
#   asan: probe + simgraph + stand-in built with ASan and UBSan (no recovery);
#         every scenario graph, then the exit storm 200 times.
#   tsan: probe + simgraph built with TSan; the multi-threaded graphs.
# Any sanitizer report makes the host exit non-zero, which fails the lane.
set -euo pipefail
lane=${1:?usage: sanitize.sh asan|tsan}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/san/$lane
mkdir -p "$out/lib" "$out/bin"
cc=${CC:-gcc}
case $lane in
  asan) san="-fsanitize=address,undefined -fno-sanitize-recover=all"; rt=$($cc -print-file-name=libasan.so);;
  tsan) san="-fsanitize=thread"; rt=$($cc -print-file-name=libtsan.so);;
  *) echo "unknown lane $lane"; exit 2;;
esac
flags="-std=c11 -Wall -Wextra -Werror -O1 -g -fno-omit-frame-pointer $san -Iprobe/include"
cd "$root"
$cc $flags -fPIC -shared -fvisibility=hidden -Wl,--version-script=probe/exports.map \
  -o "$out/lib/libros2_pulse.so" probe/src/core.c probe/src/table.c probe/src/config.c probe/src/init.c probe/src/topics.c probe/src/clock.c probe/src/callbacks.c probe/src/qos.c probe/src/services.c probe/src/links.c probe/src/bytes.c probe/src/symbols.c probe/src/segment_writer.c -ldl -lpthread
$cc $flags -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -Wl,-soname,libtracetools.so -DSIM_DISTRO=2 \
  -o "$out/lib/libtracetools.so" sim/tracetools/tracetools.c
# the stand-in rosidl (design note 0033) into DIR for distro number N: bytes runs size
# sim_msgs through its introspection type supports
rosidl_standin() { # DIR N
  $cc $flags -fPIC -shared -fvisibility=hidden -Wl,-soname,librosidl_runtime_c.so -DSIM_DISTRO="$2" \
    -o "$1/librosidl_runtime_c.so" sim/rosidl/runtime_c.c
  for lang in c cpp; do
    $cc $flags -fPIC -shared -fvisibility=hidden -DSIM_DISTRO="$2" -DSIM_LANG=$lang -Isim/rosidl \
      -o "$1/libsim_msgs__rosidl_typesupport_introspection_$lang.so" sim/rosidl/introspection.c
  done
}
rosidl_standin "$out/lib" 2
$cc $flags -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -Wl,-soname,librcl.so -DSIM_DISTRO=2 \
  -Isim/rcl -o "$out/lib/librcl.so" sim/rcl/rcl.c -L"$out/lib" -ltracetools -lrosidl_runtime_c
$cc $flags -Wno-unused-parameter -Isim/simgraph -Isim/rcl -Isim/rosidl -o "$out/bin/simgraph" sim/simgraph/*.c \
  build/obj/graphs.c -L"$out/lib" -Wl,--no-as-needed -lrcl -ltracetools -lrosidl_runtime_c -Wl,--as-needed -Wl,-rpath,"$out/lib" -ldl -lpthread

segdir=$(mktemp -d) truthdir=$(mktemp -d)
trap 'rm -rf "$segdir" "$truthdir"' EXIT
# the graph keeps its own counts, as in the tests (sim/simgraph/truth.h)
export ROS_PULSE_DIR=$segdir ROS_TOPIC_STATS_QUIET=1 SIMGRAPH_TRUTH=$truthdir
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0
run() { # graph duration
  LD_PRELOAD="$rt:$out/lib/libros2_pulse.so" "$out/bin/simgraph" --graph "$1" --duration "$2" --start-delay 0.05
}
graphs=(demo stress chain internal/integration/testdata/selfloop.graph internal/integration/testdata/reuse.graph
        internal/integration/testdata/fork.graph internal/integration/testdata/latency.graph internal/integration/testdata/rclpy_sub.graph
        internal/integration/testdata/wide.graph internal/integration/testdata/loaned.graph
        internal/integration/testdata/loss.graph internal/integration/testdata/timing.graph
        internal/integration/testdata/silent.graph internal/integration/testdata/calls.graph)
for g in "${graphs[@]}"; do
  run "$g" 2 || { echo "FAIL: $lane on $g"; exit 1; }
  # and with gap and latency tracking, latency links and bytes, whose hot paths add atomics shared between threads (timing is on in both)
  ROS_TOPIC_STATS_JITTER=1 ROS_TOPIC_STATS_LATENCY=1 ROS_PULSE_LINKS=1 ROS_PULSE_BYTES=1 ROS_PULSE_BYTES_EVERY=2 \
    LD_LIBRARY_PATH=$out/lib run "$g" 1 || { echo "FAIL: $lane on $g with gap and latency tracking, links and bytes"; exit 1; }
done
# The Humble stand-in (LD_LIBRARY_PATH wins over the runpath): rclcpp's callback
# names through tracetools' symbol helpers, which answer placeholders without
# LTTng and which the probe answers itself (symbols.c).
mkdir -p "$out/lib/humble"
$cc $flags -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -Wl,-soname,libtracetools.so -DSIM_DISTRO=1 \
  -o "$out/lib/humble/libtracetools.so" sim/tracetools/tracetools.c
rosidl_standin "$out/lib/humble" 1
$cc $flags -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -Wl,-soname,librcl.so -DSIM_DISTRO=1 \
  -Isim/rcl -o "$out/lib/humble/librcl.so" sim/rcl/rcl.c -L"$out/lib/humble" -ltracetools -lrosidl_runtime_c
for g in demo chain internal/integration/testdata/timing.graph; do
  ROS_PULSE_LINKS=1 ROS_PULSE_BYTES=1 LD_LIBRARY_PATH=$out/lib/humble run "$g" 2 || { echo "FAIL: $lane on $g with the Humble stand-in"; exit 1; }
done
storms=200
[[ $lane == tsan ]] && storms=50
for ((i = 0; i < storms; i++)); do
  run internal/integration/testdata/storm.graph 0.02 || { echo "FAIL: $lane exit storm run $i"; exit 1; }
done
rm -f "$segdir"/*.pulse
echo "sanitize $lane: ${#graphs[@]} graphs (gap and latency tracking, links and bytes off and on), three on the Humble stand-in and $storms exit storms clean"
echo "$(( ${#graphs[@]} + 3 )) passed, 0 failed"
