//! NeuSight's measured kernel files (Lee et al., ASPLOS '25; github sitar-lab/NeuSight,
//! `scripts/asplos/data/dataset/{train,test}/*.csv`): one row per PyTorch operator shape and GPU,
//! with the operator (`OPName`), its latency in milliseconds, the GPU's name, the kernel's name,
//! its grid and block, and the operator's dimensions (`B,M,N,K` for `linear` and `bmm`, `B,H`
//! for the elementwise operators, `softmax` and `ln`).
//!
//! The files count no work: the work is derived from the dimensions, in 32-bit floats, as
//! NeuSight's own roofline does (docs/methods.md, section 6):
//!
//! | operator | `flop_count_sp` | `gld_bytes` (read) | `gst_bytes` (written) |
//! |---|---|---|---|
//! | `linear`, `bmm` | 2·B·M·N·K | 4·B·(M·K + K·N) | 4·B·M·N |
//! | binary elementwise (`add`, `mul`, `div`, `pow`) | B·H | 8·B·H | 4·B·H |
//! | unary elementwise (`addu`, `mulu`, `divu`, `powu`, `relu`, `gelu`, `tanh`) | B·H | 4·B·H | 4·B·H |
//! | `softmax` | 5·B·H | 4·B·H | 4·B·H |
//! | `ln` (layer norm) | 6·B·H | 4·B·H | 4·B·H |
//!
//! (`u`: the operator with a scalar operand; the FLOPs per output element are NeuSight's
//! `ops_dict`.) Bytes are the least each operator must move: DRAM traffic where no profiler
//! counted it, as for the OpenCL suite's computed counters. Each row becomes a run (`program` the
//! operator, `variant` its dimensions, `kernel` the kernel's name) with its counters in long form;
//! the pipelines pivot them (`pivot_counters`). NeuSight's `Warps per SM` and `Blocks per SM` are
//! the grid over the GPU's SMs, the device's and not the launch's: they are not imported.

use std::path::Path;

use yosoku_plugin_sdk::PluginError;

use crate::builder::{RunKey, Tables};
use crate::input::{Header, RecordReader, csv_stem, field};
use crate::units::{Prefixes, parse_number, parse_scaled};

/// What the reader calls the format in its errors.
const FORMAT: &str = "a NeuSight kernel file";

/// The columns every file has.
const LAUNCH_COLUMNS: [&str; 6] = [
    "Grid x", "Grid y", "Grid z", "Block x", "Block y", "Block z",
];

/// The work of one operator on its dimensions: (FLOPs, bytes read, bytes written), or `None`
/// for an operator this reader does not know.
pub fn operator_work(operator: &str, dims: &Dims) -> Option<(f64, f64, f64)> {
    const FLOAT_BYTES: f64 = 4.0;
    match (operator, *dims) {
        ("linear" | "bmm", Dims::Matrix { b, m, n, k }) => Some((
            2.0 * b * m * n * k,
            FLOAT_BYTES * b * (m * k + k * n),
            FLOAT_BYTES * b * m * n,
        )),
        (op, Dims::Vector { b, h }) => {
            let (flops_per_element, inputs) = match op {
                "add" | "mul" | "div" | "pow" => (1.0, 2.0),
                "addu" | "mulu" | "divu" | "powu" | "relu" | "gelu" | "tanh" => (1.0, 1.0),
                "softmax" => (5.0, 1.0),
                "ln" => (6.0, 1.0),
                _ => return None,
            };
            let elements = b * h;
            Some((
                flops_per_element * elements,
                FLOAT_BYTES * inputs * elements,
                FLOAT_BYTES * elements,
            ))
        }
        _ => None,
    }
}

/// The operators [`operator_work`] knows, for errors.
const OPERATORS: &str = "linear, bmm (B,M,N,K); add, mul, div, pow, addu, mulu, divu, powu, relu, gelu, tanh, softmax, ln (B,H)";

/// An operator's dimensions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dims {
    Matrix { b: f64, m: f64, n: f64, k: f64 },
    Vector { b: f64, h: f64 },
}

impl Dims {
    /// The run's variant: the dimensions as the file names them.
    fn variant(&self) -> String {
        match self {
            Dims::Matrix { b, m, n, k } => format!("B={b} M={m} N={n} K={k}"),
            Dims::Vector { b, h } => format!("B={b} H={h}"),
        }
    }
}

