//! What a device's architecture allows, to check a file a user writes: the known GPU
//! architectures and the FP32 lanes of one of their SMs (CUs on AMD), and the checks of a device
//! against them and against the catalogue's devices of the same architecture.

use crate::{Catalogue, Device};

/// A GPU architecture: its name as the catalogue spells it, and the FP32 lanes per SM (or CU) its
/// chips have (two where its data-centre and graphics chips differ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Architecture {
    pub name: &'static str,
    pub fp32_lanes_per_sm: &'static [f64],
}

/// The GPU architectures yosoku knows (NVIDIA's tuning guides and whitepapers; AMD's CDNA
/// whitepapers: 64 FP32 lanes per CU, 128 where packed FP32 doubles them).
pub const GPU_ARCHITECTURES: &[Architecture] = &[
    Architecture {
        name: "Kepler",
        fp32_lanes_per_sm: &[192.0],
    },
    Architecture {
        name: "Maxwell",
        fp32_lanes_per_sm: &[128.0],
    },
    Architecture {
        name: "Pascal",
        fp32_lanes_per_sm: &[64.0, 128.0],
    },
    Architecture {
        name: "Volta",
        fp32_lanes_per_sm: &[64.0],
    },
    Architecture {
        name: "Turing",
        fp32_lanes_per_sm: &[64.0],
    },
    Architecture {
        name: "Ampere",
        fp32_lanes_per_sm: &[64.0, 128.0],
    },
    Architecture {
        name: "Ada",
        fp32_lanes_per_sm: &[128.0],
    },
    Architecture {
        name: "Hopper",
        fp32_lanes_per_sm: &[128.0],
    },
    Architecture {
        name: "Blackwell",
        fp32_lanes_per_sm: &[128.0],
    },
    Architecture {
        name: "CDNA",
        fp32_lanes_per_sm: &[64.0, 128.0],
    },
    Architecture {
        name: "CDNA 2",
        fp32_lanes_per_sm: &[64.0, 128.0],
    },
    Architecture {
        name: "CDNA 3",
        fp32_lanes_per_sm: &[64.0, 128.0],
    },
];

/// The known GPU architecture `name` names without regard to case.
/// What is wrong with a measured curve, if anything: at least two points, as many `y` as `x`,
/// every value a positive number, `x` rising.
pub fn curve_problem(x: &[f64], y: &[f64]) -> Option<String> {
    if x.len() != y.len() {
        return Some(format!(
            "{} x values and {} y values: expected one y for each x",
            x.len(),
            y.len()
        ));
    }
    if x.len() < 2 {
        return Some("expected at least two points".to_owned());
    }
    if let Some(v) = x.iter().chain(y).find(|v| !(v.is_finite() && **v > 0.0)) {
        return Some(format!("expected positive numbers, found {v}"));
    }
    if let Some(i) = (1..x.len()).find(|&i| x[i] <= x[i - 1]) {
        return Some(format!(
            "x must rise: x[{i}] = {} is not above x[{}] = {}",
            x[i],
            i - 1,
            x[i - 1]
        ));
    }
    None
}

pub fn gpu_architecture(name: &str) -> Option<&'static Architecture> {
    GPU_ARCHITECTURES
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case(name.trim()))
}

/// How far the FP32 peak may be from SMs x lanes x 2 x clock before it is questioned: the
/// datasheets round their peaks, and some quote them at a clock between base and boost.
const PEAK_TOLERANCE: f64 = 0.15;

/// How many times the catalogue's range of an architecture's bandwidths a device may lie
/// outside it before it is questioned (when its bytes per FLOP are also unlike every catalogue
/// GPU's): 3x, which a typo of a digit's place (10x) or a bandwidth in the wrong unit (GB/s as
/// Gbit/s: 8x) passes and no real part of an architecture does (an H100 PCIe has 2.0 TB/s, an
/// H200 4.8).
const BANDWIDTH_FACTOR: f64 = 3.0;

/// What looks wrong in `device`'s values for its architecture, each naming the field and what was
/// expected; `catalogue` holds the devices it is compared with (itself excluded).
pub fn warnings(device: &Device, catalogue: &Catalogue) -> Vec<String> {
    let mut out = Vec::new();
    if device.kind != "gpu" {
        return out;
    }
    let Some(arch) = gpu_architecture(&device.architecture) else {
        return out;
    };
    let clock = device
        .spec("boost_clock_mhz")
        .or(device.spec("base_clock_mhz"));
    if let (Some(peak), Some(sms), Some(clock)) = (
        device.spec("fp32_peak_gflops"),
        device.spec("sm_count"),
        clock,
    ) {
        let lanes = peak * 1e3 / (2.0 * sms * clock);
        let near = |l: &f64| ((lanes - l) / l).abs() <= PEAK_TOLERANCE;
        if !arch.fp32_lanes_per_sm.iter().any(near) {
            let expected: Vec<String> = arch
                .fp32_lanes_per_sm
                .iter()
                .map(|l| format!("{:.0}", 2.0 * sms * l * clock / 1e3))
                .collect();
            out.push(format!(
                "{}: spec.fp32_peak_gflops = {peak} disagrees with sm_count x FP32 lanes per SM x 2 x clock: {} SMs have {} lanes, so expected about {} GFLOP/s at {clock} MHz (within {:.0} %), not {lanes:.0} lanes per SM",
                device.file,
                arch.name,
                lanes_text(arch),
                expected.join(" or "),
                PEAK_TOLERANCE * 100.0,
            ));
        }
    }
    if let Some(bandwidth) = device.spec("dram_bandwidth_gb_per_sec") {
        let gpus = || {
            catalogue
                .devices()
                .iter()
                .filter(|d| d.name != device.name && d.kind == "gpu")
        };
        let peers: Vec<f64> = gpus()
            .filter(|d| d.architecture == arch.name)
            .filter_map(|d| d.spec("dram_bandwidth_gb_per_sec"))
            .collect();
        // Bytes per FLOP over every GPU of the catalogue: a part of an architecture whose
        // catalogue entries are few (a P100's HBM2 beside a P4's GDDR5) is still a GPU like
        // others; a typo of a digit's place is not.
        let balance =
            |d: &Device| Some(d.spec("dram_bandwidth_gb_per_sec")? / d.spec("fp32_peak_gflops")?);
        let balances: Vec<f64> = gpus().filter_map(balance).collect();
        let unlike_any_gpu = match (
            balance(device),
            balances.iter().copied().reduce(f64::min),
            balances.iter().copied().reduce(f64::max),
        ) {
            (Some(b), Some(lo), Some(hi)) => b > hi || b < lo,
            _ => true,
        };
        if let (Some(lo), Some(hi)) = (
            peers.iter().copied().reduce(f64::min),
            peers.iter().copied().reduce(f64::max),
        ) && (bandwidth > hi * BANDWIDTH_FACTOR || bandwidth < lo / BANDWIDTH_FACTOR)
            && unlike_any_gpu
        {
            out.push(format!(
                "{}: spec.dram_bandwidth_gb_per_sec = {bandwidth} is over {BANDWIDTH_FACTOR:.0}x outside the catalogue's {} GPUs ({lo} to {hi} GB/s) and its bytes per FLOP unlike any GPU's: expected {:.0} to {:.0}",
                device.file,
                arch.name,
                lo / BANDWIDTH_FACTOR,
                hi * BANDWIDTH_FACTOR,
            ));
        }
    }
    out
}

fn lanes_text(arch: &Architecture) -> String {
    arch.fp32_lanes_per_sm
        .iter()
        .map(|l| format!("{l:.0}"))
        .collect::<Vec<_>>()
        .join(" or ")
}
