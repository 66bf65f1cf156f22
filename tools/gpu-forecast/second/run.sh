#!/usr/bin/env bash
# The measurement of the second forecast (pipelines/data/gpu-forecast/second/SOURCES.md), on the
# GPU machine, through yosoku's `ncu_run` collector, after the forecast was committed:
#   RODINIA=DIR YOSOKU_BIN=DIR OUT=DIR bash tools/gpu-forecast/second/run.sh
# RODINIA holds gpuperfpredict's copy of the Rodinia CUDA sources: cuda/{gaussian,nw,pathfinder,
# hotspot3D} (tools/gpu-forecast/README.md says how to carry them); YOSOKU_BIN holds `yosoku`
# and `libyosoku_plugin_cuda_profiler.so`, and, for the empty-kernel launch latency,
# `libyosoku_plugin_opencl.so` (`yosoku calibrate` on the GPU's OpenCL driver; left out, said so,
# where it is absent). For every kernel and size, ncu skips the kernel's first launch and
# profiles the next LAUNCHES (5): the forecast is of the middle one
# (tools/gpu-forecast/second/launches.py). Writes $OUT/<kernel>/<size>/ (ncu_run's log_dir:
# ncu.csv, command.txt, program-output.txt), $OUT/environment.txt, $OUT/failed.txt and
# $OUT/calibration.toml; PACK (optional) is a .tar.gz of $OUT rewritten after each kernel.
# DRY_RUN=1 builds and runs nothing and prints the pipelines it would run. NCU_METRICS (comma
# separated) replaces the four metrics collected (tools/gpu-machine/cuda-campaign.sh adds DRAM and
# L2 bytes, instructions and cycles); OPENCL_CALIBRATION=0 leaves `yosoku calibrate` out.
set -euo pipefail
# A dry run builds nothing: the sources need not be there.
if [ "${DRY_RUN:-0}" = 1 ]; then src=${RODINIA:-rodinia}; else
  src=$(cd "${RODINIA:?directory of gpuperfpredict\'s src/rodinia}" && pwd)
fi
out=${OUT:?}
work=${WORK:-/tmp/gpu-forecast-second}
launches=${LAUNCHES:-5}
dry=${DRY_RUN:-0}
arch=${ARCH:-sm_90}
metrics=${NCU_METRICS:-gpu__time_duration.sum,sm__cycles_elapsed.sum,launch__grid_size,launch__block_size}
metrics_toml=$(echo "$metrics" | sed 's/[^,][^,]*/"&"/g; s/,/, /g')
mkdir -p "$out" "$work"

# The sizes of launches.py (chosen with the forecast; the two must agree).
gaussian_sizes="256 1024 4096"
nw_sizes="1024 2048 4096 8192"
pathfinder_cols="10000 100000 1000000"
hotspot3d_nx="64 128 256 512"
hotspot3d_nz=8

if [ "$dry" != 1 ]; then
  bin=$(cd "${YOSOKU_BIN:?directory holding yosoku and the cuda_profiler plugin}" && pwd)
  {
    nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem,memory.total,power.limit --format=csv || true
    nvcc --version | tail -2 || true
    ncu --version | tail -1 || true
    uname -r
    date -u +%Y-%m-%dT%H:%MZ
  } > "$out/environment.txt" 2>&1
  cat "$out/environment.txt"
fi

# Built with -O3 for this GPU's architecture. hotspot3D's Makefile adds `-g -G` (device code
# built for the debugger, unoptimised): left out, the forecast is of the program users run.
build() {
  local common=(-O3 -D devId=0 -D_FORCE_INLINES -DcudaThreadSynchronize=cudaDeviceSynchronize "-arch=$arch")
  local failed=0
  # CUDA 13's cudaDeviceProp has no clockRate or deviceOverlap, which gaussian only prints:
  # they read 0 in a copy of its source (its kernels are unchanged).
  sed -e 's/deviceProp\.clockRate/0/' -e 's/deviceProp\. *deviceOverlap/0/' \
    "$src/cuda/gaussian/gaussian.cu" > "$work/gaussian.cu"
  (cd "$src/cuda/gaussian" && nvcc "${common[@]}" -I. -o "$work/gaussian" "$work/gaussian.cu") > "$work/build-gaussian.txt" 2>&1 &
  local p1=$!
  (cd "$src/cuda/nw" && nvcc "${common[@]}" -o "$work/needle" needle.cu) > "$work/build-nw.txt" 2>&1 &
  local p2=$!
  (cd "$src/cuda/pathfinder" && nvcc "${common[@]}" -o "$work/pathfinder" pathfinder.cu) > "$work/build-pathfinder.txt" 2>&1 &
  local p3=$!
  (cd "$src/cuda/hotspot3D" && nvcc "${common[@]}" -o "$work/hotspot3D" 3D.cu) > "$work/build-hotspot3D.txt" 2>&1 &
  local p4=$!
  for p in $p1 $p2 $p3 $p4; do wait "$p" || failed=1; done
  cp "$work"/build-*.txt "$out/"
  [ "$failed" = 0 ] || { cat "$work"/build-*.txt; echo "a build failed"; exit 1; }
}

