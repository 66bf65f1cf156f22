//! What one launch did, as one GPU's profile counted it.

use crate::median;

/// What one launch did, as one GPU's profile counted it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    /// NaN in a profile without an instruction count (see
    /// [`Measurements::from_profile`](super::data::Measurements::from_profile)).
    pub warp_instructions: f64,
    /// Single- plus double-precision floating-point operations (0 where not counted).
    pub flops: f64,
    /// DRAM bytes read and written (32-byte transactions; writes 0 where not counted).
    pub dram_bytes: f64,
    pub blocks: f64,
    pub threads_per_block: f64,
    /// 0 where unknown.
    pub registers_per_thread: f64,
    pub shared_bytes_per_block: f64,
    /// L2 read and write transactions (0 where not counted).
    pub l2_transactions: f64,
    /// Shared-memory load and store transactions (0 where not counted).
    pub shared_transactions: f64,
    /// Global load transactions (0 where not counted).
    pub global_loads: f64,
    /// Global store transactions (0 where not counted).
    pub global_stores: f64,
    /// Cycles the SMs had an active warp, summed over the SMs (NaN or 0 where not counted).
    pub active_cycles: f64,
    /// The achieved share of the warps the launch could have had resident on its GPU
    /// ([`super::physics::occupancy_share`]; NaN or 0 where the occupancy was not measured).
    pub occupancy_share: f64,
    /// The seed regression's six counters, NaN where missing.
    pub seed: [f64; 6],
}

impl Work {
    /// Field by field, the median of several profiles of one launch (each GPU counts a little
    /// differently: caches, instruction sets).
    pub fn median_of(works: &[&Work]) -> Work {
        let column = |f: &dyn Fn(&Work) -> f64| {
            let mut v: Vec<f64> = works.iter().map(|w| f(w)).filter(|x| !x.is_nan()).collect();
            // A counter no profile has stays missing.
            if v.is_empty() {
                f64::NAN
            } else {
                median(&mut v)
            }
        };
        let mut seed = [f64::NAN; 6];
        for (i, s) in seed.iter_mut().enumerate() {
            *s = column(&|w| w.seed[i]);
        }
        Work {
            warp_instructions: column(&|w| w.warp_instructions),
            flops: column(&|w| w.flops),
            dram_bytes: column(&|w| w.dram_bytes),
            blocks: column(&|w| w.blocks),
            threads_per_block: column(&|w| w.threads_per_block),
            registers_per_thread: column(&|w| w.registers_per_thread),
            shared_bytes_per_block: column(&|w| w.shared_bytes_per_block),
            l2_transactions: column(&|w| w.l2_transactions),
            shared_transactions: column(&|w| w.shared_transactions),
            global_loads: column(&|w| w.global_loads),
            global_stores: column(&|w| w.global_stores),
            active_cycles: column(&|w| w.active_cycles),
            occupancy_share: column(&|w| w.occupancy_share),
            seed,
        }
    }
}
