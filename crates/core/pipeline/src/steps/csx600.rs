//! The ClearSpeed CSX600 steps (docs/methods.md, section 5): operation counts scaled to the chip,
//! compute time from op counts and throughputs, transfer time from bandwidth curves, and the
//! double-buffering balance.

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::csx600::{self, CSX600_PE_COUNT, CSX600_VECTOR_WIDTH, Fitted};
use yosoku_tables::rows::RowsError;
use yosoku_tables::{
    COST_BREAKDOWN, CSX600_OP_COUNTS, DOUBLE_BUFFER_BALANCE, Figure, PREDICTIONS, col,
};

use super::figures::{name_of, output, prediction_figures};
use super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const SCALE_COUNTS: StepKind = StepKind::new::<ScaleCounts>(
    "csx600_scale_counts",
    Stage::Normalize,
    "issued instruction counts to chip-wide operations",
);
pub(crate) const OP_COUNT: StepKind = StepKind::new::<OpCount>(
    "csx600_op_count",
    Stage::Fit,
    "compute time = operations / throughput (Nishikawa et al., Table 4)",
);
pub(crate) const TRANSFER: StepKind = StepKind::new::<Transfer>(
    "csx600_transfer",
    Stage::Fit,
    "transfer time from bandwidth curves (eq. 1-2, Table 5)",
);
pub(crate) const DOUBLE_BUFFER: StepKind = StepKind::new::<DoubleBuffer>(
    "csx600_double_buffer",
    Stage::Fit,
    "the double-buffering match point (eq. 3-4)",
);

fn default_pe_count() -> u32 {
    CSX600_PE_COUNT
}

fn default_vector_width() -> u32 {
    CSX600_VECTOR_WIDTH
}

fn default_path() -> String {
    "mono_to_poly".to_owned()
}

/// `csx600_scale_counts`: issued instruction counts to chip-wide operations (x PEs for poly,
/// x vector width for vector instructions).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleCounts {
    /// A `csx600_op_counts` table.
    pub counts: TableRef,
    #[serde(default = "default_pe_count")]
    pub pe_count: u32,
    #[serde(default = "default_vector_width")]
    pub vector_width: u32,
}

impl StepParams for ScaleCounts {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        for (key, value) in [
            ("pe_count", self.pe_count),
            ("vector_width", self.vector_width),
        ] {
            if value == 0 {
                return Err(ParamError::new(key, format!("`{key}` must be at least 1")));
            }
        }
        Ok(self)
    }
}

impl Step for ScaleCounts {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.counts]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&CSX600_OP_COUNTS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let scaled =
            csx600::scale_counts(cx.input(&self.counts)?, self.pe_count, self.vector_width)?;
        let figures = operation_totals(&scaled)?;
        Ok(StepOutput::new()
            .table(&CSX600_OP_COUNTS, scaled)
            .figures(figures))
    }
}

/// `csx600_op_count`: compute time = operations / throughput (Table 4).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCount {
    /// A `csx600_op_throughputs` table.
    pub throughputs: TableRef,
    /// A `csx600_op_counts` table in chip-wide operations.
    pub counts: TableRef,
    /// Which device's throughputs to use, when the table has several.
    pub device: Option<String>,
}

impl StepParams for OpCount {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for OpCount {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.throughputs, &self.counts]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&COST_BREAKDOWN, &PREDICTIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let rates = cx.input_on(&self.throughputs, self.device.as_deref())?;
        let result = csx600::op_count_model(cx.id, &rates, cx.input(&self.counts)?)?;
        Ok(fitted(result)?)
    }
}

/// `csx600_transfer`: transfer time from bandwidth curves (eq. 1-2, Table 5).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// A `bandwidth_curves` table.
    pub curves: TableRef,
    /// A `csx600_transfer_counts` table.
    pub transfers: TableRef,
    pub device: Option<String>,
}

impl StepParams for Transfer {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for Transfer {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.curves, &self.transfers]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&COST_BREAKDOWN, &PREDICTIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let curves = cx.input_on(&self.curves, self.device.as_deref())?;
        let result = csx600::transfer_model(cx.id, &curves, cx.input(&self.transfers)?)?;
        Ok(fitted(result)?)
    }
}

