#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing:
# as root directly, otherwise through sudo when it needs no password;
# otherwise it stops and prints the one apt-get line to run.
# `make demo` and `make test` call it with what their lanes need.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
((${#missing[@]})) || exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "missing Debian packages: ${missing[*]}" >&2
  echo "run this once, then make again:  sudo $line" >&2
  exit 1
fi
echo "installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Another make (a second clone) may be installing too: wait for its lock.
wait_lock=(-o DPkg::Lock::Timeout=600)
"${sudo[@]}" apt-get "${wait_lock[@]}" update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive $line "${wait_lock[@]}" -qq
