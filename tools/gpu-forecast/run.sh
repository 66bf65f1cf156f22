#!/usr/bin/env bash
# Issue 40's measurement of the Rodinia kernels the forecasts in pipelines/data/gpu-forecast/
# are for, on the GPU machine, through yosoku's `ncu_run` collector (tools/gpu-forecast/README.md):
#   RODINIA=DIR YOSOKU_BIN=DIR OUT=DIR bash tools/gpu-forecast/run.sh
# RODINIA holds gpuperfpredict's copy of the Rodinia CUDA sources (the code the dataset was
# measured with): cuda/{backprop,hotspot,lud,heartwall}; YOSOKU_BIN holds `yosoku` and
# `libyosoku_plugin_cuda_profiler.so` (cargo build --release -p yosoku-cli
# -p yosoku-plugin-cuda-profiler); HEARTWALL_AVI (optional) is Rodinia's data/heartwall/test.avi.
# LAUNCHES (default 5) launches of each kernel and input size are profiled, after SKIP (default 1).
# NCU_METRICS (comma separated) replaces the four metrics collected; with it (issue 69's counters
# campaign, tools/gpu-machine/cuda-campaign.sh) LU's other two kernels (lud_perimeter,
# lud_internal) and lavaMD's kernel_gpu_cuda (cuda/lavaMD, sizes LAVAMD_SIZES, boxes a side)
# are profiled too: with backprop, hotspot, LU and heartwall, every kernel of the Rodinia copy
# the second forecast's run.sh does not profile.
# Writes into $OUT/<kernel>/<size>/ what ncu_run's log_dir keeps (ncu.csv, command.txt,
# program-output.txt), and $OUT/environment.txt; PACK (optional) is a .tar.gz of $OUT rewritten
# after each kernel, so that a run cut short still brings back what it measured. Each kernel
# and size is a pipeline of its own: one that fails is listed in $OUT/failed.txt and the others
# run on. DRY_RUN=1 builds nothing and runs nothing, and prints the pipelines it would run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# A dry run builds nothing: the sources need not be there.
if [ "${DRY_RUN:-0}" = 1 ]; then src=${RODINIA:-rodinia}; else
  src=$(cd "${RODINIA:?directory of gpuperfpredict\'s src/rodinia}" && pwd)
fi
out=${OUT:?}
work=${WORK:-/tmp/gpu-forecast}
launches=${LAUNCHES:-5}
skip=${SKIP:-1}
dry=${DRY_RUN:-0}
arch=${ARCH:-sm_90}
metrics=${NCU_METRICS:-gpu__time_duration.sum,sm__cycles_elapsed.sum,launch__grid_size,launch__block_size}
metrics_toml=$(echo "$metrics" | sed 's/[^,][^,]*/"&"/g; s/,/, /g')
# Every kernel where the metrics are the counters campaign's.
counting=$([ -n "${NCU_METRICS:-}" ] && echo 1 || echo 0)
lud_kernels="lud_diagonal"
[ "$counting" = 1 ] && lud_kernels="lud_diagonal lud_perimeter lud_internal"
lavamd_sizes=${LAVAMD_SIZES:-2 4 8 12 16}
mkdir -p "$out" "$work"
if [ "$dry" != 1 ]; then
  bin=$(cd "${YOSOKU_BIN:?directory holding yosoku and the cuda_profiler plugin}" && pwd)
  {
    nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem,memory.total,power.limit --format=csv || true
    nvidia-smi -q -d CLOCK || true
    nvcc --version | tail -2 || true
    ncu --version | tail -1 || true
    gcc --version | head -1 || true
    uname -r
    date -u +%Y-%m-%dT%H:%MZ
  } > "$out/environment.txt" 2>&1
  cat "$out/environment.txt"
fi

# The sizes of the gpuperfpredict dataset (pipelines/data/gpuperfpredict/SOURCES.md), as its
# `input.size.1` and `input.size.2` columns name them: every one with ALL_SIZES=1; by default
# every 4th of backprop's and heartwall's and every 2nd of LU's, and all 20 of hotspot's (each
# size is a run of its own under ncu, a few seconds each: 15 + 15 + 20 + 16 runs, and 22 of
# heartwall's, fit the device time a session has). Chosen before any measurement.
if [ "${ALL_SIZES:-0}" = 1 ]; then
  backprop_sizes=$(seq 8192 1024 65536)
  lud_sizes=$(seq 256 256 8192)
  heartwall_sizes=$(seq 20 104)
else
  backprop_sizes=$(seq 8192 4096 65536)
  lud_sizes=$(seq 512 512 8192)
  heartwall_sizes=$(seq 20 4 104)
