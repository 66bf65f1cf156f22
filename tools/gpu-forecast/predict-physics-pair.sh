#!/usr/bin/env bash
# `yosoku predict` on a real profile pair of the repository, scored against the measurement
# (docs/results.md, "Physics beside `yosoku predict`"): every Rodinia kernel gpuperfpredict
# profiled on both a GTX 980 and a GTX TITAN X, the GTX 980's profiles predicted on the TITAN X
# by the transfer model fitted on the Apps-Gpus launches (the TITAN X's own rows left out,
# `--refit-without-target`), with wave scaling, the latency-aware model, the physics model and
# floor + bytes beside; then `forecast_score` against the TITAN X's measured launches.
# Usage: bash tools/gpu-forecast/predict-physics-pair.sh [OUT_DIR]   (after `cargo build --workspace`)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
yosoku="$repo/target/debug/yosoku"
data="$repo/pipelines/data/gpuperfpredict"
cat > "$out/model.toml" <<TOML
[pipeline]
name = "model"
[sources.gpp]
plugin = "cuda_profiler"
collector = "gpuperfpredict"
config = { paths = ["$data/apps/*.csv.gz"] }
[[fit]]
step = "gpu_transfer_fit"
id = "model"
observations = "gpp.observations"
[[validate]]
step = "gpu_transfer"
id = "transfer"
model = "model"
schemes = ["leave_one_gpu_out"]
TOML
"$yosoku" run -q "$out/model.toml" -o "$out/model"
profiles=()
measured=""
for profile in "$data"/*-GTX-980.csv.gz; do
    kernel=${profile%-GTX-980.csv.gz}
    if [ -f "$kernel-TitanX.csv.gz" ]; then
        profiles+=(--profile "$profile")
        measured+="\"$kernel-TitanX.csv.gz\", "
    fi
done
"$yosoku" predict --collector gpuperfpredict "${profiles[@]}" --on "GTX TITAN X" \
    --model "$out/model" --refit-without-target --save "$out/forecast" > "$out/predict.txt"
cat > "$out/score.toml" <<TOML
[pipeline]
name = "score"
[sources.forecast]
plugin = "table"
collector = "bundle"
config = { dir = "$out/forecast", table = "forecast.predictions" }
[sources.measured]
plugin = "cuda_profiler"
collector = "gpuperfpredict"
config = { paths = [${measured%, }] }
[[validate]]
step = "forecast_score"
id = "score"
forecast = "forecast.predictions"
measured = "measured.runs"
TOML
"$yosoku" run "$out/score.toml" -o "$out/scored"
