#!/usr/bin/env bash
# Builds the Debian packages of one architecture with nfpm (pinned in go.mod
# as a tool): ros2-pulse, and ros2-pulse-bridge where the tree has
# pulse-bridge. Every file goes into one staging directory (nfpm expands no
# variables in file paths), the configs in packaging/ get ${ARCH}, ${VERSION}
# and the glibc versions filled in, and nfpm runs there. Man pages and shell
# completions come from pulse's cobra commands (the host's pulse writes them;
# they are the same for every architecture).
# usage: package.sh ARCH BUILDDIR OUTDIR     (ARCH: amd64 or arm64)
set -euo pipefail
arch=${1:?usage: package.sh ARCH BUILDDIR OUTDIR} build=${2:?} out=${3:?}
cd "$(dirname "$0")/.."
repo=$PWD
version=$(cat VERSION)
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$repo/$build/deb-stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/man" "$stage/completions"
# Stripped as Debian strips (dh_strip): the build trees keep their symbols.
strip=strip
[[ $arch == arm64 && $(dpkg --print-architecture) != arm64 ]] && strip=aarch64-linux-gnu-strip
cp "$build/bin/pulse" "$stage/bin/"
cp "$build/lib/libros2_pulse.so" "$stage/lib/"
$strip --remove-section=.comment --remove-section=.note "$stage/bin/pulse"
$strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage/lib/libros2_pulse.so"
cp -r deploy "$stage/deploy"
build/bin/pulse gen-docs --man "$stage/man" --completions "$stage/completions"
gzip -9n "$stage"/man/*.1
# ros2 pulse (ros/ros2pulse): its modules and the egg-info that names its
# entry points, for /usr/lib/python3/dist-packages, on the path of the system
# python3 every ROS distro's ros2 runs on (design note 0034).
bash scripts/need-packages.sh python3 python3-setuptools
mkdir -p "$stage/python"
(cd ros/ros2pulse && find ros2pulse -name '*.py' -exec install -D -m 0644 {} "$stage/python/{}" \;)
(cd ros/ros2pulse && /usr/bin/python3 setup.py -q egg_info --egg-base "$stage/python" >/dev/null 2>&1) ||
  { echo "package: python3 setup.py egg_info failed in ros/ros2pulse (is python3-setuptools installed?)" >&2; exit 1; }
rm -f "$stage/python/ros2pulse.egg-info/SOURCES.txt" # the build's own paths, of no use installed
cp packaging/ros2-pulse.prerm "$stage/"

# The oldest glibc a binary runs on: the highest GLIBC_ symbol version it needs.
libc_min() {
  readelf --dyn-syms -W "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1
}
# Reproducible dates: the last commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
when=$(date -u -R -d "@$SOURCE_DATE_EPOCH")

nfpm=$(go tool -n nfpm) # the version go.mod pins, built once into the Go cache

pkgs=(ros2-pulse)
if [[ -x $build/bin/pulse-bridge ]]; then
  pkgs+=(ros2-pulse-bridge)
  cp "$build/bin/pulse-bridge" "$stage/bin/"
  $strip --remove-section=.comment --remove-section=.note "$stage/bin/pulse-bridge"
else
  echo "package: $build has no pulse-bridge: no ros2-pulse-bridge package for $arch" >&2
fi
for pkg in "${pkgs[@]}"; do
  doc=$stage/doc/$pkg
  mkdir -p "$doc"
  cp packaging/copyright "$doc/copyright"
  # A native package's Debian changelog; the project's own history is CHANGELOG.md.
  printf '%s (%s) unstable; urgency=medium\n\n  * ros2_pulse %s, packaged with nfpm (the changes: CHANGELOG.md of the\n    source).\n\n -- ros2_pulse developers <maintainers@ros2-pulse.example.org>  %s\n' \
    "$pkg" "$version" "$version" "$when" | gzip -9n > "$doc/changelog.gz"
  libc=$(libc_min "$stage/lib/libros2_pulse.so")
  [[ $pkg == ros2-pulse-bridge ]] && libc=$(libc_min "$stage/bin/pulse-bridge")
  sed -e "s/\${ARCH}/$arch/g" -e "s/\${VERSION}/$version/g" -e "s/\${LIBC_MIN}/$libc/g" \
    "packaging/$pkg.yaml" > "$stage/$pkg.yaml"
  (cd "$stage" && "$nfpm" package --packager deb --config "$pkg.yaml" --target "$out/")
done
