//! The file formats yosoku's importers read, by collector, and one refusal for a file that is
//! none of what the collector reads: the same words from every importer, the formats yosoku does
//! read, and the collector that reads this file when its beginning looks like one.

use std::path::Path;

use crate::PluginError;

/// A format an importer reads, and how its text begins.
#[derive(Debug)]
pub struct Format {
    pub plugin: &'static str,
    pub collector: &'static str,
    /// What it is, as a user names it.
    pub what: &'static str,
    looks_like: fn(&str) -> bool,
}

fn first_line(head: &str) -> &str {
    head.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// The formats, most specific first (a rocpd export is also a CSV table).
pub const FORMATS: &[Format] = &[
    Format {
        plugin: "cuda_profiler",
        collector: "ncu",
        what: "`ncu --csv` output (details or raw page)",
        looks_like: |h| h.contains("\"ID\",\"Process ID\""),
    },
    Format {
        plugin: "cuda_profiler",
        collector: "nvprof",
        what: "`nvprof --csv` output (metric or event summary, GPU trace)",
        looks_like: |h| {
            h.contains("\"Metric Name\"")
                || h.contains("\"Event Name\"")
                || (h.contains("\"Start\"") && h.contains("\"Duration\""))
                || h.contains("NVPROF is profiling")
        },
    },
    Format {
        plugin: "cuda_profiler",
        collector: "nsys",
        what: "`nsys stats --format csv` reports (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, cuda_gpu_trace)",
        looks_like: |h| h.contains("Total Time (ns)") || h.contains("Start (ns),Duration (ns)"),
    },
    Format {
        plugin: "cuda_profiler",
        collector: "legacy",
        what: "a legacy CUDA profiler log (CUDA_PROFILE, COMPUTE_PROFILE)",
        looks_like: |h| h.contains("CUDA_PROFILE_LOG_VERSION") || h.contains("method=["),
    },
    Format {
        plugin: "cuda_profiler",
        collector: "gpuperfpredict",
        what: "a gpuperfpredict dataset file",
        looks_like: |h| {
            let l = first_line(h);
            l.starts_with("\"\",") && l.contains("\"duration\"")
        },
    },
    Format {
        plugin: "rocm_profiler",
        collector: "rocprof",
        what: "AMD profiler CSV (omniperf workload, rocprof, rocprofv3, rocpd)",
        looks_like: |h| {
            let l = first_line(h);
            [
                "Dispatch_ID",
                "Dispatch_Id",
                "KernelName",
                "gpu_model",
                "Counter_Name",
            ]
            .iter()
            .any(|c| l.contains(c))
                || (l.contains("gpu_soc") && l.contains("numCU"))
        },
    },
    Format {
        plugin: "traces",
        collector: "chrome_trace",
        what: "a Chrome trace event JSON file (Perfetto, PyTorch Kineto)",
        looks_like: |h| {
            let t = h.trim_start();
            (t.starts_with('{') || t.starts_with('['))
                && (h.contains("\"traceEvents\"") || h.contains("\"ph\""))
        },
    },
    Format {
        plugin: "traces",
        collector: "kernel_trace",
        what: "a kernel-trace file of the in-kernel trace header",
        looks_like: |h| h.starts_with("YKTRACE"),
    },
    Format {
        plugin: "mpi_timer",
        collector: "tau_profile",
        what: "TAU text profiles (a directory of profile.<rank>.0.0)",
        looks_like: |h| first_line(h).ends_with("templated_functions_MULTI_TIME"),
    },
    Format {
        plugin: "mpi_timer",
        collector: "logs",
        what: "the MPI timer interposer's logs (a directory of rank-<r>.tsv)",
        looks_like: |h| h.starts_with("# yosoku-mpi-timer"),
    },
    Format {
        plugin: "csx600_sdk_log",
        collector: "microbench",
        what: "ClearSpeed CSX600 SDK logs (microbench, profile)",
        looks_like: |h| h.contains("@format csx600-sdk-log"),
    },
    Format {
        plugin: "opencl",
        collector: "logs",
        what: "the OpenCL runner's records (opencl-run.json)",
        looks_like: |h| h.contains("\"yosoku-opencl-run\""),
    },
];

/// The collector whose format `head` (the file's first few kilobytes) looks like.
pub fn sniff(head: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| (f.looks_like)(head))
}

