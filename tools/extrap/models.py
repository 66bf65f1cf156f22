"""Extra-P's models of experiments, as JSON lines, for yosoku's side-by-side test
(crates/core/regression/tests/extrap.rs) and benchmark.

Usage: python models.py [--negative-exponents] [--median] [--hold-out-largest] [--scaling weak|strong|weak_threaded] [--inclusive] [--small-kernels] FILE...
(*.jsonl: JSON Lines; *.json or *.JSON: Extra-P's JSON, as `yosoku export --format extrap`
writes it, or its legacy form; *.extra-p: an experiment Extra-P saved; a file of lines with
"parameters" objects: Talpas; a binary file with `EXTRAP_EXPERIMENT` near its start: an Extra-P
3 experiment; a directory: a set of Cube profiles, its locations combined as
--scaling says (Extra-P's `--cube` and `--scaling`; weak by default), each call path's
exclusive values or, with `--inclusive`, its inclusive ones (the reader's
`use_inclusive_measurements`, which Extra-P's GUI offers), with `--small-kernels` less the call
paths under 1 % of their run's time at every point (the reader's `small_kernel_filter`); anything
else: Extra-P's text format)

Each experiment is modelled with Extra-P's default modelers (the basic single-parameter
modeler, cross-validated; the multi-parameter modeler over it), as `extrap` on the command line
does; `--negative-exponents` sets its single-parameter modeler's `allow_negative_exponents`
option (what `yosoku scaling --negative-exponents` and `negative_exponents = true` do), `--median`
models each point's median instead of its mean (Extra-P's `--median`, which Extra-P 4.2.5's
command applies to experiments of several parameters only; here to every one). One line per (call path, metric): the constant, each term's coefficient and factors
(parameter index, exponent numerator, denominator, log exponent), SMAPE, RSS and adjusted R^2,
and the seconds Extra-P took for the file. `--hold-out-largest` leaves the largest point (the
largest value of every parameter, as `scaling_model` holds it out) out of each experiment before
modelling, and adds the model's prediction there and the mean of its measurements beside it
(`held_out`: coordinate, predicted, measured, error in percent). `--measurements` prints, instead
of models, each (call path, metric)'s points as Extra-P read them: coordinate, mean and median."""

import json
import math
import os
import sys
import time
from fractions import Fraction

from extrap.fileio.experiment_io import read_experiment
from extrap.entities.scaling_type import ScalingType
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2, SmallKernelFilter
from extrap.fileio.file_reader.extrap3_experiment_reader import Extrap3ExperimentFileReader
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.jsonlines_file_reader import read_jsonlines_file
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.entities.measurement import Measure
from extrap.modelers.model_generator import ModelGenerator


def is_talpas(path):
    """A Talpas file (what `extrap --talpas` reads): one measurement a line, its coordinate
    under "parameters", its fields parted by ';'. Extra-P is told the format by a flag; this
    is the flag a user would give it."""
    with open(path) as file:
        first = next((line.strip() for line in file if line.strip()), "")
    return first.startswith("{") and '"parameters"' in first


def is_extrap3(path):
    """An Extra-P 3 experiment (what `extrap --extra-p-3` reads): binary, `EXTRAP_EXPERIMENT`
    near its start."""
    with open(path, "rb") as file:
        return b"EXTRAP_EXPERIMENT" in file.read(64)


def exponents(compound_term):
    numerator, denominator, log = 0, 1, 0
    for t in compound_term.simple_terms:
        if t.term_type == "polynomial":
            f = Fraction(t.exponent).limit_denominator(64)
            numerator, denominator = f.numerator, f.denominator
        else:
            log = int(t.exponent)
    return [numerator, denominator, log]


def finite(x):
    """A number JSON can hold: NaN and infinities (an adjusted R^2 of a constant series) as null."""
    return x if math.isfinite(x) else None


def terms(function):
    out = []
    for term in function.compound_terms:
        if hasattr(term, "parameter_term_pairs"):
            factors = [[p] + exponents(ct) for p, ct in term.parameter_term_pairs]
        else:
            factors = [[0] + exponents(term)]
        out.append({"coefficient": term.coefficient, "factors": sorted(factors)})
    return out


