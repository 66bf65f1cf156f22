//! The CSX600 models of Nishikawa et al. (docs/methods.md, section 5).
//!
//! - [`scale_counts`]: issued instructions to chip-wide operations (x PEs for poly, x vector width
//!   for vector instructions): Table 3 from a program's per-PE profile.
//! - [`op_count_model`]: compute time = sum of operations / throughput (Table 4).
//! - [`transfer_model`]: transfer time = sum of count x t(d) over the data paths, t(d) from
//!   measured bandwidth curves (eq. 1-2, Table 5).
//! - [`double_buffer_balance`]: how many operations must run per transfer window for double
//!   buffering to hide the transfers (eq. 3-4).
//! - the bandwidth curves b(d) and the time of one transfer of size d: [`crate::curve`], which
//!   the GPU physics reads for a calibration's copy curve too.

#[cfg(test)]
mod properties;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use yosoku_tables::csx600::OpKey;
use yosoku_tables::{
    BANDWIDTH_CURVES, CSX600_OP_COUNTS, CSX600_OP_THROUGHPUTS, CSX600_TRANSFER_COUNTS,
    DOUBLE_BUFFER_BALANCE, col,
};

use crate::curve::BandwidthCurve;
use crate::{Input, ModelError, distinct, join_flags};
use yosoku_tables::rows::{CostRow, PredictionRow, cost_breakdown_batch, predictions_batch};

/// The CSX600's 96 processing elements.
pub const CSX600_PE_COUNT: u32 = 96;
/// Operations per vector instruction.
pub const CSX600_VECTOR_WIDTH: u32 = 4;

/// Flag of a row computed from an illustrative (not measured) bandwidth curve.
pub const FLAG_ILLUSTRATIVE: &str = "illustrative_curve";
/// Flag of a transfer size outside the sizes the curve was measured at.
pub const FLAG_EXTRAPOLATED: &str = "extrapolated";

/// A model's output: per-component costs and per-run totals.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub cost_breakdown: RecordBatch,
    pub predictions: RecordBatch,
}

fn op_keys(input: &Input<'_>) -> Result<Vec<OpKey>, ModelError> {
    let unit = input.utf8(col::EXEC_UNIT)?;
    let vector = input.boolean(col::VECTOR)?;
    let dtype = input.utf8(col::DTYPE)?;
    let op = input.utf8(col::OP)?;
    let to = input.utf8(col::DTYPE_TO)?;
    Ok((0..input.rows())
        .map(|i| OpKey {
            exec_unit: unit.value(i).to_owned(),
            vector: vector.value(i),
            dtype: dtype.value(i).to_owned(),
            op: op.value(i).to_owned(),
            dtype_to: to.get(i).map(str::to_owned),
        })
        .collect())
}

/// The one device a table is about; several need filtering first.
fn single_device(input: &Input<'_>) -> Result<String, ModelError> {
    let devices = distinct(input.utf8(col::DEVICE)?);
    match devices.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(ModelError::invalid(format!(
            "input `{}` is empty",
            input.role
        ))),
        many => Err(ModelError::invalid(format!(
            "input `{}` holds several devices ({}); select one with the step's `device` key",
            input.role,
            many.join(", ")
        ))),
    }
}

/// Row indices grouped by (program, variant).
type Groups = Vec<((String, String), Vec<usize>)>;

/// Groups row indices by (program, variant), in order of first appearance.
fn by_program_variant(input: &Input<'_>) -> Result<Groups, ModelError> {
    let program = input.utf8(col::PROGRAM)?;
    let variant = input.utf8(col::VARIANT)?;
    let mut groups: Groups = Vec::new();
    for i in 0..input.rows() {
        let key = (program.value(i).to_owned(), variant.value(i).to_owned());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, rows)) => rows.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    Ok(groups)
}