/// `csx600_double_buffer`: the double-buffering match point (eq. 3-4).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleBuffer {
    pub throughputs: TableRef,
    /// The op mix: a `csx600_op_counts` table.
    pub counts: TableRef,
    pub curves: TableRef,
    /// S, the heap of one PE in bytes.
    pub heap_bytes: f64,
    #[serde(default = "default_path")]
    pub path: String,
    /// d_i, the sizes of the transfers that fill a buffer concurrently.
    pub transfer_sizes_bytes: Vec<f64>,
    pub device: Option<String>,
}

impl StepParams for DoubleBuffer {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if !(self.heap_bytes.is_finite() && self.heap_bytes > 0.0) {
            return Err(ParamError::new(
                "heap_bytes",
                format!("`heap_bytes` must be > 0, found {}", self.heap_bytes),
            ));
        }
        if self.transfer_sizes_bytes.is_empty() {
            return Err(ParamError::new(
                "transfer_sizes_bytes",
                "`transfer_sizes_bytes` is empty: give the size of each concurrent transfer",
            ));
        }
        if let Some(bad) = self
            .transfer_sizes_bytes
            .iter()
            .find(|d| !(d.is_finite() && **d > 0.0))
        {
            return Err(ParamError::new(
                "transfer_sizes_bytes",
                format!("`transfer_sizes_bytes`: every size must be > 0, found {bad}"),
            ));
        }
        Ok(self)
    }
}

impl Step for DoubleBuffer {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.throughputs, &self.counts, &self.curves]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&DOUBLE_BUFFER_BALANCE])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let params = csx600::DoubleBuffer {
            heap_bytes: self.heap_bytes,
            path: self.path.clone(),
            transfer_sizes_bytes: self.transfer_sizes_bytes.clone(),
        };
        let device = self.device.as_deref();
        let balance = csx600::double_buffer_balance(
            cx.id,
            &cx.input_on(&self.throughputs, device)?,
            cx.input(&self.counts)?,
            &cx.input_on(&self.curves, device)?,
            &params,
        )?;
        let figures = balance_figures(&balance)?;
        Ok(StepOutput::new()
            .table(&DOUBLE_BUFFER_BALANCE, balance)
            .figures(figures))
    }
}

fn fitted(fitted: Fitted) -> Result<StepOutput, RowsError> {
    let figures = prediction_figures(&fitted.predictions)?;
    Ok(StepOutput::new()
        .table(&COST_BREAKDOWN, fitted.cost_breakdown)
        .table(&PREDICTIONS, fitted.predictions)
        .figures(figures))
}

/// Total operations per (program, variant).
fn operation_totals(counts: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let counts = output(counts);
    let program = counts.utf8(col::PROGRAM)?;
    let variant = counts.utf8(col::VARIANT)?;
    let count = counts.float64(col::COUNT)?;
    let mut figures: Vec<Figure> = Vec::new();
    for i in 0..counts.rows() {
        let name = format!(
            "{}: operations",
            name_of(program.value(i), variant.value(i))
        );
        match figures.iter_mut().find(|f| f.name == name) {
            Some(f) => f.value += count.value(i),
            None => figures.push(Figure::new(name, count.value(i), "ops")),
        }
    }
    Ok(figures)
}

