#!/usr/bin/env bash
# The release tarball of one architecture, for machines without dpkg:
# ros2-pulse-VERSION/{bin,lib,share} as the packages lay them out under /usr
# (pulse finds its probe in ../lib). Uses the man pages and completions that
# package.sh staged.
# usage: tarball.sh ARCH BUILDDIR OUTDIR
set -euo pipefail
arch=${1:?usage: tarball.sh ARCH BUILDDIR OUTDIR} build=${2:?} out=${3:?}
cd "$(dirname "$0")/.."
version=$(cat VERSION)
stage=$build/deb-stage
[[ -d $stage/man ]] || { echo "tarball: run scripts/package.sh $arch $build first (it stages the man pages)" >&2; exit 1; }
top=ros2-pulse-$version
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
d=$root/$top
# The stripped binaries package.sh staged.
install -D -m 0755 "$stage/bin/pulse" "$d/bin/pulse"
if [[ -x $stage/bin/pulse-bridge ]]; then install -m 0755 "$stage/bin/pulse-bridge" "$d/bin/pulse-bridge"; fi
install -D -m 0644 "$stage/lib/libros2_pulse.so" "$d/lib/libros2_pulse.so"
install -d "$d/share/man/man1" "$d/share/ros2-pulse/systemd" "$d/share/ros2-pulse/prometheus" "$d/share/ros2-pulse/grafana" \
  "$d/share/bash-completion/completions" "$d/share/zsh/vendor-completions" "$d/share/fish/vendor_completions.d"
install -m 0644 "$stage"/man/*.1.gz "$d/share/man/man1/"
install -m 0644 "$stage/completions/pulse.bash" "$d/share/bash-completion/completions/pulse"
install -m 0644 "$stage/completions/_pulse" "$d/share/zsh/vendor-completions/_pulse"
install -m 0644 "$stage/completions/pulse.fish" "$d/share/fish/vendor_completions.d/pulse.fish"
install -m 0644 deploy/systemd/* "$d/share/ros2-pulse/systemd/"
install -m 0644 deploy/spec.example.yaml "$d/share/ros2-pulse/"
install -m 0644 deploy/prometheus/ros2_pulse.rules.yml "$d/share/ros2-pulse/prometheus/"
install -m 0644 deploy/grafana/ros2_pulse.json "$d/share/ros2-pulse/grafana/"
install -m 0644 LICENSE README.md CHANGELOG.md "$d/"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p "$out"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$root" -czf \
  "$out/ros2-pulse-$version-linux-$arch.tar.gz" "$top"
echo "$out/ros2-pulse-$version-linux-$arch.tar.gz"
