//! Typed rows of the canonical tables that several crates read and write (`predictions`,
//! `cost_breakdown`), their conversion to and from record batches, and [`Input`], checked column
//! access tagged with the role a batch plays, for errors.
//!
//! The models build these tables, the CLI and the viewer read them back: the codec lives here,
//! in the leaf crate, so that readers need not depend on the models.

use std::sync::Arc;

use arrow_array::builder::{Float64Builder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch};

use crate::access::{self, AccessError, Text, opt_f64};
use crate::text::{DictTextBuilder as Dict, TextKey};
use crate::{COST_BREAKDOWN, PREDICTIONS, TableDef, TableMismatch, col};

/// Why a canonical table could not be read into rows, or built from them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RowsError {
    /// An input is not the table it should be.
    #[error("input `{role}`: {source}")]
    Input {
        role: &'static str,
        source: TableMismatch,
    },
    /// A column could not be read (a bug if the input was checked; reported, never a panic).
    #[error("input `{role}`: {source}")]
    Access {
        role: &'static str,
        source: AccessError,
    },
    /// Rows that do not make a valid table (a bug in the code that made them).
    #[error("internal error building `{}`: {source}", source.table)]
    Build { source: TableMismatch },
}

/// Checks that `batch`, the input playing `role`, is the table `def`.
pub fn check_input(
    role: &'static str,
    def: &TableDef,
    batch: &RecordBatch,
) -> Result<(), RowsError> {
    def.check(batch)
        .map_err(|source| RowsError::Input { role, source })
}

/// A batch checked against its table definition, with column access tagged with the role it
/// plays (`throughputs`, `measured`), so that errors say which input is wrong.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub role: &'static str,
    pub batch: &'a RecordBatch,
}

impl<'a> Input<'a> {
    /// Checks `batch` against `def` and wraps it.
    pub fn new(
        role: &'static str,
        def: &TableDef,
        batch: &'a RecordBatch,
    ) -> Result<Self, RowsError> {
        check_input(role, def, batch)?;
        Ok(Self { role, batch })
    }

    fn wrap<T>(&self, r: Result<T, AccessError>) -> Result<T, RowsError> {
        r.map_err(|source| RowsError::Access {
            role: self.role,
            source,
        })
    }

    pub fn utf8(&self, name: &str) -> Result<Text<'a>, RowsError> {
        self.wrap(access::utf8(self.batch, name))
    }

    pub fn float64(&self, name: &str) -> Result<&'a Float64Array, RowsError> {
        self.wrap(access::float64(self.batch, name))
    }

    pub fn int32(&self, name: &str) -> Result<&'a Int32Array, RowsError> {
        self.wrap(access::int32(self.batch, name))
    }

    pub fn int64(&self, name: &str) -> Result<&'a Int64Array, RowsError> {
        self.wrap(access::int64(self.batch, name))
    }

    pub fn boolean(&self, name: &str) -> Result<&'a BooleanArray, RowsError> {
        self.wrap(access::boolean(self.batch, name))
    }

    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }
}

/// A string column, its buffers sized once (a column of hundreds of thousands of values grown
/// by doubling was copied about twenty times over).
pub(crate) fn strings<T>(rows: &[T], f: impl Fn(&T) -> &str) -> ArrayRef {
    let bytes = rows.iter().map(|r| f(r).len()).sum();
    let mut b = StringBuilder::with_capacity(rows.len(), bytes);
    for r in rows {
        b.append_value(f(r));
    }
    Arc::new(b.finish())
}

/// [`strings`] with nulls.
pub(crate) fn opt_strings<T>(rows: &[T], f: impl Fn(&T) -> Option<&str>) -> ArrayRef {
    let bytes = rows.iter().map(|r| f(r).map_or(0, str::len)).sum();
    let mut b = StringBuilder::with_capacity(rows.len(), bytes);
    for r in rows {
        b.append_option(f(r));
    }
    Arc::new(b.finish())
}

fn floats<T>(rows: &[T], f: impl Fn(&T) -> f64) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(rows.iter().map(f)))
}

pub(crate) fn table_error(source: TableMismatch) -> RowsError {
    RowsError::Build { source }
}

/// One row of `cost_breakdown`.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    pub model: String,
    pub program: String,
    pub variant: String,
    pub component: String,
    pub work: f64,
    pub work_unit: &'static str,
    pub rate: f64,
    pub rate_unit: &'static str,
    pub predicted_secs: f64,
    pub flags: Option<String>,
}

pub fn cost_breakdown_batch(rows: &[CostRow]) -> Result<RecordBatch, RowsError> {
    COST_BREAKDOWN
        .batch(vec![
            strings(rows, |r| &r.model),
            strings(rows, |r| &r.program),
            strings(rows, |r| &r.variant),
            strings(rows, |r| &r.component),
            floats(rows, |r| r.work),
            strings(rows, |r| r.work_unit),
            floats(rows, |r| r.rate),
            strings(rows, |r| r.rate_unit),
            floats(rows, |r| r.predicted_secs),
            opt_strings(rows, |r| r.flags.as_deref()),
        ])
        .map_err(table_error)
}

