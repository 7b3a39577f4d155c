#!/usr/bin/env bash
# tinygrad's emulated GPU (DEV=MOCKKFD+AMD): its mock driver and RDNA3 emulator live in a tinygrad checkout's
# test/mockgpu/ (not in the wheel), and its AMD code generator loads libLLVM 19 or newer (Debian package libllvm19).
# Installs libLLVM when missing and we are root, then prints the folder to put on PYTHONPATH: the tinygrad checkout
# TINYGRAD_REPO names (as tinygrad's own CI has it), else ../shared/tinygrad-mockgpu. Exit 1 with the fix otherwise.
set -eu
here="$(cd "$(dirname "$0")/.." && pwd)"
has_llvm() { ldconfig -p 2>/dev/null | grep -Eq 'libLLVM(-|\.so\.)(19|[2-9][0-9])'; }
if ! has_llvm; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "planfuzz: installing libllvm19 (tinygrad's AMD code generator needs it)" >&2
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libllvm19 || { apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libllvm19; }) >/dev/null 2>&1 || true
  fi
  has_llvm || { echo "planfuzz: tinygrad's AMD code generator needs libLLVM 19+; install it with: sudo apt-get install -y libllvm19" >&2; exit 1; }
fi
for root in ${TINYGRAD_REPO:+"$TINYGRAD_REPO"} "$here/../shared/tinygrad-mockgpu"; do
  if [ -f "$root/test/mockgpu/mockgpu.py" ]; then (cd "$root" && pwd); exit 0; fi
done
echo "planfuzz: tinygrad's mock GPU files (test/mockgpu/) were not found: set TINYGRAD_REPO to a tinygrad checkout" \
  "(a clone of tinygrad's repository), or provide ../shared/tinygrad-mockgpu" >&2
exit 1
