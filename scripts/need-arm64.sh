#!/usr/bin/env bash
# Sets this machine up to build for arm64 and to run arm64 programs under
# qemu-user (`make cross`, `make test-arm64`): the cross compiler,
# qemu-user-static and binfmt-support; arm64 as a dpkg foreign architecture,
# with libc6:arm64 (the arm64 loader, for the arm64 package's install test)
# and libc6-dev:arm64 (once arm64 is a foreign architecture, Debian's cross
# compiler takes its headers from /usr/include/aarch64-linux-gnu) and, where Debian can
# install it, cyclonedds-dev:arm64 (the arm64 pulse-bridge); binfmt_misc
# mounted and qemu-aarch64 enabled, so the kernel runs arm64 ELF files through
# qemu. Root, or sudo without a password; otherwise it says what to run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/need-packages.sh" gcc-aarch64-linux-gnu qemu-user-static binfmt-support
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if sudo -n true 2>/dev/null; then sudo=(sudo -n); else
    echo "make test-arm64 needs root (or sudo) once: to add the arm64 architecture and register qemu with binfmt_misc" >&2
    exit 1
  fi
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "adding arm64 as a dpkg foreign architecture (multiarch)" >&2
  "${sudo[@]}" dpkg --add-architecture arm64
fi
bash "$here/need-packages.sh" libc6:arm64 libc6-dev:arm64
bash "$here/need-packages.sh" cyclonedds-dev:arm64 ||
  echo "no arm64 CycloneDDS through multiarch here: the arm64 tree is built without pulse-bridge" >&2
if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
  "${sudo[@]}" mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if ! grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
  "${sudo[@]}" update-binfmts --enable qemu-aarch64
fi
grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 || {
  echo "qemu-aarch64 is not registered with binfmt_misc: arm64 programs cannot run here" >&2
  exit 1
}