/// The signed relative error of the `error_pct` columns: 100 x (predicted - measured) / measured.
/// The call path (`variant`) that stands for a whole MPI run: its slowest rank's wall time, phase
/// `total` (`mpi_call_paths`, `mpi_steps_and_ranks`).
pub const WHOLE_RUN: &str = "whole run";

/// The `validation` of a prediction of a configuration and a length beyond every run measured
/// (`mpi_steps_and_ranks`): the models of its parts (`<call path>, per step`, `<call path>,
/// once`) are in the same step's scaling tables.
pub const BEYOND_MEASURED: &str = "beyond_measured";

pub fn error_pct(predicted: f64, measured: f64) -> f64 {
    100.0 * (predicted - measured) / measured
}

/// One prediction. The models that write hundreds of thousands of predictions (a
/// cross-validation) append [`Prediction`]s to a [`PredictionsBuilder`] instead: no row is
/// allocated, every text goes straight into its column.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PredictionRow {
    pub model: String,
    pub device: String,
    pub program: String,
    pub variant: String,
    pub phase: String,
    pub repetitions: i64,
    pub predicted_secs: f64,
    pub measured_secs: Option<f64>,
    pub error_pct: Option<f64>,
    pub flags: Option<String>,
    pub run_id: Option<String>,
    pub model_group: Option<String>,
    pub validation: Option<String>,
    pub held_out: Option<String>,
    /// 95 % prediction interval.
    pub interval_secs: Option<(f64, f64)>,
}

impl PredictionRow {
    /// The row with its texts borrowed, to append to a [`PredictionsBuilder`].
    pub fn as_prediction(&self) -> Prediction<'_> {
        Prediction {
            model: &self.model,
            device: &self.device,
            program: &self.program,
            variant: &self.variant,
            phase: &self.phase,
            repetitions: self.repetitions,
            predicted_secs: self.predicted_secs,
            measured_secs: self.measured_secs,
            error_pct: self.error_pct,
            flags: self.flags.as_deref(),
            run_id: self.run_id.as_deref(),
            model_group: self.model_group.as_deref(),
            validation: self.validation.as_deref(),
            held_out: self.held_out.as_deref(),
            interval_secs: self.interval_secs,
        }
    }
}

/// One row of `predictions` with borrowed texts (the columns of [`PredictionRow`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction<'a> {
    pub model: &'a str,
    pub device: &'a str,
    pub program: &'a str,
    pub variant: &'a str,
    pub phase: &'a str,
    pub repetitions: i64,
    pub predicted_secs: f64,
    pub measured_secs: Option<f64>,
    pub error_pct: Option<f64>,
    pub flags: Option<&'a str>,
    pub run_id: Option<&'a str>,
    pub model_group: Option<&'a str>,
    pub validation: Option<&'a str>,
    pub held_out: Option<&'a str>,
    pub interval_secs: Option<(f64, f64)>,
}

/// The keys of texts many predictions share ([`PredictionsBuilder::shared`]).
#[derive(Debug, Clone, Copy)]
pub struct SharedTexts {
    model: TextKey,
    phase: TextKey,
    model_group: Option<TextKey>,
    validation: Option<TextKey>,
}

/// Builds a `predictions` table column by column, one [`Prediction`] at a time. Its texts are
/// dictionary-encoded (a cross-validation repeats a handful of models, devices and folds over
/// hundreds of thousands of rows), except `run_id`, which differs from row to row.
#[derive(Debug)]
pub struct PredictionsBuilder {
    model: Dict,
    device: Dict,
    program: Dict,
    variant: Dict,
    phase: Dict,
    repetitions: Vec<i64>,
    predicted_secs: Vec<f64>,
    measured_secs: Float64Builder,
    error_pct: Float64Builder,
    flags: Dict,
    run_id: StringBuilder,
    model_group: Dict,
    validation: Dict,
    held_out: Dict,
    interval_low_secs: Float64Builder,
    interval_high_secs: Float64Builder,
}

impl Default for PredictionsBuilder {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl PredictionsBuilder {
    /// A builder with room for `rows` rows (string columns grow as needed).
    pub fn with_capacity(rows: usize) -> Self {
        let text = || Dict::with_capacity(rows);
        Self {
            model: text(),
            device: text(),
            program: text(),
            variant: text(),
            phase: text(),
            repetitions: Vec::with_capacity(rows),
            predicted_secs: Vec::with_capacity(rows),
            measured_secs: Float64Builder::with_capacity(rows),
            error_pct: Float64Builder::with_capacity(rows),
            flags: text(),
            run_id: StringBuilder::with_capacity(rows, 8 * rows),
            model_group: text(),
            validation: text(),
            held_out: text(),
            interval_low_secs: Float64Builder::with_capacity(rows),
            interval_high_secs: Float64Builder::with_capacity(rows),
        }
    }

    /// The keys of the texts that many predictions share: a fitted or validated model's rows
    /// (for [`PredictionsBuilder::append_sharing`]).
    pub fn shared(
        &mut self,
        model: &str,
        phase: &str,
        model_group: Option<&str>,
        validation: Option<&str>,
    ) -> SharedTexts {
        SharedTexts {
            model: self.model.key(model),
            phase: self.phase.key(phase),
            model_group: model_group.map(|g| self.model_group.key(g)),
            validation: validation.map(|v| self.validation.key(v)),
        }
    }

