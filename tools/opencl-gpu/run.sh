#!/usr/bin/env bash
# Measures the opencl plugin's kernel suite on this machine's GPU through its vendor's OpenCL
# driver, with a yosoku built elsewhere (a GPU machine lent for minutes has no Rust toolchain):
#   YOSOKU_BIN=DIR NAME=<machine> OUT=DIR bash tools/opencl-gpu/run.sh
# DIR holds `yosoku` and `libyosoku_plugin_opencl.so` (cargo build --release -p yosoku-cli
# -p yosoku-plugin-opencl) and, where the machine has no ICD loader, `libOpenCL.so.1`.
# Writes into $OUT:
#   <NAME>.json        the standard preset, the settings of `cargo xtask opencl-experiment`:
#                      the record pipelines/data/opencl keeps (SOURCES.md there)
#   <NAME>-large.json  copy and the matrix multiply at sizes beyond the device's L2: its
#                      measured bandwidth and FLOP/s
#   opencl_env.txt     the ICD, the driver and the devices the run saw
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${YOSOKU_BIN:?directory holding yosoku and the opencl plugin}" && pwd)
name=${NAME:?a name for the record, e.g. nvidia-h200}
out=${OUT:?}
work=${WORK:-/tmp/opencl-gpu}
rm -rf "$work"
mkdir -p "$out" "$work"

# The ICD loader: the machine's, or the one carried in YOSOKU_BIN.
if ! ldconfig -p | grep -q 'libOpenCL.so.1 '; then
  export LD_LIBRARY_PATH=$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# NVIDIA's OpenCL driver registered with the loader, where the image does not do it.
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
  lib=$(ldconfig -p | grep -o '/[^ ]*libnvidia-opencl.so.1' | head -1 || true)
  [ -n "$lib" ] || lib=$(find /usr /lib /lib64 -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
  [ -n "$lib" ] || { echo "no libnvidia-opencl.so.1 on this machine"; exit 1; }
  mkdir -p "$work/vendors"
  echo "$lib" > "$work/vendors/nvidia.icd"
  export OCL_ICD_VENDORS=$work/vendors
fi
{
  echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}"
  cat "${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}"/*.icd
  nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem,memory.total,power.limit --format=csv 2>&1 || true
} > "$out/opencl_env.txt"
cat "$out/opencl_env.txt"

measure() {  # measure RUN_ID EXTRA_CONFIG
  local log=$work/log-$1
  cat > "$work/$1.toml" <<TOML
[pipeline]
name = "opencl-measure"

[sources.run]
plugin = "opencl"
collector = "run"
config = { device_type = "gpu", warmup_launches = 3, max_launches = 100, max_secs_per_config = 3.0, run_id = "$1", log_dir = "$log"$2 }
TOML
  YOSOKU_PLUGIN_PATH=$bin "$bin/yosoku" run "$work/$1.toml" -o "$work/bundle-$1"
  mv "$log/opencl-run.json" "$out/$1.json"
}
measure "$name" ', preset = "standard"'
measure "$name-large" ', kernels = ["copy", "matmul"], sizes = ["copy=16777216,33554432,67108864,134217728", "matmul=1024,2048"]'
ls -l "$out"
