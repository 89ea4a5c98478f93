#!/usr/bin/env bash
# The Debian packages, installed as a user installs them (make test-deb, part
# of make test; needs root and a machine without ros2-pulse installed):
#   amd64: dpkg -i ros2-pulse; the installed pulse finds its installed probe
#          (pulse doctor, given the build tree's stand-in libtracetools as the
#          ROS install, exits 0); pulse demo runs the build tree's simulator
#          (--simgraph); man pulse-run renders; systemd-analyze verify accepts
#          every unit; ros2 pulse's modules and entry points are on
#          python3's path and run the installed pulse; rosdep resolves
#          its key file and finds the package installed (and not, after);
#          dpkg --purge leaves none of the package's files.
#   arm64: the same package for arm64 (multiarch), its pulse doctor run under
#          qemu-user; purged the same way.
# usage: test-deb.sh DIST_DIR NATIVE_BUILD ARM64_BUILD
set -euo pipefail
dist=${1:?usage: test-deb.sh DIST_DIR NATIVE_BUILD ARM64_BUILD} native=${2:?} arm64=${3:?}
version=$(cat VERSION)
fail() { echo "FAIL: $*" >&2; exit 1; }
if [[ $(id -u) -ne 0 ]]; then
  sudo -n true 2>/dev/null && exec sudo -n bash "$0" "$@"
  fail "the install test needs root, or sudo without a password (dpkg -i)"
fi
if dpkg-query -W -f='${Status}' ros2-pulse 2>/dev/null | grep -q 'install ok installed'; then
  fail "ros2-pulse is already installed here; the install test would replace it (dpkg --purge ros2-pulse first)"
fi

# Whatever happens, the machine is left without the package the test installed.
trap 'dpkg --purge ros2-pulse >/dev/null 2>&1 || true' EXIT

