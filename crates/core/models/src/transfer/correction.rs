//! A learned correction on top of the physics model, that must earn its place (docs/methods.md,
//! section 6, "Physics first"): per operator family (group), a ridge regression of the log of
//! measured over physics time on the features that say how a launch sits on a GPU (those of the
//! latency-aware model, [`waves_roofline`]), fitted on the training GPUs' launches. The
//! regression's slopes are shrunk toward none by the ridge penalty; whether a group is corrected
//! at all is decided by a nested cross-validation: each training GPU in turn is left out, the
//! correction is fitted on the others and scored on it, and the group keeps its correction only
//! where the pooled held-out median |log error| is smaller with it than without. Nothing of the
//! GPUs or launches being predicted enters the fit or the choice. A group the training launches
//! lack gets the pooled correction over every group, chosen the same way.

use super::data::{Cell, Measurements};
use super::learned::Ridge;
use super::physics::catalogue_physics_secs;
use super::utilisation::{UTILISATION_FEATURES, UTILISATION_LAMBDA, waves_roofline};
use crate::{ModelError, median};

/// The corrections kept: per group, and over every group (for groups the training lacks).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhysicsCorrection {
    groups: Vec<(String, Option<Ridge>)>,
    all: Option<Ridge>,
}

/// One launch's features and its log of measured over physics time.
fn example(m: &Measurements, c: &Cell) -> Option<([f64; UTILISATION_FEATURES.len()], f64)> {
    let (_, features) = waves_roofline(&c.work, &m.gpus[c.gpu])?;
    let physics = catalogue_physics_secs(&c.work, &m.gpus[c.gpu]);
    let r = (c.secs / physics).ln();
    (r.is_finite() && features.iter().all(|f| f.is_finite())).then_some((features, r))
}

fn fit_ridge(examples: &[&([f64; UTILISATION_FEATURES.len()], f64)]) -> Option<Ridge> {
    let p = UTILISATION_FEATURES.len();
    let x: Vec<f64> = examples.iter().flat_map(|e| e.0).collect();
    let y: Vec<f64> = examples.iter().map(|e| e.1).collect();
    Ridge::fit_penalised(&x, p, &y, true, UTILISATION_LAMBDA).ok()
}

/// Whether a correction fitted without each training GPU in turn predicts that GPU's launches
/// better than none (pooled held-out median |log error|); the correction on all of them if so.
fn earned(examples: &[(usize, ([f64; UTILISATION_FEATURES.len()], f64))]) -> Option<Ridge> {
    let mut gpus: Vec<usize> = examples.iter().map(|(g, _)| *g).collect();
    gpus.sort_unstable();
    gpus.dedup();
    if gpus.len() < 2 {
        return None;
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for &held in &gpus {
        let rest: Vec<_> = examples
            .iter()
            .filter(|(g, _)| *g != held)
            .map(|(_, e)| e)
            .collect();
        let ridge = fit_ridge(&rest)?;
        for (_, (features, r)) in examples.iter().filter(|(g, _)| *g == held) {
            with.push((r - ridge.predict(features)).abs());
            without.push(r.abs());
        }
    }
    if with.is_empty() || median(&mut with) >= median(&mut without) {
        return None;
    }
    fit_ridge(&examples.iter().map(|(_, e)| e).collect::<Vec<_>>())
}

impl PhysicsCorrection {
    /// Fits on the cells `train` accepts, grouped by `group_of` of their kernel's name.
    pub fn fit(
        m: &Measurements,
        train: &dyn Fn(&Cell) -> bool,
        group_of: &dyn Fn(&str) -> String,
    ) -> Result<Self, ModelError> {
        let mut by_group: Vec<(String, Vec<(usize, _)>)> = Vec::new();
        let mut all = Vec::new();
        for c in m.cells.iter().filter(|c| train(c)) {
            let Some(e) = example(m, c) else { continue };
            let group = group_of(&m.kernels[c.kernel]);
            match by_group.iter_mut().find(|(g, _)| *g == group) {
                Some((_, v)) => v.push((c.gpu, e)),
                None => by_group.push((group, vec![(c.gpu, e)])),
            }
            all.push((c.gpu, e));
        }
        if all.is_empty() {
            return Err(ModelError::invalid(
                "the physics correction has no training launch",
            ));
        }
        Ok(Self {
            groups: by_group
                .into_iter()
                .map(|(g, examples)| (g, earned(&examples)))
                .collect(),
            all: earned(&all),
        })
    }

    /// The groups that kept a correction.
    pub fn corrected_groups(&self) -> Vec<&str> {
        self.groups
            .iter()
            .filter(|(_, r)| r.is_some())
            .map(|(g, _)| g.as_str())
            .collect()
    }

    /// The physics time of `work` on `target`, corrected where its group earned it.
    pub fn secs(
        &self,
        work: &super::work::Work,
        target: &super::gpu::GpuSpec,
        group: &str,
    ) -> Option<f64> {
        let physics = catalogue_physics_secs(work, target);
        let ridge = match self.groups.iter().find(|(g, _)| g == group) {
            Some((_, r)) => r.as_ref(),
            None => self.all.as_ref(),
        };
        let factor = match ridge {
            Some(r) => r.predict(&waves_roofline(work, target)?.1).exp(),
            None => 1.0,
        };
        let secs = physics * factor;
        (secs.is_finite() && secs > 0.0).then_some(secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: usize = UTILISATION_FEATURES.len();

    /// Launches of four GPUs, 40 each, features from a fixed sequence; `r` gives each one's log
    /// of measured over physics time from its GPU and features.
    fn examples(r: &dyn Fn(usize, &[f64; P]) -> f64) -> Vec<(usize, ([f64; P], f64))> {
        let mut out = Vec::new();
        for gpu in 0..4 {
            for i in 0..40 {
                let mut f = [0.0; P];
                for (j, v) in f.iter_mut().enumerate() {
                    *v = (((i * 7 + j * 13 + gpu * 3) % 17) as f64 - 8.0) / 4.0;
                }
                out.push((gpu, (f, r(gpu, &f))));
            }
        }
        out
    }

    #[test]
    fn a_correction_every_gpu_shares_is_kept() {
        let e = examples(&|_, f| 0.7 + 0.3 * f[0]);
        let ridge = earned(&e).expect("kept");
        let (features, r) = e[5].1;
        assert!((ridge.predict(&features) - r).abs() < 0.05);
    }

    #[test]
    fn a_bias_of_each_gpu_its_own_is_not_learned() {
        // Each GPU off by its own factor, unrelated to the features: a correction fitted on the
        // other GPUs does not help the one left out.
        let e = examples(&|gpu, _| if gpu % 2 == 0 { 1.0 } else { -1.0 });
        assert!(earned(&e).is_none());
        // Nor with one GPU: nothing to choose on.
        let one: Vec<_> = e.into_iter().filter(|(g, _)| *g == 0).collect();
        assert!(earned(&one).is_none());
    }
}
