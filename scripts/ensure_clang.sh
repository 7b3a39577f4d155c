#!/usr/bin/env bash
# tinygrad's CPU device compiles kernels with the `clang` binary (Debian package `clang`).
set -eu
command -v clang >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "planfuzz: installing clang (tinygrad's CPU device needs it)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
  command -v clang >/dev/null 2>&1 && exit 0
fi
echo "planfuzz: tinygrad's CPU device needs clang; install it with: sudo apt-get install -y clang" >&2
exit 1
