//! A method's bias on GPUs: how much of its error one number measured on each GPU (its level: a
//! calibration, a reference launch) could remove, and how much is launch by launch.

use crate::median;

/// Of `answered`, (GPU, log of predicted over measured time) a launch: the median signed error
/// (%), and the median |error| (%) once each GPU's median log ratio is divided out of its
/// launches' predictions; NaN for none.
pub fn signed_and_one_factor(answered: &[(usize, f64)]) -> (f64, f64) {
    if answered.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut all: Vec<f64> = answered.iter().map(|(_, r)| *r).collect();
    let signed = 100.0 * (median(&mut all).exp() - 1.0);
    let mut gpus: Vec<usize> = answered.iter().map(|(g, _)| *g).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let mut left = Vec::with_capacity(answered.len());
    for g in gpus {
        let mut own: Vec<f64> = answered
            .iter()
            .filter(|(of, _)| *of == g)
            .map(|(_, r)| *r)
            .collect();
        let factor = median(&mut own.clone());
        left.extend(
            own.iter_mut()
                .map(|r| 100.0 * ((*r - factor).exp() - 1.0).abs()),
        );
    }
    (signed, median(&mut left))
}