fi
hotspot_sizes=$(for g in 64 128 256 512 1024; do for t in 256 512 768 1024; do echo "${g}x$t"; done; done)
# The counters campaign profiles every kernel, three of LU's at each size: fewer sizes of each
# (every 8th of backprop's, every 4th of LU's, two of hotspot's iteration counts), about 55 runs.
if [ "$counting" = 1 ] && [ "${ALL_SIZES:-0}" != 1 ]; then
  backprop_sizes=$(seq 8192 8192 65536)
  lud_sizes=$(seq 1024 1024 8192)
  hotspot_sizes=$(for g in 64 128 256 512 1024; do for t in 256 1024; do echo "${g}x$t"; done; done)
fi

# Built as gpuperfpredict's Makefiles build them (src/rodinia/common/init.config and each
# program's Makefile: the optimisation flags, -D devId=0; backprop's C files by gcc, as C: they
# use C++ keywords as names; LU's common.c as C++, its header declares `extern "C"`), for this
# GPU's architecture. The three build at once; a failure prints its log and stops the script.
build() {
  # cudaThreadSynchronize, which backprop calls, is gone from CUDA 13: its successor takes its place.
  local common=(-D devId=0 -D_FORCE_INLINES -DcudaThreadSynchronize=cudaDeviceSynchronize "-arch=$arch")
  mkdir -p "$work/obj/backprop" "$work/obj/lud"
  (cd "$src/cuda/backprop" &&
    for c in facetrain imagenet backprop; do gcc -g -O2 -D devId=0 -c "$c.c" -o "$work/obj/backprop/$c.o"; done &&
    nvcc "${common[@]}" -O2 -c backprop_cuda.cu -o "$work/obj/backprop/backprop_cuda.o" &&
    nvcc "${common[@]}" -o "$work/backprop" "$work"/obj/backprop/*.o -lm) > "$work/build-backprop.txt" 2>&1 &
  local p1=$!
  (cd "$src/cuda/hotspot" && nvcc "${common[@]}" -o "$work/hotspot" hotspot.cu) > "$work/build-hotspot.txt" 2>&1 &
  local p2=$!
  (cd "$src/cuda/lud" &&
    nvcc "${common[@]}" -O3 -use_fast_math -DGPU_TIMER -I common -x cu -c common/common.c -o "$work/obj/lud/common.o" &&
    nvcc "${common[@]}" -O3 -use_fast_math -DGPU_TIMER -I common -o "$work/lud_cuda" lud.cu lud_kernel.cu "$work/obj/lud/common.o" -lm) > "$work/build-lud.txt" 2>&1 &
  local p3=$!
  local failed=0
  wait $p1 || { failed=1; cat "$work/build-backprop.txt"; }
  wait $p2 || { failed=1; cat "$work/build-hotspot.txt"; }
  wait $p3 || { failed=1; cat "$work/build-lud.txt"; }
  if [ "$counting" = 1 ]; then
    # lavaMD as its makefile builds it: the C files by gcc, the CUDA ones by nvcc. main.c calls
    # strcmp and cudaSetDevice, timer.c gettimeofday, undeclared: their headers are included for
    # them and what stays undeclared (the CUDA calls) is a warning, as it was in C89.
    mkdir -p "$work/obj/lavaMD"
    (cd "$src/cuda/lavaMD" &&
      gcc -O3 -D devId=0 -include string.h -Wno-error=implicit-function-declaration -c main.c -o "$work/obj/lavaMD/main.o" &&
      gcc -O3 -D devId=0 -c util/num/num.c -o "$work/obj/lavaMD/num.o" &&
      gcc -O3 -D devId=0 -include sys/time.h -c util/timer/timer.c -o "$work/obj/lavaMD/timer.o" &&
      nvcc "${common[@]}" -O3 -c util/device/device.cu -o "$work/obj/lavaMD/device.o" &&
      nvcc "${common[@]}" -O3 -c kernel/kernel_gpu_cuda_wrapper.cu -o "$work/obj/lavaMD/wrapper.o" &&
      nvcc "${common[@]}" -o "$work/lavaMD" "$work"/obj/lavaMD/*.o -lm) > "$work/build-lavaMD.txt" 2>&1 ||
      { cat "$work/build-lavaMD.txt"; echo "lavaMD did not build: its sizes are left out"; rm -rf "$work/pipelines/kernel_gpu_cuda"; }
  fi
  if [ -n "${HEARTWALL_AVI:-}" ]; then
    (cd "$src/cuda/heartwall" &&
      nvcc "${common[@]}" -O3 -I AVI -o "$work/heartwall" main.cu AVI/avilib.c AVI/avimod.c -lm) || failed=1
  fi
  cp "$work"/build-*.txt "$out/"
  [ "$failed" = 0 ] || { echo "a build failed"; exit 1; }
}

# Hotspot's temperature and power files of a g x g grid: one value a line, fixed seeds (the
# kernel's work does not depend on the values).
hotspot_inputs() {
  local g=$1
  [ -f "$work/temp_$g" ] && return
  awk -v n=$((g * g)) -v seed=1 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%.6f\n", 323 + 20 * rand() }' > "$work/temp_$g"
  awk -v n=$((g * g)) -v seed=2 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%.6f\n", 0.5 * rand() / 1000 }' > "$work/power_$g"
}

# One source of the pipeline: `kernel` at `size`, running `program args...`.
source_block() {
  local id=$1 kernel=$2 size=$3 program=$4
  shift 4
  local args="" variants=""
  for a in "$@"; do args="$args\"$a\", "; done
  for _ in $(seq "$launches"); do variants="$variants\"$size\", "; done
  cat <<EOF

[sources.$id]
plugin = "cuda_profiler"
collector = "ncu_run"
config = { program = "$program", args = [${args%, }], kernel_name = "$kernel", launch_skip = $skip, launch_count = $launches, clock_control = "none", ncu_metrics = [$metrics_toml], nsys_trace = "no", timeout_secs = 120, log_dir = "$out/$kernel/$size", variants = [${variants%, }] }
EOF
}

# One pipeline per kernel and size, `$work/pipelines/<kernel>/<nnn>-<size>.toml`.
header() {
  printf '[pipeline]\nname = "rodinia-%s-%s"\ndescription = "A Rodinia kernel under ncu_run (tools/gpu-forecast/run.sh)"\n' "$1" "$2"
}
pipelines() {
  local i=0 dir=$work/pipelines
  rm -rf "$dir"
  mkdir -p "$dir"/{bpnn_layerforward_CUDA,bpnn_adjust_weights_cuda,calculate_temp,kernel,kernel_gpu_cuda}
  for k in $lud_kernels; do mkdir -p "$dir/$k"; done
  for n in $backprop_sizes; do
    for k in bpnn_layerforward_CUDA bpnn_adjust_weights_cuda; do
      i=$((i + 1))
      # One launch of each per run: the launch skipped is none.
      { header "$k" "$n"; skip=0 launches=1 source_block "s$i" "$k" "$n" "$work/backprop" "$n"; } > "$dir/$k/$(printf %03d $i)-$n.toml"
    done
  done
  for s in $hotspot_sizes; do
    local g=${s%x*} t=${s#*x}
    i=$((i + 1))
    { header calculate_temp "$s"; source_block "s$i" calculate_temp "$s" "$work/hotspot" "$g" 2 "$t" "$work/temp_$g" "$work/power_$g" "$work/hotspot_out_$s"; } > "$dir/calculate_temp/$(printf %03d $i)-$s.toml"
  done
  for n in $lud_sizes; do
    for k in $lud_kernels; do
      i=$((i + 1))
      { header "$k" "$n"; source_block "s$i" "$k" "$n" "$work/lud_cuda" -s "$n"; } > "$dir/$k/$(printf %03d $i)-$n.toml"
    done
  done
  if [ "$counting" = 1 ]; then
    # lavaMD: one launch a run (its one kernel, once), the particles of n x n x n boxes.
    for n in $lavamd_sizes; do
      i=$((i + 1))
      { header kernel_gpu_cuda "$n"; skip=0 launches=1 source_block "s$i" kernel_gpu_cuda "$n" "$work/lavaMD" -boxes1d "$n"; } > "$dir/kernel_gpu_cuda/$(printf %03d $i)-$n.toml"
    done
  fi
  if [ -n "${HEARTWALL_AVI:-}" ]; then
    for f in $heartwall_sizes; do
      i=$((i + 1))
      { header kernel "$f"; source_block "s$i" kernel "$f" "$work/heartwall" "$HEARTWALL_AVI" "$f"; } > "$dir/kernel/$(printf %03d $i)-$f.toml"
    done
  fi
}

pack() {
  if [ -n "${PACK:-}" ]; then
    # tar's status 1 is "a file changed while read", which it says of fresh files on some
    # file systems; the archive is still whole.
    tar -czf "$PACK.tmp" -C "$out" . || [ $? = 1 ]
    mv "$PACK.tmp" "$PACK"
  fi
}

pipelines
if [ "$dry" = 1 ]; then
  find "$work/pipelines" -name '*.toml' | sort | while read -r f; do echo "# $f"; cat "$f"; done
  exit 0
fi
build
for g in 64 128 256 512 1024; do hotspot_inputs "$g"; done
: > "$out/failed.txt"
for k in bpnn_layerforward_CUDA bpnn_adjust_weights_cuda calculate_temp $lud_kernels kernel kernel_gpu_cuda; do
  for p in $(find "$work/pipelines/$k" -name '*.toml' 2> /dev/null | sort); do
    name=$(basename "$p" .toml)
    echo "== $k $name"
    if ! "$bin/yosoku" run --plugin-path "$bin" "$p" -o "$work/bundles/$k-$name" > "$work/run-$k-$name.txt" 2>&1; then
      echo "$k $name" >> "$out/failed.txt"
      mkdir -p "$out/$k/failed"
      cp "$work/run-$k-$name.txt" "$out/$k/failed/$name.txt"
      tail -5 "$work/run-$k-$name.txt"
    fi
  done
  pack
done
echo "reports: $(find "$out" -name ncu.csv | wc -l); failed: $(wc -l < "$out/failed.txt")"
