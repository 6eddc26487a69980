#!/usr/bin/env bash
# scripts/gpu/unpack_debs.sh DIR: unpacks Debian packages (e.g. parallel HDF5
# and Open MPI carried to a machine that has no package network) into the
# root file system without dpkg's bookkeeping. Files a package puts under
# /lib go to /usr/lib, so a merged-/usr system keeps its /lib symlink.
set -euo pipefail
staging=$(mktemp -d)
for deb in "$1"/*.deb; do
  dpkg -x "$deb" "$staging"
done
if [ -d "$staging/lib" ]; then
  mkdir -p "$staging/usr/lib"
  cp -a "$staging/lib/." "$staging/usr/lib/"
  rm -rf "${staging:?}/lib"
fi
for entry in "$staging"/*; do
  cp -a "$entry" /
done
rm -rf "$staging"
ldconfig