/// Converts `issued` counts to chip-wide `operations`: a poly instruction runs on every one of
/// `pe_count` PEs, a vector instruction does `vector_width` operations. Rows already counted in
/// operations pass unchanged.
pub fn scale_counts(
    counts: &RecordBatch,
    pe_count: u32,
    vector_width: u32,
) -> Result<RecordBatch, ModelError> {
    if pe_count == 0 || vector_width == 0 {
        return Err(ModelError::invalid(format!(
            "pe_count and vector_width must be positive, found {pe_count} and {vector_width}"
        )));
    }
    let input = Input::new("counts", &CSX600_OP_COUNTS, counts)?;
    let keys = op_keys(&input)?;
    let count = input.float64(col::COUNT)?;
    let basis = input.utf8(col::COUNT_BASIS)?;
    let scaled: Float64Array = (0..input.rows())
        .map(|i| {
            let mut c = count.value(i);
            if basis.value(i) == "issued" {
                if keys[i].exec_unit == "poly" {
                    c *= f64::from(pe_count);
                }
                if keys[i].vector {
                    c *= f64::from(vector_width);
                }
            }
            Some(c)
        })
        .collect();
    let mut columns: Vec<ArrayRef> = counts.columns().to_vec();
    let schema = counts.schema();
    let index = |name: &str| {
        schema
            .index_of(name)
            .map_err(|e| ModelError::invalid(e.to_string()))
    };
    columns[index(col::COUNT)?] = Arc::new(scaled);
    columns[index(col::COUNT_BASIS)?] = Arc::new(StringArray::from_iter_values(
        std::iter::repeat_n("operations", input.rows()),
    ));
    RecordBatch::try_new(schema, columns).map_err(|e| ModelError::invalid(e.to_string()))
}

/// Compute time from operation counts and throughputs: each count divided by the throughput of
/// its operation, summed per (program, variant). Counts must be chip-wide `operations`
/// (see [`scale_counts`]); every operation counted must have a throughput.
pub fn op_count_model(
    model: &str,
    throughputs: &RecordBatch,
    counts: &RecordBatch,
) -> Result<Fitted, ModelError> {
    let rates_in = Input::new("throughputs", &CSX600_OP_THROUGHPUTS, throughputs)?;
    let device = single_device(&rates_in)?;
    let rate_values = rates_in.float64(col::THROUGHPUT_OPS_PER_SEC)?;
    let mut rates: BTreeMap<OpKey, f64> = BTreeMap::new();
    for (i, key) in op_keys(&rates_in)?.into_iter().enumerate() {
        if rates.insert(key.clone(), rate_values.value(i)).is_some() {
            return Err(ModelError::invalid(format!(
                "input `throughputs` gives `{key}` twice"
            )));
        }
    }

    let counts_in = Input::new("counts", &CSX600_OP_COUNTS, counts)?;
    let keys = op_keys(&counts_in)?;
    let count = counts_in.float64(col::COUNT)?;
    let basis = counts_in.utf8(col::COUNT_BASIS)?;
    let mut costs = Vec::new();
    let mut predictions = Vec::new();
    for ((program, variant), rows) in by_program_variant(&counts_in)? {
        let mut total = 0.0;
        let mut seen: Vec<&OpKey> = Vec::new();
        for i in rows {
            let key = &keys[i];
            if basis.value(i) != "operations" {
                return Err(ModelError::invalid(format!(
                    "the count of `{key}` for {program} {variant} is `{}` instructions, not chip-wide operations: \
                     add a `csx600_scale_counts` normalize step before the op-count model",
                    basis.value(i)
                )));
            }
            if seen.contains(&key) {
                return Err(ModelError::invalid(format!(
                    "input `counts` gives `{key}` twice for {program} {variant}"
                )));
            }
            seen.push(key);
            let Some(&rate) = rates.get(key) else {
                return Err(ModelError::invalid(format!(
                    "no throughput for `{key}` (counted for {program} {variant}) in input `throughputs`, which has {} operations for {device}",
                    rates.len()
                )));
            };
            let secs = count.value(i) / rate;
            total += secs;
            costs.push(CostRow {
                model: model.to_owned(),
                program: program.clone(),
                variant: variant.clone(),
                component: key.label(),
                work: count.value(i),
                work_unit: "ops",
                rate,
                rate_unit: "ops/s",
                predicted_secs: secs,
                flags: None,
            });
        }
        predictions.push(PredictionRow {
            model: model.into(),
            device: device.clone(),
            program,
            variant,
            phase: "compute".into(),
            repetitions: 1,
            predicted_secs: total,
            measured_secs: None,
            error_pct: None,
            flags: None,
            ..Default::default()
        });
    }
    Ok(Fitted {
        cost_breakdown: cost_breakdown_batch(&costs)?,
        predictions: predictions_batch(&predictions)?,
    })
}

