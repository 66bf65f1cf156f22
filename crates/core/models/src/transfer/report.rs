//! The tables of a transfer model and its validation: `transfer_coefficients` (the model fitted
//! on every launch), `predictions` (held-out rows), `transfer_scores` (one row per scheme and
//! method), the printed `report` and the figures.

use std::sync::Arc;

use arrow_array::{BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_tables::report::ReportCell;
use yosoku_tables::rows::{Prediction as Row, PredictionsBuilder, error_pct};
use yosoku_tables::{Figure, TRANSFER_COEFFICIENTS, TRANSFER_SCORES};

use super::data::Measurements;
use super::gpu::{DEVICE_FEATURES, GpuSpec};
use super::learned::{TransferBase, TransferModel};
use super::schemes::{Method, Scheme, Score, Validation};
use crate::ModelError;

/// The `transfer_coefficients` row of the physics model's log time (see the table's doc).
pub const PHYSICS_OFFSET_TERM: &str = "ln_physics_secs";

/// A published figure shown beside the scores: (row label, mean |error| in %).
pub type Anchor = (String, f64);

/// The `predictions` table: every predicted held-out row, of the learned models only unless
/// `all_methods`. `validation` is the scheme, `held_out` the fold, `flags` what the row's
/// prediction lacks.
pub fn predictions_batch(
    m: &Measurements,
    observations: &crate::counters::Observations<'_>,
    v: &Validation,
    all_methods: bool,
) -> Result<RecordBatch, ModelError> {
    let mut b = PredictionsBuilder::with_capacity(v.predictions.len());
    for p in &v.predictions {
        let (Some(secs), true) = (p.secs, all_methods || p.method.is_learned()) else {
            continue;
        };
        let cell = &m.cells[p.cell];
        let row = cell.row;
        b.append(&Row {
            model: p.method.name(),
            device: &m.gpu_labels[cell.gpu],
            program: &m.kernels[cell.kernel],
            variant: observations.variant.get(row).unwrap_or(""),
            phase: "kernel",
            repetitions: 1,
            predicted_secs: secs,
            measured_secs: Some(cell.secs),
            error_pct: Some(error_pct(secs, cell.secs)),
            flags: p.flag,
            run_id: observations.run_id.get(row),
            model_group: Some(&m.gpu_labels[cell.gpu]),
            validation: Some(p.scheme.name()),
            held_out: Some(&p.fold),
            interval_secs: p.interval,
        });
    }
    Ok(b.finish()?)
}

fn not_predicted(s: &Score) -> Option<String> {
    (!s.not_predicted.is_empty()).then(|| {
        s.not_predicted
            .iter()
            .map(|(why, n)| format!("{why}: {n}"))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The `transfer_coefficients` table: each of `model`'s ridges, a row per device feature.
pub fn coefficients_batch(model: &TransferModel) -> Result<RecordBatch, ModelError> {
    let ridges = [
        (
            "within_architecture",
            model.within_architecture.as_ref(),
            model.within_base,
        ),
        (
            "across_architectures",
            Some(&model.across_architectures),
            model.across_base,
        ),
    ];
    let (mut names, mut terms, mut per_unit, mut per_sd) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (name, ridge, base) in ridges {
        let Some(ridge) = ridge else { continue };
        for (term, (unit, sd)) in DEVICE_FEATURES.iter().zip(ridge.coefficients()) {
            names.push(name);
            terms.push(*term);
            per_unit.push(unit);
            per_sd.push(sd);
        }
        // The physics model's log time: a fixed offset (1) where the ridge corrects it, none
        // (0) where the ridge learned the times themselves.
        let offset = if base == TransferBase::Time { 0.0 } else { 1.0 };
        names.push(name);
        terms.push(PHYSICS_OFFSET_TERM);
        per_unit.push(offset);
        per_sd.push(offset);
    }
    let batch = RecordBatch::try_new(
        TRANSFER_COEFFICIENTS.schema(),
        vec![
            Arc::new(StringArray::from(names)),
            Arc::new(StringArray::from(terms)),
            Arc::new(Float64Array::from(per_unit)),
            Arc::new(Float64Array::from(per_sd)),
        ],
    )
    .map_err(|e| ModelError::invalid(format!("building `transfer_coefficients`: {e}")))?;
    TRANSFER_COEFFICIENTS
        .check(&batch)
        .map_err(ModelError::built)?;
    Ok(batch)
}

/// The `transfer_scores` table.
pub fn scores_batch(v: &Validation) -> Result<RecordBatch, ModelError> {
    let s = &v.scores;
    let nan_null = |f: &dyn Fn(&Score) -> f64| -> Arc<Float64Array> {
        Arc::new(
            s.iter()
                .map(|x| Some(f(x)).filter(|v| v.is_finite()))
                .collect(),
        )
    };
    let batch = RecordBatch::try_new(
        TRANSFER_SCORES.schema(),
        vec![
            Arc::new(StringArray::from_iter_values(
                s.iter().map(|x| x.scheme.name()),
            )),
            Arc::new(StringArray::from_iter_values(
                s.iter().map(|x| x.method.name()),
            )),
            Arc::new(BooleanArray::from_iter(
                s.iter().map(|x| Some(x.method.is_learned())),
            )),
            Arc::new(Int64Array::from_iter_values(
                s.iter().map(|x| x.rows as i64),
            )),
            Arc::new(Int64Array::from_iter_values(
                s.iter().map(|x| x.predicted as i64),
            )),
            nan_null(&|x| x.mean_abs_error_pct),
            nan_null(&|x| x.median_abs_error_pct),
            nan_null(&|x| x.within_25_pct),
            nan_null(&|x| x.coverage_pct),
            Arc::new(StringArray::from_iter(s.iter().map(not_predicted))),
        ],
    )
    .map_err(|e| ModelError::invalid(format!("building `transfer_scores`: {e}")))?;
    TRANSFER_SCORES.check(&batch).map_err(ModelError::built)?;
    Ok(batch)
}

/// The printed table (schemes and methods by rows, the measures by columns, the anchors below)
/// and the figures `<scheme>.<method>: <measure>`; the learned models' are headlines.
pub fn report(
    m: &Measurements,
    v: &Validation,
    anchors: &[Anchor],
) -> (Vec<ReportCell>, Vec<Figure>) {
    let title = format!(
        "Held-out GPUs and kernels: {} kernels on {} GPUs, |error| and 95 % interval coverage",
        m.kernels.len(),
        m.gpus.len()
    );
    let mut cells = Vec::new();
    let mut figures = Vec::new();
    for s in &v.scores {
        let row = format!("{} / {}", s.scheme.name(), s.method.name());
        let measures = [
            ("median |error|", s.median_abs_error_pct),
            ("mean |error|", s.mean_abs_error_pct),
            ("within 25 %", s.within_25_pct),
            ("interval coverage", s.coverage_pct),
            ("median signed error", s.median_signed_error_pct),
            (
                "median |error| with one factor removed",
                s.one_factor_error_pct,
            ),
        ];
        for (column, value) in measures {
            cells.push(ReportCell::number(&title, &row, column, value, "%"));
            if value.is_finite() {
                let name = format!("{}.{}: {column}", s.scheme.name(), s.method.name());
                let figure = Figure::new(name, value, "%");
                // The bias figures say what limits a method; the error figures are its headline.
                let bias = column.starts_with("median signed") || column.contains("one factor");
                figures.push(if s.method.is_learned() && !bias {
                    figure.headline()
                } else {
                    figure
                });
            }
        }
        cells.push(ReportCell::text(
            &title,
            &row,
            "predicted",
            format!("{} of {}", s.predicted, s.rows),
        ));
        if let Some(why) = not_predicted(s) {
            cells.push(ReportCell::text(&title, &row, "not predicted", why));
        }
    }
    for (label, value) in anchors {
        let row = format!("published: {label}");
        cells.push(ReportCell::number(
            &title,
            &row,
            "mean |error|",
            *value,
            "%",
        ));
    }
    for note in &m.left_out {
        cells.push(ReportCell::text(&title, "left out", "not predicted", note));
    }
    by_duration(m, v, &mut cells, &mut figures);
    (cells, figures)
}

/// Each scheme's and method's errors by the launch's measured duration (the bands of
/// [`super::split::DURATION_BANDS`]): a second printed table, and figures
/// `<scheme>.<method>, <band>: median |error|`.
fn by_duration(
    m: &Measurements,
    v: &Validation,
    cells: &mut Vec<ReportCell>,
    figures: &mut Vec<Figure>,
) {
    let title =
        "Held-out GPUs and kernels by measured duration: median / mean |error| % (launches)";
    let mut errors: std::collections::HashMap<(Scheme, Method), [Vec<f64>; 3]> = Default::default();
    for p in &v.predictions {
        let (Some(secs), measured) = (p.secs, m.cells[p.cell].secs) else {
            continue;
        };
        let Some(band) = super::split::DURATION_BANDS
            .iter()
            .position(|(_, from, to)| measured >= *from && measured < *to)
        else {
            continue;
        };
        errors.entry((p.scheme, p.method)).or_default()[band]
            .push(100.0 * (secs - measured).abs() / measured);
    }
    for s in &v.scores {
        let Some(bands) = errors.get_mut(&(s.scheme, s.method)) else {
            continue;
        };
        let row = format!("{} / {}", s.scheme.name(), s.method.name());
        for ((band, ..), e) in super::split::DURATION_BANDS.iter().zip(bands.iter_mut()) {
            if e.is_empty() {
                continue;
            }
            let mean = e.iter().sum::<f64>() / e.len() as f64;
            let median = crate::median(e);
            cells.push(ReportCell::text(
                title,
                &row,
                *band,
                format!("{median:.1} / {mean:.1} ({})", e.len()),
            ));
            figures.push(Figure::new(
                format!(
                    "{}.{}, {band}: median |error|",
                    s.scheme.name(),
                    s.method.name()
                ),
                median,
                "%",
            ));
        }
    }
}

/// How the profile's GPU and the target of a `yosoku predict` question stand to the training
/// GPUs' architectures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architectures {
    /// Both of one architecture, which training GPUs have.
    SameTrained,
    /// Both of one architecture, which no training GPU has (an H100 and an H200 with a model of
    /// Kepler and Maxwell GPUs).
    SameUntrained,
    /// Two architectures.
    Different,
}

impl Architectures {
    /// How a question from `source` to `target` stands to the architectures of `training`'s
    /// GPUs.
    pub fn of(source: &GpuSpec, target: &GpuSpec, training: &[GpuSpec]) -> Self {
        if source.architecture != target.architecture {
            Self::Different
        } else if training
            .iter()
            .any(|g| g.architecture == target.architecture)
        {
            Self::SameTrained
        } else {
            Self::SameUntrained
        }
    }
}

/// The schemes a `yosoku predict` question is an instance of: an unseen GPU of the profile GPU's
/// architecture (one training has, or one it lacks), or of another; and, where the profile
/// holds a kernel the training data lacks, an unseen kernel measured on other GPUs.
pub fn question_schemes(architectures: Architectures, unseen_kernel: bool) -> Vec<Scheme> {
    let gpu = match architectures {
        Architectures::SameTrained => Scheme::LeaveOneGpuOut,
        Architectures::SameUntrained => Scheme::LeaveOneArchitectureOut,
        Architectures::Different => Scheme::LeaveOneGpuOutOtherArchitectures,
    };
    if unseen_kernel {
        vec![Scheme::LeaveOneKernelOut, gpu]
    } else {
        vec![gpu]
    }
}

/// The held-out figures that speak for one `yosoku predict` question, from each
/// `transfer_scores` table (by name) of the model's bundle: of each scheme the question is an
/// instance of ([`question_schemes`]), for each method that answers it.
pub fn quoted_scores(
    scores: &[(String, RecordBatch)],
    schemes: &[Scheme],
    methods: &[Method],
) -> Vec<String> {
    use yosoku_tables::access::{float64, utf8};
    use yosoku_tables::col;
    let mut out = Vec::new();
    for (name, batch) in scores {
        let (Ok(v), Ok(m), Ok(median), Ok(mean), Ok(coverage)) = (
            utf8(batch, col::VALIDATION),
            utf8(batch, col::MODEL),
            float64(batch, col::MEDIAN_ABS_ERROR_PCT),
            float64(batch, col::MEAN_ABS_ERROR_PCT),
            float64(batch, col::INTERVAL_COVERAGE_PCT),
        ) else {
            continue;
        };
        for (scheme, method) in schemes
            .iter()
            .flat_map(|s| methods.iter().map(move |m| (s.name(), m.name())))
        {
            if let Some(row) =
                (0..batch.num_rows()).find(|&i| v.value(i) == scheme && m.value(i) == method)
            {
                out.push(format!(
                    "{name}, {scheme}, {method}: median |error| {:.1} %, mean {:.1} %, 95 % intervals covered {:.1} % of held-out rows",
                    median.value(row),
                    mean.value(row),
                    coverage.value(row)
                ));
            }
        }
    }
    out
}
