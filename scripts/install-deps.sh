#!/usr/bin/env bash
# Installs the Debian 12 packages mpidsm needs, only those that are missing;
# arguments name more (the test command's cross compiler and QEMU).
set -euo pipefail
packages=(build-essential cmake pkg-config
          libopenmpi-dev openmpi-bin
          libucx-dev ucx-utils
          libibverbs-dev librdmacm-dev
          libgtest-dev libgmock-dev
          python3-matplotlib doxygen
          iproute2 util-linux
          "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
