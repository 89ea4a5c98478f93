#!/usr/bin/env bash
# The probe exports exactly the symbols listed in probe/exports.map: nothing
# leaks into every process it is preloaded into, and nothing is missing.
set -euo pipefail
lib=${1:?usage: test_exports.sh libros2_pulse.so}
here=$(cd "$(dirname "$0")/.." && pwd)
want=$(grep -oE '^\s*[A-Za-z_][A-Za-z0-9_]*;' "$here/exports.map" | tr -d ' ;' | sort)
got=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [[ "$want" != "$got" ]]; then
  echo "FAIL: exported symbols differ from exports.map"
  diff <(echo "$want") <(echo "$got") || true
  exit 1
fi
# Only libc (and the loader) are needed: no C++ runtime, no libtracetools.
needed=$(readelf -d "$lib" | awk '/NEEDED/ {print $5}' | tr -d '[]' | sort | tr '\n' ' ')
for n in $needed; do
  case $n in libc.so.*|ld-linux*|libdl.so.*|libpthread.so.*) ;; *) echo "FAIL: unexpected dependency $n"; exit 1;; esac
done
echo "exports: $(echo "$got" | wc -l) symbols match exports.map; dependencies: $needed"
echo "1 passed, 0 failed"