fn balance_figures(balance: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let balance = output(balance);
    let program = balance.utf8(col::PROGRAM)?;
    let variant = balance.utf8(col::VARIANT)?;
    let component = balance.utf8(col::COMPONENT)?;
    let window = balance.float64(col::WINDOW_SECS)?;
    let ops = balance.float64(col::OPS_PER_WINDOW)?;
    let mut figures = Vec::new();
    for i in 0..balance.rows() {
        let who = name_of(program.value(i), variant.value(i));
        if i == 0
            || program.value(i) != program.value(i - 1)
            || variant.value(i) != variant.value(i - 1)
        {
            figures.push(
                Figure::new(format!("{who}: transfer window"), window.value(i), "s").headline(),
            );
        }
        figures.push(
            Figure::new(
                format!("{who}: {} per window", component.value(i)),
                ops.value(i),
                "ops",
            )
            .headline(),
        );
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use arrow_array::{Int64Array, RecordBatch};
    use std::sync::Arc;
    use yosoku_tables::{CSX600_OP_COUNTS, CSX600_OP_THROUGHPUTS};

    use super::super::testing::{b, f, opt_s, parse_error, run_error, run_steps, s};

    /// Throughputs of poly double add (1e9 ops/s) and vector double mul (4e9 ops/s).
    fn throughputs() -> RecordBatch {
        CSX600_OP_THROUGHPUTS
            .batch(vec![
                s(&["csx", "csx"]),
                s(&["poly", "poly"]),
                b(&[false, true]),
                s(&["double", "double"]),
                s(&["add", "mul"]),
                opt_s(&[None, None]),
                f(&[1e9, 4e9]),
                Arc::new(Int64Array::from(vec![None, None])),
            ])
            .unwrap()
    }

    /// Issued instructions of program `p`: `adds` poly adds and `muls` vector muls.
    fn counts(adds: f64, muls: f64, extra_div: bool) -> RecordBatch {
        let mut rows = vec![("add", false, adds), ("mul", true, muls)];
        if extra_div {
            rows.push(("div", false, 1.0));
        }
        let n = rows.len();
        CSX600_OP_COUNTS
            .batch(vec![
                s(&vec!["p"; n]),
                s(&vec!["a"; n]),
                s(&vec!["poly"; n]),
                b(&rows.iter().map(|r| r.1).collect::<Vec<_>>()),
                s(&vec!["double"; n]),
                s(&rows.iter().map(|r| r.0).collect::<Vec<_>>()),
                opt_s(&vec![None; n]),
                f(&rows.iter().map(|r| r.2).collect::<Vec<_>>()),
                s(&vec!["issued"; n]),
            ])
            .unwrap()
    }

    const STEPS: &str = "[[normalize]]\nstep = \"csx600_scale_counts\"\nid = \"ops\"\ncounts = \"src.csx600_op_counts\"\n\
        [[fit]]\nstep = \"csx600_op_count\"\nid = \"opcount\"\nthroughputs = \"src.csx600_op_throughputs\"\ncounts = \"ops.csx600_op_counts\"";

    #[test]
    fn operations_over_throughputs_give_the_compute_time() {
        let set = run_steps(
            STEPS,
            vec![
                ("csx600_op_throughputs", throughputs()),
                ("csx600_op_counts", counts(1e7, 1e7, false)),
            ],
        )
        .unwrap();
        let predictions =
            yosoku_tables::rows::read_predictions("p", set.get("opcount.predictions").unwrap())
                .unwrap();
        // 1e7 x 96 PEs / 1e9 + 1e7 x 96 x 4 lanes / 4e9.
        let total: f64 = predictions.iter().map(|p| p.predicted_secs).sum();
        assert!((total - (0.96 + 0.96)).abs() < 1e-12, "{predictions:?}");
    }

    #[test]
    fn an_operation_without_a_throughput_is_named() {
        let e = run_error(
            STEPS,
            vec![
                ("csx600_op_throughputs", throughputs()),
                ("csx600_op_counts", counts(1e7, 1e7, true)),
            ],
        );
        assert!(
            e.contains(
                "step `opcount` (csx600_op_count): no throughput for `poly scalar double div`"
            ),
            "{e}"
        );
    }

    #[test]
    fn parameters_are_checked_when_the_file_is_parsed() {
        let e = parse_error(
            "normalize",
            "step = \"csx600_scale_counts\"\nid = \"s\"\ncounts = \"src.csx600_op_counts\"\npe_count = 0",
        );
        assert_eq!(
            e,
            "p.toml:8:12: key `pe_count`: `pe_count` must be at least 1"
        );
        let e = parse_error(
            "fit",
            "step = \"csx600_double_buffer\"\nid = \"b\"\nthroughputs = \"src.a\"\ncounts = \"src.b\"\ncurves = \"src.c\"\nheap_bytes = 6144\ntransfer_sizes_bytes = [64, -8]",
        );
        assert_eq!(
            e,
            "p.toml:11:24: key `transfer_sizes_bytes`: `transfer_sizes_bytes`: every size must be > 0, found -8"
        );
    }
}
