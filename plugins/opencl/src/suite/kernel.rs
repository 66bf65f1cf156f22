//! What a kernel of the suite is ([`SuiteKernel`]: its inputs, NDRange, work counters and CPU
//! check) and what every kernel's module uses: sizes, arguments, plans, deterministic inputs and
//! the comparison with the reference.

use std::collections::BTreeMap;

/// Work-group edge of the 2-D kernels and tile of the 1-D ones that stage data in local memory.
pub const TILE: usize = 16;

/// Which sizes a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Six sizes per program, from cache-resident to memory-bound (the pipelines' data).
    Standard,
    /// Two small sizes per program: a check that everything runs, in seconds (the tests).
    Quick,
}

impl Preset {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "standard" => Some(Self::Standard),
            "quick" => Some(Self::Quick),
            _ => None,
        }
    }
}

/// One kernel argument, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// Input buffer `i` of [`Plan::inputs`] (read-only).
    Input(usize),
    /// Output buffer `i` of [`Plan::outputs`] (written by the kernel).
    Output(usize),
    /// An `int` argument.
    Int(i32),
}

/// What one launch moves and computes, from its arguments and NDRange (not measured).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    pub global_load_bytes: f64,
    pub global_store_bytes: f64,
    pub local_load_bytes: f64,
    pub local_store_bytes: f64,
    pub flops: f64,
    pub local_memory_per_group_bytes: f64,
}

/// How to launch one configuration.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Input buffers (f32), written before the first launch.
    pub inputs: Vec<Vec<f32>>,
    /// Lengths (in f32) of the output buffers.
    pub outputs: Vec<usize>,
    pub args: Vec<Arg>,
    pub global: Vec<usize>,
    pub local: Vec<usize>,
    /// Elements per vector access (1 unless the variant is a vector width).
    pub vector_width: usize,
    pub work: Work,
}

impl Plan {
    pub fn work_items(&self) -> usize {
        self.global.iter().product()
    }

    pub fn work_group_size(&self) -> usize {
        self.local.iter().product()
    }

    pub fn work_groups(&self) -> usize {
        self.work_items() / self.work_group_size().max(1)
    }

    /// The computed work counters of one launch, by the raw names of tool `computed`
    /// (crates/plugin/profiler_import/metrics.toml), with their units.
    pub fn counters(&self) -> BTreeMap<&'static str, (f64, &'static str)> {
        let w = &self.work;
        BTreeMap::from([
            ("global_load_bytes", (w.global_load_bytes, "B")),
            ("global_store_bytes", (w.global_store_bytes, "B")),
            ("local_load_bytes", (w.local_load_bytes, "B")),
            ("local_store_bytes", (w.local_store_bytes, "B")),
            ("flops", (w.flops, "")),
            (
                "local_memory_per_group_bytes",
                (w.local_memory_per_group_bytes, "B"),
            ),
            ("work_items", (self.work_items() as f64, "")),
            ("work_groups", (self.work_groups() as f64, "")),
            ("work_group_size", (self.work_group_size() as f64, "")),
            ("vector_width", (self.vector_width as f64, "")),
        ])
    }
}

/// Where an output differs from the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub output: usize,
    pub index: usize,
    pub got: f64,
    pub expected: f64,
    pub tolerance: f64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "output {} differs from the CPU reference at element {}: got {}, expected {} (tolerance {:e})",
            self.output, self.index, self.got, self.expected, self.tolerance
        )
    }
}

/// One program of the suite.
pub trait SuiteKernel: Send + Sync {
    /// The program's name (`runs.program`).
    fn program(&self) -> &'static str;
    /// The `.cl` file (in `kernels/`) and its text, compiled in.
    fn source(&self) -> (&'static str, &'static str);
    /// The variants (`runs.variant`).
    fn variants(&self) -> &'static [&'static str];
    /// The sizes a preset measures.
    fn sizes(&self, preset: Preset) -> &'static [u64];
    /// What a size counts (`n`: elements, matrix edge, bodies).
    fn size_meaning(&self) -> &'static str;
    /// Why `size` cannot be run with work-groups of `group` work-items, if it cannot.
    fn check_size(&self, size: u64, group: usize) -> Result<(), String>;
    /// The kernel function of a variant.
    fn kernel_name(&self, variant: &str) -> String;
    /// Compiler options of a variant (`-D` definitions).
    fn build_options(&self, variant: &str, group: usize) -> String;
    /// Inputs, outputs, arguments, NDRange and work of one configuration.
    fn plan(&self, variant: &str, size: u64, group: usize) -> Plan;
    /// Compares the outputs with a CPU reference.
    fn check(&self, plan: &Plan, size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch>;
}

/// Deterministic inputs in [-1, 1): xorshift64 from `seed`.
pub fn pseudo_random(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The first element where `got` and `expected` differ by more than `tolerance` relative to
/// `scale` (absolute when `scale` is 1).
pub fn compare(
    output: usize,
    got: &[f32],
    expected: &[f64],
    tolerance: f64,
    scale: f64,
) -> Result<(), Mismatch> {
    if got.len() != expected.len() {
        return Err(Mismatch {
            output,
            index: got.len().min(expected.len()),
            got: f64::NAN,
            expected: f64::NAN,
            tolerance,
        });
    }
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let g = f64::from(*g);
        if !g.is_finite() || (g - e).abs() > tolerance * scale.max(e.abs()) {
            return Err(Mismatch {
                output,
                index: i,
                got: g,
                expected: *e,
                tolerance,
            });
        }
    }
    Ok(())
}

/// `size` is a positive multiple of `step`.
pub fn multiple_of(size: u64, step: u64, what: &str) -> Result<(), String> {
    if size == 0 || !size.is_multiple_of(step) {
        return Err(format!(
            "{what} must be a positive multiple of {step}, not {size}"
        ));
    }
    Ok(())
}