/// Where a file keeps what every row needs.
#[derive(Debug)]
struct Columns {
    operator: usize,
    latency: usize,
    device: usize,
    kernel: usize,
    launch: [usize; 6],
    /// B, M, N, K where the file has them (the GEMM files), else B, H.
    matrix: Option<[usize; 4]>,
    vector: Option<[usize; 2]>,
}

impl Columns {
    fn of(header: &Header, path: &Path, line: usize) -> Result<Self, PluginError> {
        let need = |name: &str| header.require(path, line, name, FORMAT);
        let mut launch = [0; 6];
        for (slot, name) in launch.iter_mut().zip(LAUNCH_COLUMNS) {
            *slot = need(name)?;
        }
        let all = |names: &[&str]| {
            names
                .iter()
                .map(|n| header.find(n))
                .collect::<Option<Vec<_>>>()
        };
        let matrix = all(&["B", "M", "N", "K"]).map(|v| [v[0], v[1], v[2], v[3]]);
        let vector = all(&["B", "H"]).map(|v| [v[0], v[1]]);
        if matrix.is_none() && vector.is_none() {
            return Err(PluginError::at_line(
                path,
                line,
                format!(
                    "not {FORMAT}: the header has neither the GEMM dimensions B, M, N, K nor the vector dimensions B, H (it has: {})",
                    header.names.join(", ")
                ),
            ));
        }
        Ok(Self {
            operator: need("OPName")?,
            latency: need("Latency")?,
            device: need("Device")?,
            kernel: need("Kernel Name")?,
            launch,
            matrix,
            vector,
        })
    }
}

/// Reads one NeuSight file into `tables` (runs and counters in long form).
pub fn read(path: &Path, text: &str, tables: &mut Tables) -> Result<(), PluginError> {
    let mut records = RecordReader::new(path, text);
    let Some(header_line) = records.read_next()? else {
        return Err(PluginError::new(format!(
            "{}: empty file ({FORMAT} starts with its header)",
            path.display()
        )));
    };
    let header = Header::new(records.record());
    let columns = Columns::of(&header, path, header_line)?;
    // NeuSight names its train and test files alike (`train/bmm.csv`, `test/bmm.csv`): the
    // directory keeps their run ids apart.
    let stem = match path.parent().and_then(|d| d.file_name()) {
        Some(dir) => format!("{}/{}", dir.to_string_lossy(), csv_stem(path)),
        None => csv_stem(path),
    };
    let mut rows = 0usize;
    while let Some(line) = records.read_next()? {
        let r = records.record();
        header.check_width(path, line, r)?;
        let text_of = |c: usize| field(path, line, r, c, &header);
        let number = |c: usize| -> Result<f64, PluginError> {
            let text = text_of(c)?;
            parse_number(text)
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    PluginError::at_line(
                        path,
                        line,
                        format!(
                            "column `{}`: expected a number >= 0, found `{text}`",
                            header.names[c]
                        ),
                    )
                })
        };
        let operator = text_of(columns.operator)?;
        let gemm = matches!(operator, "linear" | "bmm");
        let dims = match (columns.matrix, columns.vector) {
            (Some([b, m, n, k]), vector) if gemm || vector.is_none() => Dims::Matrix {
                b: number(b)?,
                m: number(m)?,
                n: number(n)?,
                k: number(k)?,
            },
            (_, Some([b, h])) => Dims::Vector {
                b: number(b)?,
                h: number(h)?,
            },
            // (Columns::of refuses a header with neither.)
            _ => return Err(PluginError::at_line(path, line, "no dimensions")),
        };
        let (flops, read_bytes, written_bytes) =
            operator_work(operator, &dims).ok_or_else(|| {
                PluginError::at_line(
                    path,
                    line,
                    format!(
                        "operator `{operator}` with dimensions {}: expected one of {OPERATORS}",
                        dims.variant()
                    ),
                )
            })?;
        let latency = text_of(columns.latency)?;
        let seconds = parse_scaled(latency, -3)
            .filter(|s| s.is_finite() && *s > 0.0)
            .ok_or_else(|| {
                PluginError::at_line(
                    path,
                    line,
                    format!("column `Latency`: expected a time in ms > 0, found `{latency}`"),
                )
            })?;
        let mut launch = [0.0; 6];
        for (value, &c) in launch.iter_mut().zip(&columns.launch) {
            *value = number(c)?;
        }
        let run = tables.key(RunKey {
            run_id: format!("{stem}:{line}"),
            device: text_of(columns.device)?.to_owned(),
            program: operator.to_owned(),
            variant: dims.variant(),
            kernel: Some(text_of(columns.kernel)?.to_owned()),
        });
        tables.add_run(run, None, "kernel", seconds);
        for (name, value) in LAUNCH_COLUMNS.iter().zip(launch) {
            tables.add_counter(run, name, value, "");
        }
        tables.add_counter(run, "blocks", launch[0] * launch[1] * launch[2], "");
        tables.add_counter(
            run,
            "threads_per_block",
            launch[3] * launch[4] * launch[5],
            "",
        );
        tables.add_counter(run, "flops", flops, "");
        tables.add_counter(run, "input_bytes", read_bytes, "B");
        tables.add_counter(run, "output_bytes", written_bytes, "B");
        rows += 1;
    }
    if rows == 0 {
        return Err(PluginError::at_line(
            path,
            header_line,
            format!("{FORMAT} with a header and no rows"),
        ));
    }
    Ok(())
}

