#!/usr/bin/env bash
# Builds on the development machine (Debian, x86-64) what tools/gpu-machine/session.sh carries
# to the GPU machine, which has no cargo, no package manager and no Open MPI:
#   target/rodinia/        gpuperfpredict's copy of the Rodinia CUDA sources, all nine programs
#                          (G: a `fetch` of marcosamaris/gpuperfpredict; its blobs are read one
#                          by one, since `git archive` fails on that snapshot)
#   target/gpu-machine/    release `yosoku` with its cuda_profiler, opencl and mpi_timer plugins
#                          (bin/), the xtask binary and the path it was built in, and Open MPI's
#                          runtime (openmpi-runtime.tgz: Debian's openmpi-bin, libopenmpi3,
#                          openmpi-common and libpmix2 files, the libraries they load but glibc's,
#                          libgcc's and libstdc++'s)
#   target/mpi/            the interposer and himeno_mpi (`cargo xtask mpi-tools`)
set -euo pipefail
G=${G:-/work/.mirror/marcosamaris+gpuperfpredict/repo}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

rm -rf target/rodinia
git -C "$G" ls-tree -r -l HEAD src/rodinia/cuda/gaussian src/rodinia/cuda/nw \
    src/rodinia/cuda/pathfinder src/rodinia/cuda/hotspot3D src/rodinia/cuda/backprop \
    src/rodinia/cuda/hotspot src/rodinia/cuda/lud src/rodinia/cuda/heartwall src/rodinia/cuda/lavaMD |
  awk '$4 != "BAD" && $5 !~ /\.o$/ && $5 !~ /backprop\/backprop$/ && $5 !~ /lavaMD\/result.*\.txt$/ {print $5}' |
  while read -r f; do
    mkdir -p "target/rodinia/$(dirname "$f")"
    git -C "$G" show "HEAD:$f" > "target/rodinia/$f"
  done

cargo build --release -p yosoku-cli -p yosoku-plugin-cuda-profiler -p yosoku-plugin-opencl \
  -p yosoku-plugin-mpi-timer
cargo build -p xtask
cargo xtask mpi-tools

out=target/gpu-machine
rm -rf "$out"
mkdir -p "$out/bin"
cp target/release/yosoku target/release/libyosoku_plugin_cuda_profiler.so \
  target/release/libyosoku_plugin_opencl.so target/release/libyosoku_plugin_mpi_timer.so "$out/bin/"
strip -o "$out/xtask" target/debug/xtask
echo "$root" > "$out/built-in.txt"

files=$(mktemp)
packages="openmpi-bin libopenmpi3 openmpi-common libpmix2"
# shellcheck disable=SC2086
dpkg -L $packages | while read -r f; do
  [ -f "$f" ] || continue
  case $f in /usr/share/man/* | /usr/share/doc/* | /usr/share/lintian/* | */include/* | *.mod) continue ;; esac
  echo "$f"
done > "$files"
while read -r f; do
  file -b "$f" | grep -q ELF || continue
  ldd "$f" 2>/dev/null | awk '/=>/ {print $3}'
done < "$files" | sort -u | grep -v 'libc\.so\|libm\.so\|libgcc_s\|libstdc++' |
  while read -r lib; do
    echo "$lib"
    readlink -f "$lib"
  done >> "$files"
sort -u "$files" -o "$files"
tar -czPf "$out/openmpi-runtime.tgz" -T "$files"

# meep (Debian's meep-openmpi, installed here if missing) for the MPI experiments' second program,
# with MEEP=1: its own files at their paths, and the libraries it loads but glibc's, the C++
# runtime's and Open MPI's (the machine's own Open MPI runs it) under /opt/yosoku-meep/lib, which
# only meep's wrapper puts on the library path (session.sh).
if [ "${MEEP:-0}" = 1 ]; then
  command -v meep > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q meep-openmpi
  stage=$(mktemp -d)
  mkdir -p "$stage/opt/yosoku-meep/lib"
  # meep's libraries, and those of guile's extensions (readline), which guile loads by name.
  extensions=$(dpkg -L guile-3.0-libs | grep '/extensions/.*\.so$')
  # shellcheck disable=SC2086
  for f in /usr/bin/meep $extensions; do ldd "$f"; done | awk '/=>/ {print $3}' | sort -u | while read -r lib; do
    case $(basename "$lib") in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | libresolv.so* | librt.so* | libcrypt.so* | \
        libgcc_s* | libstdc++* | libmpi* | libopen-pal* | libopen-rte* | libhwloc* | libevent* | \
        libpmix* | libz.so*) ;;
      *) cp -L "$lib" "$stage/opt/yosoku-meep/lib/" ;;
    esac
  done
  dpkg -L guile-3.0-libs libctl7 meep-openmpi libmeep-openmpi30 | while read -r f; do
    [ -f "$f" ] || continue
    case $f in /usr/share/man/* | /usr/share/doc/* | /usr/share/lintian/*) continue ;; esac
    case $f in */guile/3.0/extensions/*) ;; *.so*) continue ;; esac
    echo "$f"
  done > "$files"
  tar -cf - -T "$files" 2> /dev/null | tar -xf - -C "$stage"
  tar -czf "$out/meep-runtime.tgz" -C "$stage" .
  rm -rf "$stage"
fi
rm -f "$files"
du -sh target/rodinia target/mpi "$out" "$out"/*