# install DEB: dpkg -i it and remember its files (dpkg -L) for the purge check.
install() {
  dpkg -i "$1" >/dev/null
  mapfile -t files < <(dpkg -L ros2-pulse)
}
# purge: dpkg --purge, then none of the files dpkg listed may remain (directories
# other packages share may).
purge() {
  dpkg --purge ros2-pulse >/dev/null
  local left=()
  for f in "${files[@]}"; do
    [[ -e $f && ! -d $f ]] && left+=("$f")
  done
  ((${#left[@]} == 0)) || fail "dpkg --purge left: ${left[*]}"
  [[ ! -e /etc/default/ros2-pulse ]] || fail "dpkg --purge left the conffile /etc/default/ros2-pulse"
  echo "  purged: none of its ${#files[@]} paths left"
}
# doctor PULSE BUILD: the installed probe check passes, with the build tree's
# stand-in libtracetools standing for a ROS install.
doctor() {
  local out
  out=$("$1" doctor --tracetools "$2/lib/sim/jazzy/libtracetools.so" 2>&1) || fail "pulse doctor exited $?:"$'\n'"$out"
  grep -q '/usr/lib/ros2-pulse/libros2_pulse.so' <<<"$out" || fail "pulse doctor does not name the installed probe:"$'\n'"$out"
  echo "  pulse doctor: exit 0, probe /usr/lib/ros2-pulse/libros2_pulse.so"
}

# ros2pulse: the installed ros2cli extension (ros2 pulse) as ros2's python3
# finds it: one ros2pulse.verb entry point per verb the installed pulse has,
# the pulse command, and a verb run through it is the installed pulse's own.
ros2pulse() {
  local got want out direct
  got=$(/usr/bin/python3 -c 'import importlib.metadata as m
print(" ".join(sorted(e.name for e in m.entry_points(group="ros2pulse.verb"))),
      [e.value for e in m.entry_points(group="ros2cli.command") if e.name == "pulse"])')
  want=$(/usr/bin/pulse gen-docs --ros2cli - | /usr/bin/python3 -c 'import json, sys; print(" ".join(sorted(json.load(sys.stdin)["verbs"])))')
  [[ $got == "$want ['ros2pulse.command.pulse:PulseCommand']" ]] || fail "ros2 pulse's entry points: $got; the installed pulse's verbs: $want"
  out=$(cd / && /usr/bin/python3 -c 'import argparse, sys
from ros2pulse import binary
p = argparse.ArgumentParser()
binary.add_arguments(p, "env")
sys.exit(binary.run("env", p.parse_args(["--format", "envfile"])))') || fail "ros2pulse's env exited $?"
  direct=$(/usr/bin/pulse env --format envfile)
  [[ $out == "$direct" ]] || fail "ros2pulse's env printed:"$'\n'"$out"$'\n'"pulse env:"$'\n'"$direct"
  echo "  ros2 pulse: $(wc -w <<<"$want") verbs as entry points in /usr/lib/python3/dist-packages; env runs /usr/bin/pulse"
}

# rosdep KEYFILE CODE: a robot package whose package.xml depends on the key
# ros2-pulse, checked by rosdep (Debian's python3-rosdep2) against the key
# file through a private source list; CODE is rosdep check's exit status:
# 0 while the package is installed, 1 when it is not. Offline: the rosdistro
# index is an empty one of the test's own.
rosdep_check() {
  local tmp out rc=0
  tmp=$(mktemp -d)
  mkdir -p "$tmp/sources.list.d" "$tmp/ws/robot_bringup"
  printf '%%YAML 1.1\n---\ndistributions: {}\ntype: index\nversion: 4\n' >"$tmp/index-v4.yaml"
  echo "yaml file://$1" >"$tmp/sources.list.d/50-ros2-pulse.list"
  cat >"$tmp/ws/robot_bringup/package.xml" <<'XML'
<?xml version="1.0"?>
<package format="3">
  <name>robot_bringup</name>
  <version>1.0.0</version>
  <description>a robot's bringup, which runs under ros2_pulse</description>
  <maintainer email="robot@example.org">robot</maintainer>
  <license>Apache-2.0</license>
  <exec_depend>ros2-pulse</exec_depend>
</package>
XML
  export ROSDISTRO_INDEX_URL=file://$tmp/index-v4.yaml ROSDEP_SOURCE_PATH=$tmp/sources.list.d ROS_HOME=$tmp/home
  rosdep update >"$tmp/update.log" 2>&1 || fail "rosdep update with $1:"$'\n'"$(cat "$tmp/update.log")"
  out=$(rosdep resolve ros2-pulse --os=ubuntu:noble 2>&1) || fail "rosdep resolve ros2-pulse: $out"
  [[ $out == $'#apt\nros2-pulse' ]] || fail "rosdep resolve ros2-pulse on ubuntu: $out"
  out=$(rosdep check --from-paths "$tmp/ws" --os=debian:bookworm 2>&1) || rc=$?
  [[ $rc == "$2" ]] || fail "rosdep check exited $rc, want $2:"$'\n'"$out"
  [[ $rc == 0 ]] || grep -q 'apt.*ros2-pulse' <<<"$out" || fail "rosdep check does not name the ros2-pulse package:"$'\n'"$out"
  unset ROSDISTRO_INDEX_URL ROSDEP_SOURCE_PATH ROS_HOME
  rm -rf "$tmp"
  echo "  rosdep: key ros2-pulse resolves to the apt package; rosdep check exits $rc"
}

bash scripts/need-packages.sh python3-rosdep2 >/dev/null
deb=$dist/ros2-pulse_${version}_amd64.deb
echo "install test: $deb"
install "$deb"
[[ $(command -v pulse) == /usr/bin/pulse ]] || fail "pulse is not /usr/bin/pulse"
doctor /usr/bin/pulse "$native"
out=$(ROS_PULSE_DIR=$(mktemp -d) /usr/bin/pulse demo --duration 5s --simgraph "$native/bin/simgraph" 2>&1) ||
  fail "pulse demo exited $?:"$'\n'"$out"
grep -Eq '^/odom +4[0-9]\.[0-9]+' <<<"$out" || fail "pulse demo's summary has no /odom at about 50 Hz:"$'\n'"$out"
echo "  pulse demo --simgraph $native/bin/simgraph: /odom $(grep -Eo '^/odom +[0-9.]+' <<<"$out" | awk '{print $2}') Hz"
page=$(MANWIDTH=80 man -P cat pulse-run 2>/dev/null) || fail "man pulse-run does not render"
grep -q 'pulse-run' <<<"$page" && grep -q -- '--spec' <<<"$page" || fail "man pulse-run:"$'\n'"$page"
echo "  man pulse-run: $(wc -l <<<"$page") lines"
units=$(mktemp -d)
for unit in /lib/systemd/system/ros2-pulse-*@.service; do
  # a template is verified through an instance of it
  inst=$(basename "${unit/@.service/@root.service}")
  cp "$unit" "$units/$inst"
  systemd-analyze verify "$units/$inst" 2>"$units/err" || fail "systemd-analyze verify $inst: $(cat "$units/err")"
  [[ ! -s $units/err ]] || fail "systemd-analyze verify $inst warns: $(cat "$units/err")"
done
rm -rf "$units"
echo "  systemd-analyze verify: $(ls /lib/systemd/system/ros2-pulse-*@.service | wc -l) units accepted"
ros2pulse
rosdep_check /usr/share/ros2-pulse/rosdep/ros2-pulse.yaml 0
purge
rosdep_check "$PWD/deploy/rosdep/ros2-pulse.yaml" 1
[[ ! -e /usr/lib/python3/dist-packages/ros2pulse ]] || fail "dpkg --purge left /usr/lib/python3/dist-packages/ros2pulse: $(find /usr/lib/python3/dist-packages/ros2pulse)"

deb=$dist/ros2-pulse_${version}_arm64.deb
echo "install test: $deb (under qemu-user)"
install "$deb"
file -L /usr/bin/pulse | grep -q aarch64 || fail "/usr/bin/pulse is not the arm64 binary"
doctor /usr/bin/pulse "$arm64"
purge

# The release tarball: unpacked anywhere, its pulse finds the probe in ../lib.
echo "tarball test: amd64"
tmp=$(mktemp -d)
tarball=$(bash scripts/tarball.sh amd64 "$native" "$tmp")
tar -xzf "$tarball" -C "$tmp"
out=$("$tmp/ros2-pulse-$version/bin/pulse" doctor --tracetools "$native/lib/sim/jazzy/libtracetools.so" 2>&1) ||
  fail "the tarball's pulse doctor exited $?:"$'\n'"$out"
grep -q "$tmp/ros2-pulse-$version/lib/libros2_pulse.so" <<<"$out" || fail "the tarball's pulse does not use its own probe:"$'\n'"$out"
rm -rf "$tmp"
echo "  pulse doctor: exit 0, probe ros2-pulse-$version/lib/libros2_pulse.so"
echo "1 passed, 0 failed"