/// The refusal of a file that is not what collector `plugin`/`collector` reads (`reason`: what
/// it lacked, at `line` when one is known). When its beginning looks like another collector's
/// format, that collector is named; else the error lists the formats yosoku reads.
pub fn refusal(
    path: &Path,
    line: Option<usize>,
    text: &str,
    (plugin, collector): (&str, &str),
    reason: &str,
) -> PluginError {
    // An empty file is called empty, whatever the collector would have looked for first.
    if text.trim().is_empty() {
        let expected = FORMATS
            .iter()
            .find(|f| (f.plugin, f.collector) == (plugin, collector))
            .map_or_else(
                || format!("collector `{plugin}`/`{collector}`'s format"),
                |f| f.what.to_owned(),
            );
        let what = if text.is_empty() {
            "empty file (0 bytes)".to_owned()
        } else {
            format!("empty file (only blank lines, {} bytes)", text.len())
        };
        return PluginError::new(format!("{}: {what}; expected {expected}", path.display()));
    }
    let head = text.get(..text.len().min(4096)).unwrap_or(text);
    let place = match line {
        Some(l) => format!("{}:{l}", path.display()),
        None => path.display().to_string(),
    };
    match sniff(head) {
        // This collector's format, broken: the reason says where.
        Some(f) if (f.plugin, f.collector) == (plugin, collector) => {
            PluginError::new(format!("{place}: {reason}"))
        }
        Some(f) => PluginError::new(format!(
            "{place}: not a format collector `{plugin}`/`{collector}` reads ({reason}); it looks \
             like {}: plugin `{}`, collector `{}`",
            f.what, f.plugin, f.collector
        )),
        _ => {
            let known: Vec<String> = FORMATS
                .iter()
                .map(|f| format!("{} ({}/{})", f.what, f.plugin, f.collector))
                .collect();
            PluginError::new(format!(
                "{place}: not a format yosoku reads ({plugin}/{collector}: {reason}); it reads, by \
                 collector: {}; and a table of your own in CSV, Parquet or Arrow (table/file)",
                known.join("; ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_called_empty_with_what_was_expected() {
        let path = Path::new("p.csv");
        for (text, said) in [("", "0 bytes"), ("\n  \r\n", "only blank lines, 5 bytes")] {
            let e = refusal(path, Some(1), text, ("cuda_profiler", "ncu"), "no header").to_string();
            assert!(
                e.ends_with(&format!(
                    "p.csv: empty file ({said}); expected `ncu --csv` output (details or raw page)"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn each_format_is_recognised_by_its_beginning_and_nothing_else_is() {
        let cases = [
            ("\"ID\",\"Process ID\",\"Process Name\"\n", "ncu"),
            (
                "==1== NVPROF is profiling process 1\n\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\"\n",
                "nvprof",
            ),
            ("# CUDA_PROFILE_LOG_VERSION 2.0\n", "legacy"),
            (
                "\"\",\"input.size.1\",\"duration\",\"grid.x\"\n",
                "gpuperfpredict",
            ),
            (
                "\"Guid\",\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\"\n",
                "rocprof",
            ),
            ("{\"traceEvents\": [{\"ph\": \"X\"}]}", "chrome_trace"),
            ("23 templated_functions_MULTI_TIME\n", "tau_profile"),
        ];
        for (head, collector) in cases {
            assert_eq!(sniff(head).map(|f| f.collector), Some(collector), "{head}");
        }
        assert!(sniff("EZTrace trace file\nversion 2\n").is_none());
        assert!(sniff("a,b,c\n1,2,3\n").is_none());
    }

    #[test]
    fn a_file_of_another_collector_is_sent_there_and_an_unknown_one_gets_the_list() {
        let p = Path::new("x.csv");
        let e = refusal(
            p,
            Some(1),
            "\"ID\",\"Process ID\"\n",
            ("cuda_profiler", "nvprof"),
            "no header",
        );
        let text = e.to_string();
        assert!(
            text.contains(
                "x.csv:1: not a format collector `cuda_profiler`/`nvprof` reads (no header)"
            ),
            "{text}"
        );
        assert!(
            text.contains("plugin `cuda_profiler`, collector `ncu`"),
            "{text}"
        );
        let e = refusal(
            p,
            None,
            "EZTrace\n",
            ("rocm_profiler", "rocprof"),
            "no dispatch column",
        );
        let text = e.to_string();
        assert!(
            text.starts_with(
                "x.csv: not a format yosoku reads (rocm_profiler/rocprof: no dispatch column)"
            ),
            "{text}"
        );
        for f in FORMATS {
            assert!(
                text.contains(&format!("({}/{})", f.plugin, f.collector)),
                "{text}"
            );
        }
    }
}
