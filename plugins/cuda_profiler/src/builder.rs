//! Accumulates what an importer reads into the `runs`, `counters` and `metric_names` tables,
//! mapping names to canonical ones and normalising units on the way.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use yosoku_plugin_sdk::PluginError;
use yosoku_tables::{COUNTERS, METRIC_NAMES, RUNS};

use crate::metrics::mapping;
use crate::units::{Prefixes, normalise};

/// Identity of one run (a kernel launch, a trace row, a dataset row).
#[derive(Debug, Clone, PartialEq)]
pub struct RunKey {
    pub run_id: String,
    pub device: String,
    pub program: String,
    pub variant: String,
    pub kernel: Option<String>,
}

/// How one raw name was resolved, and how often it occurred.
#[derive(Debug, Clone)]
struct NameInfo {
    raw: String,
    metric: String,
    kind: Option<&'static str>,
    unit_override: Option<String>,
    canonical_unit: Option<String>,
    occurrences: i64,
}

/// Tables of one imported file.
pub struct Tables {
    tool: &'static str,
    prefixes: Prefixes,
    names: Vec<NameInfo>,
    index: HashMap<String, usize>,
    run_id: StringBuilder,
    run_device: StringBuilder,
    run_program: StringBuilder,
    run_variant: StringBuilder,
    run_parameters: StringBuilder,
    run_phase: StringBuilder,
    run_reps: Int64Builder,
    run_secs: Float64Builder,
    c_run_id: StringBuilder,
    c_device: StringBuilder,
    c_program: StringBuilder,
    c_variant: StringBuilder,
    c_kernel: StringBuilder,
    c_metric: StringBuilder,
    c_raw: StringBuilder,
    c_value: Float64Builder,
    c_unit: StringBuilder,
    c_kind: StringBuilder,
    runs: usize,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables")
            .field("tool", &self.tool)
            .field("runs", &self.runs)
            .field("names", &self.names.len())
            .finish_non_exhaustive()
    }
}

impl Tables {
    pub fn new(tool: &'static str, prefixes: Prefixes) -> Self {
        Self {
            tool,
            prefixes,
            names: Vec::new(),
            index: HashMap::new(),
            run_id: StringBuilder::new(),
            run_device: StringBuilder::new(),
            run_program: StringBuilder::new(),
            run_variant: StringBuilder::new(),
            run_parameters: StringBuilder::new(),
            run_phase: StringBuilder::new(),
            run_reps: Int64Builder::new(),
            run_secs: Float64Builder::new(),
            c_run_id: StringBuilder::new(),
            c_device: StringBuilder::new(),
            c_program: StringBuilder::new(),
            c_variant: StringBuilder::new(),
            c_kernel: StringBuilder::new(),
            c_metric: StringBuilder::new(),
            c_raw: StringBuilder::new(),
            c_value: Float64Builder::new(),
            c_unit: StringBuilder::new(),
            c_kind: StringBuilder::new(),
            runs: 0,
        }
    }

    /// A measured run: `seconds` of `phase` (`kernel` for a launch, `transfer` for a copy).
    pub fn add_run(&mut self, key: &RunKey, parameters: Option<&str>, phase: &str, seconds: f64) {
        self.run_id.append_value(&key.run_id);
        self.run_device.append_value(&key.device);
        self.run_program.append_value(&key.program);
        self.run_variant.append_value(&key.variant);
        self.run_parameters.append_option(parameters);
        self.run_phase.append_value(phase);
        self.run_reps.append_value(1);
        self.run_secs.append_value(seconds);
        self.runs += 1;
    }

