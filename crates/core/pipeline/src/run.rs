//! Running the steps of a pipeline over a set of named tables. No I/O, no clock: the caller
//! collects the sources, times the steps and writes the bundle.

use yosoku_devices::Catalogue;

use crate::spec::{Located, Location, PipelineSpec};
use crate::steps::{PipelineStep, StepContext, StepError, StepOutput};
use crate::table_set::TableSet;

/// A step that failed, where it is written: `file:line:column: step `id` (kind): why`. A
/// missing input table is reported at its reference.
#[derive(Debug, thiserror::Error)]
#[error("{origin}:{}:{}: {}", location.line, location.column, self.describe())]
pub struct StepFailure {
    pub origin: String,
    pub location: Location,
    pub step: String,
    pub kind: &'static str,
    pub error: Box<StepError>,
}

impl StepFailure {
    fn describe(&self) -> String {
        match self.error.as_ref() {
            StepError::MissingTable { .. } | StepError::MissingModel { .. } => {
                format!("step `{}`: {}", self.step, self.error)
            }
            e => format!("step `{}` ({}): {e}", self.step, self.kind),
        }
    }
}

/// Runs one step over `tables` (which must hold every table it reads, and the models it uses),
/// with the device catalogue `devices`, and returns what it made, having checked that it made exactly the tables it declares. The
/// caller adds the output to `tables` ([`StepOutput::add_to`]).
pub fn run_step(
    spec: &PipelineSpec,
    step: &Located<PipelineStep>,
    tables: &TableSet,
    devices: &Catalogue,
) -> Result<StepOutput, StepFailure> {
    let fail = |error: StepError| {
        let location = match &error {
            StepError::MissingTable { span, .. } | StepError::MissingModel { span, .. } => {
                spec.locate(span)
            }
            _ => step.location,
        };
        StepFailure {
            origin: spec.origin.clone(),
            location,
            step: step.value.id().to_owned(),
            kind: step.value.kind(),
            error: Box::new(error),
        }
    };
    let cx = StepContext {
        id: step.value.id(),
        tables,
        devices,
    };
    let output = step.value.step.run(&cx).map_err(fail)?;
    let declared = step.value.step.outputs();
    if output.tables.len() != declared.len()
        || output
            .tables
            .iter()
            .zip(&declared)
            .any(|((n, _), d)| n != d)
    {
        return Err(fail(StepError::Outputs {
            declared: declared.iter().map(|d| (*d).to_owned()).collect(),
            produced: output.tables.iter().map(|(n, _)| n.clone()).collect(),
        }));
    }
    Ok(output)
}