def hold_out_largest(experiment):
    """Removes the point largest in every parameter from `experiment`; returns it and, per (call
    path, metric), the mean of its measurements (None where the experiment has no such point)."""
    largest = tuple(max(c.as_tuple()[i] for c in experiment.coordinates)
                    for i in range(len(experiment.parameters)))
    held = [c for c in experiment.coordinates if c.as_tuple() == largest]
    if not held:
        return None, {}
    measured = {}
    for key, ms in experiment.measurements.items():
        kept = [m for m in ms if m.coordinate.as_tuple() != largest]
        for m in ms:
            if m.coordinate.as_tuple() == largest:
                measured[key] = m.mean
        experiment.measurements[key] = kept
    experiment.coordinates = [c for c in experiment.coordinates if c.as_tuple() != largest]
    return largest, measured


args = sys.argv[1:]
negative = "--negative-exponents" in args
hold_out = "--hold-out-largest" in args
measurements_only = "--measurements" in args
inclusive = "--inclusive" in args
small_kernels = "--small-kernels" in args
median = "--median" in args
args = [a for a in args
        if a not in ("--negative-exponents", "--hold-out-largest", "--measurements", "--inclusive",
                     "--small-kernels", "--median")]
scaling = ScalingType.WEAK
if "--scaling" in args:
    at = args.index("--scaling")
    scaling = ScalingType(args[at + 1])
    del args[at:at + 2]

for path in args:
    started = time.perf_counter()
    if os.path.isdir(path):
        reader = CubeFileReader2()
        reader.scaling_type = scaling
        reader.use_inclusive_measurements = inclusive
        if small_kernels:
            reader.small_kernel_filter = SmallKernelFilter()
        experiment = reader.read_experiment(path)
    elif path.endswith(".extra-p"):
        experiment = read_experiment(path)
    elif is_extrap3(path):
        experiment = Extrap3ExperimentFileReader().read_experiment(path)
    elif path.endswith(".jsonl"):
        experiment = read_jsonlines_file(path)
    elif path.lower().endswith(".json"):
        experiment = JsonFileReader().read_experiment(path)
    elif is_talpas(path):
        experiment = TalpasFileReader().read_experiment(path)
    else:
        experiment = TextFileReader().read_experiment(path)
    if measurements_only:
        for (callpath, metric), ms in experiment.measurements.items():
            print(json.dumps({
                "file": path,
                "callpath": callpath.name,
                "metric": metric.name,
                "points": [{"coordinate": list(m.coordinate.as_tuple()), "mean": float(m.mean),
                            "median": float(m.median)}
                           for m in ms],
            }))
        continue
    largest, held_measured = hold_out_largest(experiment) if hold_out else (None, {})
    measure = Measure.MEDIAN if median else Measure.MEAN
    generator = ModelGenerator(experiment, use_measure=measure)
    # Extra-P 4.2.5's ModelGenerator gives the measure to a multi-parameter modeler only: its
    # command's `--median` models one-parameter experiments by their means. Set on the modeler
    # itself, as the multi-parameter one is.
    generator.modeler.use_measure = measure
    if negative:
        # The multi-parameter modeler models each parameter with its single-parameter one; an
        # experiment of one parameter gets a single-parameter modeler itself.
        modeler = getattr(generator.modeler, "single_parameter_modeler", generator.modeler)
        modeler.allow_negative_exponents = True
    generator.model_all()
    seconds = time.perf_counter() - started
    for (callpath, metric), model in generator.models.items():
        h = model.hypothesis
        held = None
        if (callpath, metric) in held_measured:
            predicted = float(h.function.evaluate(list(largest)))
            measured = held_measured[(callpath, metric)]
            held = {"coordinate": list(largest), "predicted": predicted, "measured": measured,
                    "error_pct": finite(100 * (predicted - measured) / measured)}
        print(json.dumps({
            "file": path,
            "callpath": callpath.name,
            "metric": metric.name,
            "constant": h.function.constant_coefficient,
            "terms": terms(h.function),
            "smape": finite(h.SMAPE),
            "rss": finite(h.RSS),
            "ar2": finite(h.AR2),
            "seconds": seconds,
            **({"held_out": held} if hold_out else {}),
        }))
