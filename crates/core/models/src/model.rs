//! What "model" means in yosoku, the same in every family: an object fitted once, in a
//! pipeline's fit stage, on one training table with the user's options; saved into the result
//! bundle as named fields (the training table and its hash, the options, the fitted parameters,
//! the held-out scores of the validation steps that named it); and asked for predictions from
//! what was saved, never refitted to answer.
//!
//! A family implements [`Model`] for the type of its fitted parameters. The bundle's record of a
//! saved model (`yosoku_bundle::ModelRecord`) holds what the trait does not: the training table
//! and its SHA-256, the scores. A validation step refits a family's model without what it holds
//! out (that is what validating means); a command never does.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ModelError;

/// A model family's fitted model: its options, how it is fitted, how it answers, and its saved
/// form (the type itself, serialised with named fields).
pub trait Model: Sized + Serialize + DeserializeOwned {
    /// The kind a bundle records the model as: what a command finds it by.
    const KIND: &'static str;
    /// The options it is fitted with: the user's (a pipeline step's keys), saved beside it.
    type Options: Serialize + DeserializeOwned + Clone + PartialEq + std::fmt::Debug;
    /// What it is fitted on: the training table, read into the family's own form.
    type Training<'a>;
    /// A question it answers, and its answer.
    type Question<'a>;
    type Answer;

    /// Fits the model on all of `training`.
    fn fit(training: Self::Training<'_>, options: &Self::Options) -> Result<Self, ModelError>;

    /// Answers `question` from the fitted parameters alone.
    fn predict(&self, question: Self::Question<'_>) -> Result<Self::Answer, ModelError>;

    /// The saved form: JSON with named fields.
    fn to_json(&self) -> Result<String, ModelError> {
        serde_json::to_string(self).map_err(|e| {
            ModelError::invalid(format!("a {} model could not be saved: {e}", Self::KIND))
        })
    }

    /// The model read back from its saved form, and checked ([`Model::check_saved`]).
    fn from_json(text: &str) -> Result<Self, ModelError> {
        let model: Self = serde_json::from_str(text).map_err(|e| {
            ModelError::invalid(format!(
                "the saved {} model is not one this yosoku reads (line {}, column {}): {e}",
                Self::KIND,
                e.line(),
                e.column()
            ))
        })?;
        model
            .check_saved()
            .map_err(|why| ModelError::invalid(format!("the saved {} model: {why}", Self::KIND)))?;
        Ok(model)
    }

    /// What a model read back must hold beyond its fields' types before it answers: each list
    /// as long as the features it weighs, every number finite, each calibration list sorted
    /// (what the fit always writes). A bundle's hashes say only that a file is the one saved; a
    /// file changed with them, or written by hand, is refused here, naming the key
    /// (`` key `transfer.across_architectures.scale`: ... ``).
    fn check_saved(&self) -> Result<(), String> {
        Ok(())
    }

    /// The options as the bundle records them, by name.
    fn options_record(
        options: &Self::Options,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ModelError> {
        match serde_json::to_value(options) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            Ok(other) => Err(ModelError::invalid(format!(
                "the options of a {} model are not named fields: {other}",
                Self::KIND
            ))),
            Err(e) => Err(ModelError::invalid(format!(
                "the options of a {} model could not be saved: {e}",
                Self::KIND
            ))),
        }
    }

    /// The options read back from the bundle's record.
    fn options_from_record(
        record: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self::Options, ModelError> {
        serde_json::from_value(serde_json::Value::Object(record.clone())).map_err(|e| {
            ModelError::invalid(format!("the saved options of a {} model: {e}", Self::KIND))
        })
    }
}