    fn name_index(&mut self, raw: &str) -> usize {
        if let Some(&i) = self.index.get(raw) {
            return i;
        }
        let canonical = mapping().lookup(self.tool, raw);
        let info = NameInfo {
            raw: raw.to_owned(),
            metric: canonical.map_or_else(|| raw.to_owned(), |c| c.name.clone()),
            kind: canonical.map(|c| c.kind),
            unit_override: canonical.and_then(|c| c.unit.clone()),
            canonical_unit: None,
            occurrences: 0,
        };
        self.names.push(info);
        self.index.insert(raw.to_owned(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The canonical metric name and kind a raw name maps to.
    pub fn canonical(&mut self, raw: &str) -> (String, Option<&'static str>) {
        let i = self.name_index(raw);
        (self.names[i].metric.clone(), self.names[i].kind)
    }

    /// One counter value of a run, in the unit the file gives (the mapping's unit when the file
    /// gives none).
    pub fn add_counter(&mut self, key: &RunKey, raw: &str, value: f64, unit: &str) {
        let i = self.name_index(raw);
        let info = &mut self.names[i];
        let unit = info
            .unit_override
            .as_deref()
            .filter(|_| unit.is_empty())
            .unwrap_or(unit);
        let q = normalise(value, unit, self.prefixes);
        info.occurrences += 1;
        info.canonical_unit.get_or_insert_with(|| q.unit.clone());
        self.c_run_id.append_value(&key.run_id);
        self.c_device.append_value(&key.device);
        self.c_program.append_value(&key.program);
        self.c_variant.append_value(&key.variant);
        self.c_kernel.append_option(key.kernel.as_deref());
        self.c_metric.append_value(&info.metric);
        self.c_raw.append_value(raw);
        self.c_value.append_value(q.value);
        self.c_unit.append_value(&q.unit);
        self.c_kind.append_option(info.kind);
    }

    pub fn runs(&self) -> usize {
        self.runs
    }

    /// The tables: `runs` (when there were runs), `counters`, `metric_names`.
    pub fn finish(mut self) -> Result<Vec<(String, RecordBatch)>, PluginError> {
        let mut out = Vec::new();
        if self.runs > 0 {
            let runs = RUNS.batch(vec![
                Arc::new(self.run_id.finish()) as ArrayRef,
                Arc::new(self.run_device.finish()),
                Arc::new(self.run_program.finish()),
                Arc::new(self.run_variant.finish()),
                Arc::new(self.run_parameters.finish()),
                Arc::new(self.run_phase.finish()),
                Arc::new(self.run_reps.finish()),
                Arc::new(self.run_secs.finish()),
            ])?;
            out.push(("runs".to_owned(), runs));
        }
        let counters = COUNTERS.batch(vec![
            Arc::new(self.c_run_id.finish()) as ArrayRef,
            Arc::new(self.c_device.finish()),
            Arc::new(self.c_program.finish()),
            Arc::new(self.c_variant.finish()),
            Arc::new(self.c_kernel.finish()),
            Arc::new(self.c_metric.finish()),
            Arc::new(self.c_raw.finish()),
            Arc::new(self.c_value.finish()),
            Arc::new(self.c_unit.finish()),
            Arc::new(self.c_kind.finish()),
        ])?;
        out.push(("counters".to_owned(), counters));

        let mut tool = StringBuilder::new();
        let mut raw = StringBuilder::new();
        let mut metric = StringBuilder::new();
        let mut kind = StringBuilder::new();
        let mut unit = StringBuilder::new();
        let mut mapped = BooleanBuilder::new();
        let mut occurrences = Int64Builder::new();
        for n in self.names.iter().filter(|n| n.occurrences > 0) {
            tool.append_value(self.tool);
            raw.append_value(&n.raw);
            metric.append_value(&n.metric);
            kind.append_option(n.kind);
            unit.append_value(n.canonical_unit.as_deref().unwrap_or(""));
            mapped.append_value(n.kind.is_some());
            occurrences.append_value(n.occurrences);
        }
        let names = METRIC_NAMES.batch(vec![
            Arc::new(tool.finish()) as ArrayRef,
            Arc::new(raw.finish()),
            Arc::new(metric.finish()),
            Arc::new(kind.finish()),
            Arc::new(unit.finish()),
            Arc::new(mapped.finish()),
            Arc::new(occurrences.finish()),
        ])?;
        out.push(("metric_names".to_owned(), names));
        Ok(out)
    }
}
