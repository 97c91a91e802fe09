#!/usr/bin/env bash
# install-deps.sh: installs hookfuse's build and test dependencies on Debian 12 (needs root).
# Idempotent: apt is skipped when every package is already installed.
set -euo pipefail

packages=(g++ cmake make libeigen3-dev libboost-dev catch2 libbenchmark-dev zlib1g-dev
          libfmt-dev libcli11-dev nlohmann-json3-dev dataset-fashion-mnist
          libleveldb-dev libsnappy-dev libprotozero-dev protobuf-compiler
          libopenmpi-dev openmpi-bin
          python3 python3-matplotlib python3-numpy)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" 2>/dev/null | grep -qx 'Status: install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
