//! `reduce`: partial sums of n floats, one per work-group, by a tree in global memory (`global`)
//! or in local memory (`local`) (kernels/reduce.cl).

use super::kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, Work, compare, multiple_of, pseudo_random,
};

pub struct Reduce;

impl SuiteKernel for Reduce {
    fn program(&self) -> &'static str {
        "reduce"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("reduce.cl", include_str!("../../kernels/reduce.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        &["global", "local"]
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            Preset::Standard => &[1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21],
            Preset::Quick => &[1 << 14, 1 << 16],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "floats summed"
    }

    fn check_size(&self, size: u64, group: usize) -> Result<(), String> {
        if !group.is_power_of_two() {
            return Err(format!(
                "the work-group size must be a power of 2, not {group}"
            ));
        }
        multiple_of(size, group as u64, "n (floats)")
    }

    fn kernel_name(&self, variant: &str) -> String {
        format!("reduce_{variant}")
    }

    fn build_options(&self, _variant: &str, group: usize) -> String {
        format!("-DGROUP={group}")
    }

    fn plan(&self, variant: &str, size: u64, group: usize) -> Plan {
        let n = size as usize;
        let nf = n as f64;
        let groups = (n / group) as f64;
        // The tree: at step s, s work-items of each group add two values (read 2, write 1); the
        // steps s = G/2, ..., 1 sum to G - 1.
        let adds = groups * (group as f64 - 1.0);
        let work = if variant == "local" {
            Work {
                global_load_bytes: 4.0 * nf,
                global_store_bytes: 4.0 * groups,
                local_store_bytes: 4.0 * (nf + adds),
                local_load_bytes: 4.0 * (2.0 * adds + groups),
                flops: adds,
                local_memory_per_group_bytes: 4.0 * group as f64,
            }
        } else {
            Work {
                global_load_bytes: 4.0 * (nf + 2.0 * adds + groups),
                global_store_bytes: 4.0 * (nf + adds + groups),
                flops: adds,
                ..Work::default()
            }
        };
        Plan {
            inputs: vec![pseudo_random(n, size)],
            // The partial sums (checked) and the global scratch array.
            outputs: vec![n / group, n],
            args: vec![Arg::Input(0), Arg::Output(1), Arg::Output(0)],
            global: vec![n],
            local: vec![group],
            vector_width: 1,
            work,
        }
    }

    fn check(&self, plan: &Plan, _size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        let group = plan.local[0];
        let expected: Vec<f64> = plan.inputs[0]
            .chunks(group)
            .map(|c| c.iter().map(|v| f64::from(*v)).sum())
            .collect();
        // A float tree sum of G values in [-1, 1): error below log2(G) eps times the sum of
        // magnitudes, at most G.
        compare(0, &outputs[0], &expected, 1e-5, group as f64)
    }
}
