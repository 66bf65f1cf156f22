#!/usr/bin/env bash
# One GPU-machine session's measurements in one call (the device tool lends a machine for about
# 15 minutes, start included): first the GPU work, then what needs the machine's 16 CPU cores.
#   1. the second GPU forecast's measurement (tools/gpu-forecast/second/run.sh), packed into
#      $OUT/second.tgz after each kernel;
#   2. for each program of PROGRAMS (default himeno; meep needs MEEP=1 in prepare.sh):
#      `cargo xtask mpi-experiment steps-ranks --only <program> --ranks 1,2,4,8 --target-ranks 16`
#      (issue 56, item 4: short runs on 1-8 ranks, the run to predict on 16, never
#      oversubscribed), logs into $OUT/steps-ranks-<program>.tgz;
#   3. and `cargo xtask mpi-experiment scaling --only <program>` (1, 2, 4 ranks, not
#      oversubscribed on 16 cores), logs into $OUT/scaling-<program>.tgz.
# The machine has no cargo, no package manager and no Open MPI, so everything is built on the
# development machine and carried (tools/gpu-machine/README.md says how):
#   target/rodinia             the Rodinia CUDA sources (tools/gpu-forecast/README.md)
#   target/gpu-machine/bin/    release `yosoku` and its cuda_profiler, opencl, mpi_timer plugins
#   target/gpu-machine/xtask   the xtask binary (its MPI experiments run with --prebuilt), and
#                              built-in.txt, the repository's path where it was built
#   target/gpu-machine/openmpi-runtime.tgz  Debian's Open MPI 4.1.4 runtime and the libraries it
#                              loads, unpacked at their own paths without replacing any file
#                              (optional: the machine has Open MPI 4.1.6 of its own)
#   target/gpu-machine/meep-runtime.tgz     Debian's meep-openmpi and what it loads (MEEP=1)
#   target/mpi                 the MPI timer interposer and himeno_mpi (`cargo xtask mpi-tools`)
# Each part runs under its own time limit; a part that fails is reported and the next one runs.
# SKIP_GPU=1 or SKIP_MPI=1 leaves a part out.
set -uo pipefail
out=${OUT:?}
root=$(pwd)
status=0
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

if [ "${SKIP_GPU:-0}" != 1 ]; then
  # `yosoku calibrate` (the empty-kernel launch latency) goes through OpenCL: the ICD loader
  # CUDA ships, and NVIDIA's driver registered as a vendor where the image does not.
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$d/libOpenCL.so.1" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
  if ! ls /etc/OpenCL/vendors/*.icd > /dev/null 2>&1; then
    lib=$(find /usr/local/nvidia /usr/lib/x86_64-linux-gnu -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
    if [ -n "$lib" ]; then
      mkdir -p /etc/OpenCL/vendors
      echo "$lib" > /etc/OpenCL/vendors/nvidia.icd
    fi
  fi
  log "OpenCL: loader $(ldconfig -p | grep -c libOpenCL.so.1) in the cache, LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}; vendors: $(cat /etc/OpenCL/vendors/*.icd 2>/dev/null | tr '\n' ' ')"
  log "second forecast: measuring"
  RODINIA=target/rodinia/src/rodinia YOSOKU_BIN=target/gpu-machine/bin OUT=/tmp/second \
    PACK=/tmp/second.tgz WORK=/tmp/second-work \
    timeout "${GPU_SECS:-330}" bash tools/gpu-forecast/second/run.sh 2>&1 | tee "$out/second.log" | tail -40
  [ "${PIPESTATUS[0]}" = 0 ] || { status=1; log "second forecast: failed or timed out"; }
  if [ -d /tmp/second ]; then
    tar -czf "$out/second.tgz" -C /tmp/second . || [ $? = 1 ]
  fi
fi

if [ "${SKIP_MPI:-0}" != 1 ]; then
  log "Open MPI: unpacking the carried runtime"
  if [ -f target/gpu-machine/openmpi-runtime.tgz ]; then
    tar -xzf target/gpu-machine/openmpi-runtime.tgz -C / --skip-old-files
    ldconfig
  fi
  mkdir -p /opt/yosoku-mpi/bin
  command -v mpirun > /dev/null || ln -sf /usr/bin/orterun /opt/yosoku-mpi/bin/mpirun
  export PATH=/opt/yosoku-mpi/bin:$PATH
  programs=${PROGRAMS:-himeno}
  if [ -f target/gpu-machine/meep-runtime.tgz ]; then
    # meep's files at their own paths; the libraries it needs beyond the machine's only on its
    # own library path, through a wrapper found first on the PATH.
    tar -xzf target/gpu-machine/meep-runtime.tgz -C / --skip-old-files
    printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/yosoku-meep/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec /usr/bin/meep "$@"\n' \
      > /opt/yosoku-mpi/bin/meep
    chmod +x /opt/yosoku-mpi/bin/meep
    meep res=10 steps=5 tools/mpi-apps/waveguide.ctl 2>&1 | tail -2
  fi
  # Shared memory between ranks of one host, as on the development machine; no network fabrics.
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
  # The xtask binary reads the repository at the path it was built in, and targets under it.
  built_in=$(cat target/gpu-machine/built-in.txt)
  if [ -n "$built_in" ] && [ ! -e "$built_in" ]; then
    mkdir -p "$(dirname "$built_in")"
    ln -s "$root" "$built_in"
  fi
  export CARGO_TARGET_DIR=$root/target
  mkdir -p target/debug
  cp target/gpu-machine/bin/* target/debug/
  mpirun --version | head -1
  nproc
  for program in $programs; do
  for part in steps-ranks scaling; do
    case $part in
      steps-ranks) args=(steps-ranks --only "$program" --ranks 1,2,4,8 --target-ranks 16) secs=${STEPS_RANKS_SECS:-200} ;;
      scaling) args=(scaling --only "$program") secs=${SCALING_SECS:-120} ;;
    esac
    log "mpi-experiment ${args[*]}"
    timeout "$secs" target/gpu-machine/xtask mpi-experiment "${args[@]}" --prebuilt \
      --into "/tmp/$part/data" > "$out/$part-$program.log" 2>&1
    rc=$?
    grep -v '^== \|^$\|^xtask: \$\|^measure: wrote' "$out/$part-$program.log" | tail -25
    [ "$rc" = 0 ] || { status=1; log "$part: exit $rc"; }
    results=target/mpi-experiment/$part/results
    [ -d "/tmp/$part/data" ] && tar -czf "$out/$part-$program.tgz" -C "/tmp/$part" data \
      $( [ -d "$results" ] && echo "-C $root/target/mpi-experiment/$part results")
    rm -rf "/tmp/$part/data" "$results"
  done
  done
fi
log "done (status $status)"
ls -la "$out"
exit "$status"
