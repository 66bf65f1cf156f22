#!/usr/bin/env bash
# Records real Nsight Compute CSV output of tools/ncu-capture/kernels.cu on the GPU this runs on.
# Writes into $OUT (default ./out). See README.md for what each file is.
set -euo pipefail
cd "$(dirname "$0")"
out=${OUT:-out}
mkdir -p "$out"
nvcc -O3 -arch=native -o "$out/kernels" kernels.cu
{
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
  ncu --version | tail -1
  nvcc --version | tail -1
} > "$out/environment.txt"

# Details page (long form: Section, Metric Name, Metric Unit, Metric Value, plus rule rows),
# default sections, one launch of each matrix multiply.
ncu --csv --page details "$out/kernels" matmul_tiled 1024 > "$out/ncu_details_matmul_tiled_h100.csv"
ncu --csv --page details "$out/kernels" matmul_naive 1024 > "$out/ncu_details_matmul_naive_h100.csv"

# Raw page (wide: one row per launch, a units row), all metrics of the default set.
ncu --csv --page raw "$out/kernels" copy_float4 16777216 > "$out/ncu_raw_copy_float4_h100.csv"

# Raw page with a chosen metric list over an input-size sweep: the shape of a counter dataset.
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__inst_executed_op_branch.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
for k in matmul_naive matmul_tiled; do
  ncu --csv --page raw --metrics "$metrics" "$out/kernels" $k 128 192 256 320 384 448 512 640 768 896 1024 \
    > "$out/ncu_raw_sweep_${k}_h100.csv"
done
for k in copy_float copy_float2 copy_float4; do
  ncu --csv --page raw --metrics "$metrics" "$out/kernels" $k 1048576 2097152 4194304 8388608 16777216 33554432 \
    > "$out/ncu_raw_sweep_${k}_h100.csv"
done
rm "$out/kernels"
ls -l "$out"
