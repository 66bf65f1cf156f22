"""Extra-P's measurement point advisor, the peer of `yosoku scaling --suggest` in `cargo xtask
bench-scaling` (crates/core/regression/examples/scaling_noise.rs, `suggest --advisor PYTHON`).

Usage: python advise.py   (requests on stdin, one JSON object per line: {"file": an Extra-P text
experiment}; one JSON line per request on stdout: {"mode": "base" | "add" | "gpr", "points":
[[x, y], ...]} or {"error": "..."})

Each request is modelled with Extra-P's default modelers and given to Extra-P 4.2.5's
`MeasurementPointAdvisor` as its GUI does: an unlimited budget, the last parameter counting the
processes (cost = runtime x processes) where there are two, one process where there is one. The
advisor completes lines of 5 values per parameter first (`base`), then adds a point off the
lines (`add`), then ranks candidates by its Gaussian-process strategy (`gpr`)."""

import json
import sys
import warnings

from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator
from extrap.mpa.measurement_point_advisor import MeasurementPointAdvisor
from extrap.mpa.util import identify_selection_mode

warnings.filterwarnings("ignore")

for line in sys.stdin:
    try:
        request = json.loads(line)
        experiment = TextFileReader().read_experiment(request["file"])
        generator = ModelGenerator(experiment)
        generator.model_all()
        dims = len(experiment.parameters)
        advisor = MeasurementPointAdvisor(
            budget=float("inf"),
            process_parameter_id=dims - 1,
            experiment=experiment,
            manual_pms_selection=False,
            manual_parameter_value_series=None,
            calculate_cost_manual=dims == 1,
            number_processes=1,
            model_generator=generator,
        )
        mode = identify_selection_mode(experiment, advisor.min_points)
        points, _ = advisor.suggest_points([], experiment.metrics[0])
        answer = {"mode": mode, "points": [[float(v) for v in p] for p in points]}
    except Exception as e:  # a failed request is answered, not fatal: the next law goes on
        answer = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(answer), flush=True)
