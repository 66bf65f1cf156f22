#!/usr/bin/env bash
# The one script the GPU run executes (tools/cuda-trace/README.md): builds the three traced
# programs and the header's self-test with nvcc, checks every variant's result, times the
# variants (REPS repetitions, interleaved), writes traces, counts instructions with Nsight
# Compute, and packs what comes back into $OUT:
#   results.tar.gz          environment, build reports, checks, times, ncu CSVs, logs
#   traces_<program>.tar    each trace (gzip; a subset of a large trace, as traces.json says)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
work=${WORK:-/tmp/cuda-trace}
reps=${REPS:-50}
rm -rf "$work"
mkdir -p "$out" "$work/results" "$work/traces"
res=$work/results
{
  nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv
  nvcc --version | tail -2
  ncu --version | tail -1
  uname -r
} > "$res/environment.txt" 2>&1
cat "$res/environment.txt"

flags=(-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I "$here/../../plugins/cuda_profiler/include" -Xptxas -v)
pids=()
for p in selftest matmul fwt srad; do
  nvcc "${flags[@]}" -o "$work/$p" "$here/$p.cu" > "$res/build_$p.txt" 2>&1 &
  pids+=($!)
done
nvcc "${flags[@]}" -DSRAD_MIN_BLOCKS=6 -o "$work/srad_bounded" "$here/srad.cu" > "$res/build_srad_bounded.txt" 2>&1 &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
echo "built"

nvidia-smi -q -d CLOCK,PERFORMANCE > "$res/clocks_before.txt" 2>&1 || true
"$work/selftest" "$work/traces" 2>&1 | tee "$res/selftest.txt" || true
for p in matmul fwt srad srad_bounded; do
  "$work/$p" all "$work/traces" "$reps" 2>&1 | tee "$res/$p.txt" || true
  mv "$work/traces/${p}_checks.csv" "$work/traces/${p}_times.csv" "$res/"
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$res/clocks_after.txt" 2>&1 || true

# Instruction counts: one launch of each variant (the program prints their order).
metrics=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,sm__warps_active.avg.pct_of_peak_sustained_active
for p in matmul fwt srad srad_bounded; do
  ncu --clock-control none --csv --page raw --metrics "$metrics" -k "regex:${p%_bounded}_kernel" \
    --log-file "$res/ncu_raw_${p}.csv" "$work/$p" profile > "$res/ncu_${p}_launches.txt" 2>&1 || echo "ncu $p FAILED"
  echo "ncu $p: $(grep -c "${p%_bounded}_kernel" "$res/ncu_raw_${p}.csv") launches profiled"
done

python3 "$here/pack.py" "$work/traces" "$work/packed" 2>&1 | tee "$res/pack.txt"
cp "$work/packed/traces.json" "$res/"
(cd "$work" && tar czf "$out/results.tar.gz" results)
for p in matmul fwt srad selftest; do
  (cd "$work/packed" && tar cf "$out/traces_$p.tar" ${p}_*)  # srad_bounded_* go with srad
done
ls -l "$out"
grep -h "FAILED" "$res"/*.txt && exit 1 || echo "all checks passed"
