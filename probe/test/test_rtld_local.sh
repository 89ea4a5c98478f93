#!/usr/bin/env bash
# Forwarding from an RTLD_LOCAL host (how python3 loads rclpy): dlsym(RTLD_NEXT)
# cannot see libtracetools or librcl there, so the probe must fall back to
# dlopen(RTLD_NOLOAD). Every publish is counted once and forwarded once, and
# every loaned publish through Humble's librcl (no tracepoint inside) too.
set -euo pipefail
build=${1:?usage: test_rtld_local.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
here=$(cd "$(dirname "$0")" && pwd)
$cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -o "$work/plugin.so" "$here/rtld_local_plugin.c" \
  -L"$build/lib/sim/humble" -Wl,--no-as-needed -ltracetools -lrcl -lrosidl_runtime_c -Wl,-rpath,"$build/lib/sim/humble"
$cc -std=c11 -Wall -Wextra -Werror -o "$work/host" "$here/rtld_local_host.c" -ldl
ROS_PULSE_DIR="$work" ROS_TOPIC_STATS_QUIET=1 SIM_TRACETOOLS_REPORT="$work/calls.txt" \
  LD_PRELOAD="$build/lib/libros2_pulse.so" "$work/host" "$work/plugin.so"
# forwarded FUNCTION: how many calls the stand-in libraries saw.
forwarded() { awk -v f="$1" '$1 == f {print $2}' "$work/calls.txt"; }
# counted TOPIC: what the probe counted for the publisher of TOPIC (node TOPIC).
counted() {
  "$build/bin/pulse" dump --dir "$work" | grep -o "\"name\":\"$1\",\"node\":\"$1\",\"aux\":10,\"counts\":\[[0-9]*" |
    grep -o '[0-9]*$' || true
}
expect() { # WHAT GOT WANT
  if [[ "$2" != "$3" ]]; then echo "FAIL: $1: '$2', want $3"; exit 1; fi
}
expect "real rcl_publish calls" "$(forwarded rcl_publish)" 1000
expect "publishes the probe counted" "$(counted /rtld_local)" 1000
expect "messages the real rcl_publish_loaned_message published" "$(forwarded rcl_publish_loaned_message_ok)" 500
expect "loaned publishes the probe counted" "$(counted /rtld_loaned)" 500
echo "rtld_local: 1000 publishes and 500 loaned ones counted once and forwarded through the RTLD_NOLOAD fallback"
echo "1 passed, 0 failed"
