#!/usr/bin/env bash
# Callback names on a Humble tracetools built without LTTng (issue 44): its
# symbol helpers answer "DISABLED__…" placeholders; under the probe a host
# that names callbacks as rclcpp does gets the names the LTTng build gives.
# A real C++ host (g++, libstdc++'s demangler), the Humble stand-in's helpers.
set -euo pipefail
build=${1:?usage: test_symbols.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tt=$build/lib/sim/humble
host=$build/bin/symbols_host
${CXX:-g++} -std=c++17 -Wall -Wextra -Werror -O1 -rdynamic -o "$host" "$here/symbols_host.cpp" \
  -L"$tt" -ltracetools -Wl,-rpath,"$tt" -ldl
fail=0
# Without the probe: the placeholders, as the real Humble helpers answer them.
while IFS=$'\t' read -r what got _; do
  [[ $got == DISABLED__* ]] || { echo "FAIL: without the probe, $what is named '$got', not a placeholder"; fail=1; }
done < <("$host")
# Under the probe: every name equals the LTTng build's.
n=0
while IFS=$'\t' read -r what got want; do
  n=$((n + 1))
  if [[ $got != "$want" || $got == DISABLED__* || $got == UNKNOWN* ]]; then
    echo "FAIL: under the probe, $what is named '$got', want '$want'"; fail=1
  else
    echo "ok   $what: $got"
  fi
done < <(LD_PRELOAD=$build/lib/libros2_pulse.so "$host")
[[ $n == 3 ]] || { echo "FAIL: $n names, want 3"; fail=1; }
[[ $fail == 0 ]] || exit 1
echo "1 passed, 0 failed"