/// The bandwidth curves of a table, by path, with whether any point is illustrative.
fn curves_by_path(
    input: &Input<'_>,
) -> Result<BTreeMap<String, (BandwidthCurve, bool)>, ModelError> {
    let path = input.utf8(col::PATH)?;
    let size = input.int64(col::SIZE_BYTES)?;
    let bandwidth = input.float64(col::BANDWIDTH_BYTES_PER_SEC)?;
    let provenance = input.utf8(col::PROVENANCE)?;
    let mut points: BTreeMap<String, (Vec<(f64, f64)>, bool)> = BTreeMap::new();
    for i in 0..input.rows() {
        let entry = points.entry(path.value(i).to_owned()).or_default();
        entry.0.push((size.value(i) as f64, bandwidth.value(i)));
        entry.1 |= provenance.value(i) == "illustrative";
    }
    points
        .into_iter()
        .map(|(p, (pts, illustrative))| {
            let curve = BandwidthCurve::new(pts).map_err(|e| {
                ModelError::invalid(format!("input `{}`, path {p}: {e}", input.role))
            })?;
            Ok((p, (curve, illustrative)))
        })
        .collect()
}

/// Transfer time from transfer counts and bandwidth curves: for every (path, size) row,
/// count x t(size) with t from the path's curve; summed per (program, variant). Rows computed
/// from an illustrative curve or outside its measured sizes are flagged.
pub fn transfer_model(
    model: &str,
    curves: &RecordBatch,
    transfers: &RecordBatch,
) -> Result<Fitted, ModelError> {
    let curves_in = Input::new("curves", &BANDWIDTH_CURVES, curves)?;
    let device = single_device(&curves_in)?;
    let curves = curves_by_path(&curves_in)?;

    let transfers_in = Input::new("transfers", &CSX600_TRANSFER_COUNTS, transfers)?;
    let path = transfers_in.utf8(col::PATH)?;
    let count = transfers_in.int64(col::TRANSFER_COUNT)?;
    let size = transfers_in.int64(col::SIZE_BYTES)?;
    let mut costs = Vec::new();
    let mut predictions = Vec::new();
    for ((program, variant), rows) in by_program_variant(&transfers_in)? {
        let mut total = 0.0;
        let mut all_flags = Vec::new();
        for i in rows {
            let p = path.value(i);
            let Some((curve, illustrative)) = curves.get(p) else {
                return Err(ModelError::invalid(format!(
                    "no bandwidth curve for path {p} (transferred by {program} {variant}) in input `curves`, which has: {}",
                    curves.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            };
            let d = size.value(i) as f64;
            let n = count.value(i) as f64;
            let t = curve.transfer_time(d);
            let secs = n * t.secs;
            let mut flags = Vec::new();
            if *illustrative {
                flags.push(FLAG_ILLUSTRATIVE.to_owned());
            }
            if t.extrapolated {
                flags.push(FLAG_EXTRAPOLATED.to_owned());
            }
            all_flags.extend(flags.iter().cloned());
            total += secs;
            costs.push(CostRow {
                model: model.to_owned(),
                program: program.clone(),
                variant: variant.clone(),
                component: format!("{p} {} B", size.value(i)),
                work: n * d,
                work_unit: "bytes",
                rate: d / t.secs,
                rate_unit: "bytes/s",
                predicted_secs: secs,
                flags: join_flags(&flags),
            });
        }
        predictions.push(PredictionRow {
            model: model.into(),
            device: device.clone(),
            program,
            variant,
            phase: "transfer".into(),
            repetitions: 1,
            predicted_secs: total,
            measured_secs: None,
            error_pct: None,
            flags: join_flags(&all_flags),
            ..Default::default()
        });
    }
    Ok(Fitted {
        cost_breakdown: cost_breakdown_batch(&costs)?,
        predictions: predictions_batch(&predictions)?,
    })
}

/// Parameters of the double-buffering balance.
#[derive(Debug, Clone, PartialEq)]
pub struct DoubleBuffer {
    /// S: the heap of one PE; half of it is the buffer being transferred.
    pub heap_bytes: f64,
    /// The data path that fills the buffers.
    pub path: String,
    /// d_i: the sizes of the transfers that fill a buffer concurrently (one for a single stream).
    pub transfer_sizes_bytes: Vec<f64>,
}

/// The double-buffering match point (eq. 3-4 as docs/methods.md, section 5, restates them):
/// T_trans = S / (2 sum_i b(d_i)), and per operation i of the program's mix
/// A_i = (a_i P_i / sum_j a_j) x T_trans, the operations of kind i that must run per window to
/// keep the PEs busy while the other half of the buffer is transferred.
pub fn double_buffer_balance(
    model: &str,
    throughputs: &RecordBatch,
    counts: &RecordBatch,
    curves: &RecordBatch,
    params: &DoubleBuffer,
) -> Result<RecordBatch, ModelError> {
    if !(params.heap_bytes.is_finite() && params.heap_bytes > 0.0) {
        return Err(ModelError::invalid(format!(
            "heap_bytes must be > 0, found {}",
            params.heap_bytes
        )));
    }
    if params.transfer_sizes_bytes.is_empty() {
        return Err(ModelError::invalid("transfer_sizes_bytes is empty"));
    }
    let curves_in = Input::new("curves", &BANDWIDTH_CURVES, curves)?;
    let curves = curves_by_path(&curves_in)?;
    let Some((curve, _)) = curves.get(&params.path) else {
        return Err(ModelError::invalid(format!(
            "no bandwidth curve for path {} in input `curves`",
            params.path
        )));
    };
    let bandwidth_sum: f64 = params
        .transfer_sizes_bytes
        .iter()
        .map(|&d| curve.bandwidth(d).secs)
        .sum();
    let window_secs = params.heap_bytes / (2.0 * bandwidth_sum);

    let rates_in = Input::new("throughputs", &CSX600_OP_THROUGHPUTS, throughputs)?;
    let rate_values = rates_in.float64(col::THROUGHPUT_OPS_PER_SEC)?;
    let rates: BTreeMap<OpKey, f64> = op_keys(&rates_in)?
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, rate_values.value(i)))
        .collect();

    let counts_in = Input::new("counts", &CSX600_OP_COUNTS, counts)?;
    let keys = op_keys(&counts_in)?;
    let count = counts_in.float64(col::COUNT)?;
    let basis = counts_in.utf8(col::COUNT_BASIS)?;
    if let Some(i) = (0..counts_in.rows()).find(|&i| basis.value(i) != "operations") {
        return Err(ModelError::invalid(format!(
            "the op mix must be in chip-wide operations, but `{}` is counted in `{}` instructions: \
             add a `csx600_scale_counts` normalize step first",
            keys[i],
            basis.value(i)
        )));
    }
    let mut out: [Vec<String>; 4] = Default::default();
    let (mut mix, mut rate, mut window, mut ops) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for ((program, variant), rows) in by_program_variant(&counts_in)? {
        let sum: f64 = rows.iter().map(|&i| count.value(i)).sum();
        if sum <= 0.0 {
            return Err(ModelError::invalid(format!(
                "{program} {variant} counts no operations"
            )));
        }
        for i in rows {
            let key = &keys[i];
            let Some(&p) = rates.get(key) else {
                return Err(ModelError::invalid(format!(
                    "no throughput for `{key}` (counted for {program} {variant}) in input `throughputs`"
                )));
            };
            let share = count.value(i) / sum;
            for (column, value) in out.iter_mut().zip([
                model.to_owned(),
                program.clone(),
                variant.clone(),
                key.label(),
            ]) {
                column.push(value);
            }
            mix.push(share);
            rate.push(p);
            window.push(window_secs);
            ops.push(share * p * window_secs);
        }
    }
    let [models, programs, variants, components] = out;
    DOUBLE_BUFFER_BALANCE
        .batch(vec![
            Arc::new(StringArray::from(models)),
            Arc::new(StringArray::from(programs)),
            Arc::new(StringArray::from(variants)),
            Arc::new(StringArray::from(components)),
            Arc::new(Float64Array::from(mix)),
            Arc::new(Float64Array::from(rate)),
            Arc::new(Float64Array::from(window)),
            Arc::new(Float64Array::from(ops)),
        ])
        .map_err(ModelError::built)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::*;

    #[test]
    fn issued_counts_scale_by_pes_and_vector_width() {
        let issued = counts(&[
            ("a", "poly", false, "double", "add", None, 10.0, "issued"),
            ("a", "poly", true, "double", "mul", None, 10.0, "issued"),
            ("a", "mono", false, "int", "add", None, 10.0, "issued"),
            ("a", "poly", true, "double", "mac", None, 7.0, "operations"),
        ]);
        let scaled = scale_counts(&issued, 96, 4).unwrap();
        assert_eq!(floats(&scaled, col::COUNT), [960.0, 3840.0, 10.0, 7.0]);
        assert!(
            strings(&scaled, col::COUNT_BASIS)
                .iter()
                .all(|b| b == "operations")
        );
        assert!(scale_counts(&issued, 0, 4).is_err());
    }

    fn rates() -> RecordBatch {
        throughputs(&[
            ("poly", false, "double", "add", None, 2e9),
            ("poly", true, "double", "mul", None, 8e9),
            ("poly", false, "int", "cast", Some("double"), 1e9),
        ])
    }

    #[test]
    fn compute_time_is_operations_over_throughput() {
        let ops = counts(&[
            ("a", "poly", false, "double", "add", None, 4e9, "operations"),
            ("a", "poly", true, "double", "mul", None, 4e9, "operations"),
            (
                "b",
                "poly",
                false,
                "int",
                "cast",
                Some("double"),
                3e9,
                "operations",
            ),
        ]);
        let fitted = op_count_model("m", &rates(), &ops).unwrap();
        assert_eq!(
            floats(&fitted.cost_breakdown, col::PREDICTED_SECS),
            [2.0, 0.5, 3.0]
        );
        assert_eq!(
            strings(&fitted.cost_breakdown, col::COMPONENT),
            [
                "poly scalar double add",
                "poly vector double mul",
                "poly scalar int->double cast"
            ]
        );
        assert_eq!(floats(&fitted.predictions, col::PREDICTED_SECS), [2.5, 3.0]);
        assert_eq!(strings(&fitted.predictions, col::VARIANT), ["a", "b"]);
        assert_eq!(strings(&fitted.predictions, col::DEVICE), ["csx", "csx"]);
        assert_eq!(
            strings(&fitted.predictions, col::PHASE),
            ["compute", "compute"]
        );
    }

    #[test]
    fn an_operation_without_throughput_is_named() {
        let ops = counts(&[("a", "poly", false, "float", "div", None, 1.0, "operations")]);
        let err = op_count_model("m", &rates(), &ops).unwrap_err().to_string();
        assert_eq!(
            err,
            "no throughput for `poly scalar float div` (counted for p a) in input `throughputs`, which has 3 operations for csx"
        );
    }

    #[test]
    fn issued_counts_are_refused_by_the_model() {
        let ops = counts(&[("a", "poly", false, "double", "add", None, 1.0, "issued")]);
        let err = op_count_model("m", &rates(), &ops).unwrap_err().to_string();
        assert!(
            err.contains("add a `csx600_scale_counts` normalize step"),
            "{err}"
        );
    }

    #[test]
    fn throughputs_of_several_devices_must_be_filtered() {
        let both = arrow_select::concat::concat_batches(
            &rates().schema(),
            &[
                rates(),
                throughputs_on("other", &[("mono", false, "int", "add", None, 1e9)]),
            ],
        )
        .unwrap();
        let ops = counts(&[("a", "poly", false, "double", "add", None, 1.0, "operations")]);
        let err = op_count_model("m", &both, &ops).unwrap_err().to_string();
        assert!(err.contains("holds several devices (csx, other)"), "{err}");
        let one = crate::filter_eq(&both, col::DEVICE, "csx").unwrap();
        assert!(op_count_model("m", &one, &ops).is_ok());
    }

    #[test]
    fn transfer_time_sums_count_times_transfer_time_and_flags_its_inputs() {
        // t(d) = 1 us + d / 100 MB/s on mono_to_poly, measured at 8 and 1024 bytes.
        let b = |d: f64| d / (1e-6 + d / 1e8);
        let curve = curves(&[
            ("mono_to_poly", 8, b(8.0), "measured"),
            ("mono_to_poly", 1024, b(1024.0), "measured"),
            ("swazzle", 8, 8e7, "illustrative"),
        ]);
        let moves = transfers(&[
            ("S", "mono_to_poly", 10, 512),
            ("S", "swazzle", 100, 8),
            ("S", "mono_to_poly", 2, 4096),
        ]);
        let fitted = transfer_model("t", &curve, &moves).unwrap();
        let secs = floats(&fitted.cost_breakdown, col::PREDICTED_SECS);
        let expected = [
            10.0 * (1e-6 + 512.0 / 1e8),
            100.0 * 1e-7,
            2.0 * 4096.0 / b(1024.0),
        ];
        for (s, e) in secs.iter().zip(expected) {
            assert!((s - e).abs() < 1e-15, "{s} vs {e}");
        }
        assert_eq!(
            strings(&fitted.cost_breakdown, col::FLAGS),
            ["-", "illustrative_curve", "extrapolated"]
        );
        assert_eq!(
            floats(&fitted.cost_breakdown, col::WORK),
            [5120.0, 800.0, 8192.0]
        );
        let total = floats(&fitted.predictions, col::PREDICTED_SECS)[0];
        assert!((total - expected.iter().sum::<f64>()).abs() < 1e-15);
        assert_eq!(
            strings(&fitted.predictions, col::FLAGS),
            ["illustrative_curve;extrapolated"]
        );

        let err = transfer_model("t", &curves(&[("swazzle", 8, 1.0, "measured")]), &moves)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "no bandwidth curve for path mono_to_poly (transferred by p S) in input `curves`, which has: swazzle"
        );
    }

    #[test]
    fn double_buffering_follows_equations_3_and_4() {
        let curve = curves(&[
            ("mono_to_poly", 8, 1e8, "measured"),
            ("mono_to_poly", 1024, 1e8, "measured"),
        ]);
        let mix = counts(&[
            ("a", "poly", false, "double", "add", None, 3.0, "operations"),
            ("a", "poly", true, "double", "mul", None, 1.0, "operations"),
        ]);
        let params = DoubleBuffer {
            heap_bytes: 4000.0,
            path: "mono_to_poly".into(),
            transfer_sizes_bytes: vec![512.0, 512.0],
        };
        let balance = double_buffer_balance("db", &rates(), &mix, &curve, &params).unwrap();
        // T = S / (2 (b + b)) = 4000 / 4e8 = 1e-5 s.
        assert_eq!(floats(&balance, col::WINDOW_SECS), [1e-5, 1e-5]);
        assert_eq!(floats(&balance, col::MIX_RATIO), [0.75, 0.25]);
        // A_i = a_i P_i / sum a x T.
        assert_eq!(
            floats(&balance, col::OPS_PER_WINDOW),
            [0.75 * 2e9 * 1e-5, 0.25 * 8e9 * 1e-5]
        );
    }
}