/// The builder NeuSight files are read into.
pub fn tables() -> Tables {
    Tables::new("neusight", Prefixes::Decimal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../pipelines/data/neusight")
            .join(name)
    }

    fn read_one(
        path: &Path,
        text: &str,
    ) -> Result<Vec<(String, arrow_array::RecordBatch)>, PluginError> {
        let mut t = tables();
        read(path, text, &mut t)?;
        t.finish()
    }

    #[test]
    fn the_work_of_each_operator_kind() {
        let gemm = Dims::Matrix {
            b: 2.0,
            m: 3.0,
            n: 5.0,
            k: 7.0,
        };
        assert_eq!(
            operator_work("bmm", &gemm),
            Some((420.0, 4.0 * 2.0 * (21.0 + 35.0), 4.0 * 30.0))
        );
        let v = Dims::Vector { b: 10.0, h: 3.0 };
        assert_eq!(operator_work("add", &v), Some((30.0, 240.0, 120.0)));
        assert_eq!(operator_work("addu", &v), Some((30.0, 120.0, 120.0)));
        assert_eq!(operator_work("ln", &v), Some((180.0, 120.0, 120.0)));
        assert_eq!(operator_work("conv2d", &v), None);
        assert_eq!(operator_work("linear", &v), None);
    }

    #[test]
    fn a_real_test_file_reads_every_row_with_its_work() {
        let path = data("test/ln.csv.gz");
        let text = crate::input::read_text(&path).unwrap();
        let tables = read_one(&path, &text).unwrap();
        let runs = &tables.iter().find(|(n, _)| n == "runs").unwrap().1;
        assert_eq!(runs.num_rows(), text.lines().count() - 1);
        let counters = &tables.iter().find(|(n, _)| n == "counters").unwrap().1;
        let metric = yosoku_tables::access::utf8(counters, "metric").unwrap();
        for name in [
            "flop_count_sp",
            "gld_bytes",
            "gst_bytes",
            "grid_size",
            "block_size",
        ] {
            assert_eq!(
                metric.iter().filter(|m| *m == Some(name)).count(),
                runs.num_rows(),
                "{name}"
            );
        }
    }

    #[test]
    fn bad_rows_are_refused_with_their_line() {
        let path = data("test/ln.csv.gz");
        let text = crate::input::read_text(&path).unwrap();
        let mut lines: Vec<String> = text.lines().take(4).map(str::to_owned).collect();
        let good = lines.join("\n") + "\n";
        assert!(read_one(&path, &good).is_ok());
        // An operator it does not know, on line 3.
        lines[2] = lines[2].replacen("ln,", "conv2d,", 1);
        let e = read_one(&path, &(lines.join("\n") + "\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(":3: operator `conv2d`"), "{e}");
        // A latency that is not a number, on line 2.
        let mut lines: Vec<String> = good.lines().map(str::to_owned).collect();
        let fields: Vec<&str> = lines[1].splitn(3, ',').collect();
        lines[1] = format!("{},fast,{}", fields[0], fields[2]);
        let e = read_one(&path, &(lines.join("\n") + "\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(":2: column `Latency`"), "{e}");
        // A header without the launch columns.
        let e = read_one(&path, "OPName,Latency,Device\nln,1,x\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains(":1: not a NeuSight kernel file"), "{e}");
        let e = read_one(&path, "").unwrap_err().to_string();
        assert!(e.contains("empty file"), "{e}");
    }
}