    /// Appends `p` with the model, phase, model group and validation of `shared` (those fields
    /// of `p` are not read): a cross-validation appends hundreds of thousands of rows that share
    /// them, each looked up once.
    pub fn append_sharing(&mut self, shared: SharedTexts, p: &Prediction<'_>) {
        self.model.append_key(shared.model);
        self.phase.append_key(shared.phase);
        match shared.model_group {
            Some(k) => self.model_group.append_key(k),
            None => self.model_group.append_null(),
        }
        match shared.validation {
            Some(k) => self.validation.append_key(k),
            None => self.validation.append_null(),
        }
        self.append_own(p);
    }

    pub fn append(&mut self, p: &Prediction<'_>) {
        self.model.append_value(p.model);
        self.phase.append_value(p.phase);
        self.model_group.append_option(p.model_group);
        self.validation.append_option(p.validation);
        self.append_own(p);
    }

    /// The fields of `p` that are its own (not [`SharedTexts`]).
    fn append_own(&mut self, p: &Prediction<'_>) {
        self.device.append_value(p.device);
        self.program.append_value(p.program);
        self.variant.append_value(p.variant);
        self.repetitions.push(p.repetitions);
        self.predicted_secs.push(p.predicted_secs);
        self.measured_secs.append_option(p.measured_secs);
        self.error_pct.append_option(p.error_pct);
        self.flags.append_option(p.flags);
        self.run_id.append_option(p.run_id);
        self.held_out.append_option(p.held_out);
        self.interval_low_secs
            .append_option(p.interval_secs.map(|i| i.0));
        self.interval_high_secs
            .append_option(p.interval_secs.map(|i| i.1));
    }

    /// Rows appended so far.
    pub fn len(&self) -> usize {
        self.predicted_secs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table, checked against its definition.
    pub fn finish(mut self) -> Result<RecordBatch, RowsError> {
        PREDICTIONS
            .batch(vec![
                self.model.finish(),
                self.device.finish(),
                self.program.finish(),
                self.variant.finish(),
                self.phase.finish(),
                Arc::new(Int64Array::from(self.repetitions)),
                Arc::new(Float64Array::from(self.predicted_secs)),
                Arc::new(self.measured_secs.finish()),
                Arc::new(self.error_pct.finish()),
                self.flags.finish(),
                Arc::new(self.run_id.finish()),
                self.model_group.finish(),
                self.validation.finish(),
                self.held_out.finish(),
                Arc::new(self.interval_low_secs.finish()),
                Arc::new(self.interval_high_secs.finish()),
            ])
            .map_err(table_error)
    }
}

pub fn predictions_batch(rows: &[PredictionRow]) -> Result<RecordBatch, RowsError> {
    let mut b = PredictionsBuilder::with_capacity(rows.len());
    for r in rows {
        b.append(&r.as_prediction());
    }
    b.finish()
}

/// Reads a `predictions` table.
pub fn read_predictions(
    role: &'static str,
    batch: &RecordBatch,
) -> Result<Vec<PredictionRow>, RowsError> {
    let input = Input::new(role, &PREDICTIONS, batch)?;
    let model = input.utf8(col::MODEL)?;
    let device = input.utf8(col::DEVICE)?;
    let program = input.utf8(col::PROGRAM)?;
    let variant = input.utf8(col::VARIANT)?;
    let phase = input.utf8(col::PHASE)?;
    let repetitions = input.int64(col::REPETITIONS)?;
    let predicted = input.float64(col::PREDICTED_SECS)?;
    let measured = input.float64(col::MEASURED_SECS)?;
    let error = input.float64(col::ERROR_PCT)?;
    let flags = input.utf8(col::FLAGS)?;
    let run_id = input.utf8(col::RUN_ID)?;
    let model_group = input.utf8(col::MODEL_GROUP)?;
    let validation = input.utf8(col::VALIDATION)?;
    let held_out = input.utf8(col::HELD_OUT)?;
    let low = input.float64(col::INTERVAL_LOW_SECS)?;
    let high = input.float64(col::INTERVAL_HIGH_SECS)?;
    Ok((0..input.rows())
        .map(|i| PredictionRow {
            model: model.value(i).into(),
            device: device.value(i).into(),
            program: program.value(i).into(),
            variant: variant.value(i).into(),
            phase: phase.value(i).into(),
            repetitions: repetitions.value(i),
            predicted_secs: predicted.value(i),
            measured_secs: opt_f64(measured, i),
            error_pct: opt_f64(error, i),
            flags: flags.get(i).map(Into::into),
            run_id: run_id.get(i).map(Into::into),
            model_group: model_group.get(i).map(Into::into),
            validation: validation.get(i).map(Into::into),
            held_out: held_out.get(i).map(Into::into),
            interval_secs: opt_f64(low, i).zip(opt_f64(high, i)),
        })
        .collect())
}