# hotspot3D's power and temperature files of an nx x nx x nz grid, one value a line, fixed seeds
# (the kernel's work does not depend on the values).
hotspot3d_inputs() {
  local nx=$1 n=$(($1 * $1 * hotspot3d_nz))
  [ -f "$work/temp_$nx" ] && return
  awk -v n=$n -v seed=1 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%.6f\n", 323 + 20 * rand() }' > "$work/temp_$nx"
  awk -v n=$n -v seed=2 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%.6f\n", 0.5 * rand() / 1000 }' > "$work/power_$nx"
}

# One pipeline: `kernel` at `size`, running `program args...`, its first launch skipped.
pipeline() {
  local kernel=$1 size=$2 program=$3
  shift 3
  local args="" variants=""
  for a in "$@"; do args="$args\"$a\", "; done
  for _ in $(seq "$launches"); do variants="$variants\"$size\", "; done
  cat <<EOF
[pipeline]
name = "rodinia-$kernel-$size"
description = "A Rodinia kernel under ncu_run (tools/gpu-forecast/second/run.sh)"

[sources.s]
plugin = "cuda_profiler"
collector = "ncu_run"
config = { program = "$program", args = [${args%, }], kernel_name = "$kernel", launch_skip = 1, launch_count = $launches, clock_control = "none", ncu_metrics = [$metrics_toml], nsys_trace = "no", timeout_secs = 300, log_dir = "$out/$kernel/$size", variants = [${variants%, }] }
EOF
}

pipelines() {
  local dir=$work/pipelines
  rm -rf "$dir"
  mkdir -p "$dir"
  for n in $gaussian_sizes; do
    for k in Fan1 Fan2; do pipeline "$k" "$n" "$work/gaussian" -s "$n" -q > "$dir/$k-$n.toml"; done
  done
  for n in $nw_sizes; do
    for k in needle_cuda_shared_1 needle_cuda_shared_2; do pipeline "$k" "$n" "$work/needle" "$n" 10 > "$dir/$k-$n.toml"; done
  done
  for c in $pathfinder_cols; do
    pipeline dynproc_kernel "$c" "$work/pathfinder" "$c" 200 20 > "$dir/dynproc_kernel-$c.toml"
  done
  for nx in $hotspot3d_nx; do
    pipeline hotspotOpt1 "${nx}x$hotspot3d_nz" "$work/hotspot3D" "$nx" "$hotspot3d_nz" 10 \
      "$work/power_$nx" "$work/temp_$nx" "$work/hotspot3D_out_$nx" > "$dir/hotspotOpt1-${nx}x$hotspot3d_nz.toml"
  done
}

pack() {
  if [ -n "${PACK:-}" ]; then
    # tar's status 1 is "a file changed while read", said of fresh files on some file systems.
    tar -czf "$PACK.tmp" -C "$out" . || [ $? = 1 ]
    mv "$PACK.tmp" "$PACK"
  fi
}

pipelines
if [ "$dry" = 1 ]; then
  for f in "$work"/pipelines/*.toml; do echo "# $f"; cat "$f"; done
  exit 0
fi
build
for nx in $hotspot3d_nx; do hotspot3d_inputs "$nx"; done
: > "$out/failed.txt"
# The empty-kernel launch latency (and the copy and matrix-multiply rates) of this GPU.
if [ "${OPENCL_CALIBRATION:-1}" = 0 ]; then
  echo "OPENCL_CALIBRATION=0: no OpenCL calibration" > "$out/calibration.txt"
elif [ -f "$bin/libyosoku_plugin_opencl.so" ]; then
  "$bin/yosoku" calibrate --plugin-path "$bin" --device-type gpu --out "$out/calibration.toml" \
    > "$out/calibration.txt" 2>&1 || echo "calibrate" >> "$out/failed.txt"
else
  echo "no libyosoku_plugin_opencl.so in YOSOKU_BIN: no launch latency measured" | tee "$out/calibration.txt"
fi
for p in "$work"/pipelines/*.toml; do
  name=$(basename "$p" .toml)
  echo "== $name"
  if ! "$bin/yosoku" run --plugin-path "$bin" "$p" -o "$work/bundles/$name" > "$work/run-$name.txt" 2>&1; then
    echo "$name" >> "$out/failed.txt"
    mkdir -p "$out/failed"
    cp "$work/run-$name.txt" "$out/failed/$name.txt"
    tail -5 "$work/run-$name.txt"
  fi
  pack
done
echo "reports: $(find "$out" -name ncu.csv | wc -l); failed: $(wc -l < "$out/failed.txt")"
