//! `yosoku export`: a bundle's tables for other tools: Parquet and CSV (every table), Chrome
//! trace JSON (spans), Extra-P's JSON input (measured runs over their parameters).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use arrow_array::cast::AsArray as _;
use arrow_array::types::{Float64Type, Int64Type};
use yosoku_tables::col;

/// Marks a directory `yosoku export` wrote, so that a second export may replace it.
const MARKER: &str = ".yosoku-export";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Parquet,
    Csv,
    ChromeTrace,
    Extrap,
}

/// Exports `bundle` (the tables named in `tables`, else every one) to `output`: a directory of
/// one file per table (Parquet, CSV) or one file (Chrome trace, Extra-P). Nothing is left
/// half-written: the output is written beside its place and renamed into it.
pub fn export(
    bundle: &Path,
    format: ExportFormat,
    tables: &[String],
    output: &Path,
) -> Result<String> {
    match format {
        ExportFormat::ChromeTrace => crate::trace::export(bundle, tables, output),
        ExportFormat::Extrap => {
            let read = yosoku_bundle::fs::read_bundle(bundle)?;
            let experiments = extrap(&read, tables)
                .with_context(|| format!("{}: no Extra-P input", bundle.display()))?;
            if output.is_dir() {
                bail!("{} is a directory; name a file", output.display());
            }
            write_experiments(output, &experiments)
        }
        ExportFormat::Parquet | ExportFormat::Csv => {
            let read = yosoku_bundle::fs::read_bundle(bundle)?;
            for t in tables {
                if !read.tables.iter().any(|(n, _)| n == t) {
                    let names: Vec<&str> = read.tables.iter().map(|(n, _)| n.as_str()).collect();
                    bail!(
                        "{} has no table `{t}`; it has: {}",
                        bundle.display(),
                        names.join(", ")
                    );
                }
            }
            let chosen: Vec<&(String, RecordBatch)> = read
                .tables
                .iter()
                .filter(|(n, _)| tables.is_empty() || tables.contains(n))
                .collect();
            let ext = if format == ExportFormat::Parquet {
                "parquet"
            } else {
                "csv"
            };
            write_dir_atomically(output, |dir| {
                for (name, batch) in &chosen {
                    let path = dir.join(format!("{name}.{ext}"));
                    let file = std::fs::File::create(&path)
                        .with_context(|| format!("cannot create {}", path.display()))?;
                    if format == ExportFormat::Parquet {
                        write_parquet(file, batch)
                    } else {
                        write_csv(file, batch)
                    }
                    .with_context(|| format!("writing {}", path.display()))?;
                }
                Ok(())
            })?;
            Ok(format!(
                "wrote {} table(s) as {ext} into {}",
                chosen.len(),
                output.display()
            ))
        }
    }
}

fn write_parquet(file: std::fs::File, batch: &RecordBatch) -> Result<()> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))?;
    writer.write(batch)?;
    writer.close()?;
    Ok(())
}

/// CSV with a header; numbers as the shortest text that reads back as the same value, nulls as
/// empty cells.
fn write_csv(file: std::fs::File, batch: &RecordBatch) -> Result<()> {
    let mut out = csv::Writer::from_writer(std::io::BufWriter::new(file));
    let schema = batch.schema();
    out.write_record(schema.fields().iter().map(|f| f.name().as_str()))?;
    let mut row = Vec::with_capacity(batch.num_columns());
    for r in 0..batch.num_rows() {
        row.clear();
        for c in batch.columns() {
            row.push(yosoku_tables::display::cell(c.as_ref(), r, ""));
        }
        out.write_record(&row)?;
    }
    out.flush()?;
    Ok(())
}

/// Extra-P's JSON input: every `runs` table's rows (or those of the tables named) whose
/// parameters are numbers; one call path per device, program and variant (`device->program`,
/// `->variant` when there is one), metric `time` (per phase when a table has several), the
/// time of one repetition in seconds, repeats of one point as its values. The parameters are
/// those with a number in every run that vary in at least one call path. Extra-P wants every
/// call path of an experiment measured at every point of it: the call paths are grouped into
/// one experiment per set of points, each with the parameters that vary in it.
pub fn extrap(
    bundle: &yosoku_bundle::fs::Bundle,
    tables: &[String],
) -> Result<Vec<ExtrapExperiment>> {
    let runs: Vec<&(String, RecordBatch)> = bundle
        .tables
        .iter()
        .filter(|(n, _)| {
            if tables.is_empty() {
                n.rsplit('.').next() == Some("runs")
            } else {
                tables.contains(n)
            }
        })
        .collect();
    if runs.is_empty() {
        bail!("no `runs` table: Extra-P models measured runs over their parameters");
    }
    let mut all = Vec::new();
    for (name, batch) in &runs {
        let column = |c: &str| {
            batch
                .column_by_name(c)
                .with_context(|| format!("table `{name}` has no column `{c}`"))
        };
        let text = |c: &str| {
            yosoku_tables::access::utf8(batch, c).with_context(|| format!("table `{name}`"))
        };
        let device = text(col::DEVICE)?;
        let program = text(col::PROGRAM)?;
        let variant = text(col::VARIANT)?;
        let params = text(col::PARAMETERS)?;
        let phase = text(col::PHASE)?;
        let reps = column(col::REPETITIONS)?.as_primitive::<Int64Type>();
        let secs = column(col::MEASURED_SECS)?.as_primitive::<Float64Type>();
        let devices: std::collections::BTreeSet<&str> = device.iter().flatten().collect();
        let phases: std::collections::BTreeSet<&str> = phase.iter().flatten().collect();
        for r in 0..batch.num_rows() {
            let mut callpath = if devices.len() > 1 {
                format!("{}->{}", device.value(r), program.value(r))
            } else {
                program.value(r).to_owned()
            };
            if !variant.value(r).is_empty() {
                callpath = format!("{callpath}->{}", variant.value(r));
            }
            let metric = if phases.len() > 1 {
                format!("{} time", phase.value(r))
            } else {
                "time".to_owned()
            };
            let numeric = if params.is_null(r) {
                Vec::new()
            } else {
                yosoku_models::scaling::numeric_parameters(params.value(r))
            };
            all.push(Run {
                callpath,
                metric,
                order: numeric.iter().map(|(k, _)| k.clone()).collect(),
                params: numeric.into_iter().collect(),
                secs: secs.value(r) / reps.value(r).max(1) as f64,
            });
        }
    }
    let mut by_path: BTreeMap<(&str, &str), Vec<&Run>> = BTreeMap::new();
    for r in &all {
        by_path
            .entry((r.callpath.as_str(), r.metric.as_str()))
            .or_default()
            .push(r);
    }
    experiments_by_points(&by_path)
}

/// A call path's parameters, in the order its runs write them: numeric in every one of its
/// runs and varying among them (the runs of one bundle may be of several programs, each over
/// its own parameters), less each one that only restates an earlier one (a launch's global size
/// that equals its problem size, `n=1024;global=1024`: one value of either for each value of the
/// other), which would give Extra-P two parameters that cannot be told apart.
fn parameters_of(runs: &[&Run]) -> Vec<String> {
    let mut names: Vec<String> = runs.first().map(|r| r.order.clone()).unwrap_or_default();
    names.retain(|k| runs.iter().all(|r| r.params.contains_key(k)));
    names.retain(|k| {
        runs.iter()
            .any(|r| r.params.get(k) != runs[0].params.get(k))
    });
    let numeric: Vec<Vec<(String, f64)>> = runs
        .iter()
        .map(|r| names.iter().map(|k| (k.clone(), r.params[k])).collect())
        .collect();
    let numeric: Vec<&[(String, f64)]> = numeric.iter().map(Vec::as_slice).collect();
    yosoku_models::scaling::drop_restated(names, &numeric)
}

/// The measurements of one call path and metric: (point, values) sorted by point.
struct Member<'a> {
    callpath: &'a str,
    metric: &'a str,
    points: Vec<(Vec<f64>, Vec<f64>)>,
}

/// The groups of call paths measured over the same parameters at the same points.
type PointGroups<'a> = Vec<((Vec<String>, Vec<Vec<f64>>), Vec<Member<'a>>)>;

/// One experiment per set of call paths measured over the same parameters at the same points
/// (Extra-P wants every call path of an experiment measured at every point of it), each with the
/// parameters that vary in it; call paths measured at one point only are left out and named.
fn experiments_by_points(
    by_path: &BTreeMap<(&str, &str), Vec<&Run>>,
) -> Result<Vec<ExtrapExperiment>> {
    let mut groups: PointGroups<'_> = Vec::new();
    for (&(callpath, metric), runs) in by_path {
        let names = parameters_of(runs);
        let mut points: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for r in runs {
            let point: Vec<f64> = names.iter().map(|k| r.params[k]).collect();
            match points.iter_mut().find(|(p, _)| *p == point) {
                Some((_, values)) => values.push(r.secs),
                None => points.push((point, vec![r.secs])),
            }
        }
        points.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        let coordinates: Vec<Vec<f64>> = points.iter().map(|(p, _)| p.clone()).collect();
        let member = Member {
            callpath,
            metric,
            points,
        };
        let key = (names, coordinates);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(member),
            None => groups.push((key, vec![member])),
        }
    }
    let (groups, single): (Vec<_>, Vec<_>) = groups
        .into_iter()
        .partition(|((_, coordinates), _)| coordinates.len() > 1);
    let left_out: Vec<String> = single
        .iter()
        .flat_map(|(_, members)| members.iter().map(|m| m.callpath.to_owned()))
        .collect();
    if groups.is_empty() {
        bail!(
            "no parameter is a number in every run of a call path and varies among them ({} measured at one point only): the runs' `parameters` column holds `key=value` pairs (e.g. `n=1024;p=4`), and Extra-P models how a time changes between points",
            left_out.join(", ")
        );
    }
    let mut out = groups
        .into_iter()
        .map(|((names, coordinates), members)| experiment(&coordinates, members, &names))
        .collect::<Result<Vec<_>>>()?;
    out[0].left_out = left_out;
    Ok(out)
}

/// The JSON of one experiment: its members over the parameters that vary among `coordinates`.
fn experiment(
    coordinates: &[Vec<f64>],
    members: Vec<Member<'_>>,
    names: &[String],
) -> Result<ExtrapExperiment> {
    let varying: Vec<usize> = (0..names.len())
        .filter(|&k| coordinates.iter().any(|c| c[k] != coordinates[0][k]))
        .collect();
    let callpaths: Vec<String> = members.iter().map(|m| m.callpath.to_owned()).collect();
    let mut measurements = serde_json::Map::new();
    for m in members {
        let list: Vec<serde_json::Value> = m
            .points
            .into_iter()
            .map(|(point, values)| {
                let point: Vec<f64> = varying.iter().map(|&k| point[k]).collect();
                serde_json::json!({ "point": point, "values": values })
            })
            .collect();
        measurements
            .entry(m.callpath.to_owned())
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
            .as_object_mut()
            .map(|o| o.insert(m.metric.to_owned(), serde_json::Value::Array(list)));
    }
    let parameters: Vec<&String> = varying.iter().map(|&k| &names[k]).collect();
    let doc = serde_json::json!({ "parameters": parameters, "measurements": measurements });
    Ok(ExtrapExperiment {
        callpaths,
        json: serde_json::to_string_pretty(&doc)? + "\n",
        left_out: Vec::new(),
    })
}

/// One measured run, as Extra-P sees it.
struct Run {
    callpath: String,
    metric: String,
    params: BTreeMap<String, f64>,
    /// The parameters' names in the order the run's `parameters` wrote them.
    order: Vec<String>,
    secs: f64,
}

/// One Extra-P experiment of an export: its call paths and its JSON (the first also carries the
/// call paths left out of every experiment: those measured at one point only).
pub struct ExtrapExperiment {
    pub callpaths: Vec<String>,
    pub json: String,
    pub left_out: Vec<String>,
}

/// Where experiment `k` (from 1) of `count` goes: `output` itself for one, else
/// `<stem>-<k>.<extension>` beside it.
fn numbered(output: &Path, k: usize, count: usize) -> PathBuf {
    if count == 1 {
        return output.to_owned();
    }
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "extrap".to_owned());
    let ext = output
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    output.with_file_name(format!("{stem}-{k}{ext}"))
}

/// Writes the experiments (all or none: each to a temporary file first, then renamed).
fn write_experiments(output: &Path, experiments: &[ExtrapExperiment]) -> Result<String> {
    let n = experiments.len();
    let mut written = Vec::new();
    for (i, e) in experiments.iter().enumerate() {
        let path = numbered(output, i + 1, n);
        let tmp = temp_beside(&path);
        if let Err(err) = write_synced(&tmp, e.json.as_bytes()) {
            for (t, _) in &written {
                let _ = std::fs::remove_file(t);
            }
            let _ = std::fs::remove_file(&tmp);
            return Err(err);
        }
        written.push((tmp, path));
    }
    let mut said = Vec::new();
    for (tmp, path) in written {
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
        said.push(path);
    }
    let left_out = &experiments[0].left_out;
    let note = if left_out.is_empty() {
        String::new()
    } else {
        format!(
            "\nleft out, measured at one point only: {}",
            left_out.join(", ")
        )
    };
    if n == 1 {
        return Ok(format!("wrote {}{note}", output.display()));
    }
    let mut out = format!(
        "wrote {n} Extra-P experiments (Extra-P wants every call path of one measured at the same points):"
    );
    for (path, e) in said.iter().zip(experiments) {
        out.push_str(&format!(
            "\n  {}: {} call path(s), {}",
            path.display(),
            e.callpaths.len(),
            e.callpaths.first().map(String::as_str).unwrap_or("")
        ));
        if e.callpaths.len() > 1 {
            out.push_str(", ...");
        }
    }
    Ok(out + &note)
}

fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "export".to_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Writes `bytes` to a new file at `path` and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Fills a new directory with `fill` and puts it at `path`, replacing an earlier export there
/// (never a directory `yosoku export` did not write).
fn write_dir_atomically(path: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if path.exists() && !path.join(MARKER).is_file() {
        let empty = path.is_dir()
            && std::fs::read_dir(path)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
        if !empty {
            bail!(
                "refusing to replace {}: it exists and is not a `yosoku export` directory",
                path.display()
            );
        }
    }
    let tmp = temp_beside(path);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let result = fill(&tmp).and_then(|()| {
        std::fs::write(tmp.join(MARKER), "written by `yosoku export`\n")
            .with_context(|| format!("cannot write {}", tmp.join(MARKER).display()))?;
        if path.exists() {
            let old = path.with_file_name(format!(
                ".{}.old-{}",
                path.file_name()
                    .map_or("export".into(), |n| n.to_string_lossy()),
                std::process::id()
            ));
            std::fs::rename(path, &old)
                .with_context(|| format!("cannot move {} aside", path.display()))?;
            std::fs::rename(&tmp, path).with_context(|| {
                format!("cannot rename {} to {}", tmp.display(), path.display())
            })?;
            let _ = std::fs::remove_dir_all(&old);
            Ok(())
        } else {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
        }
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}
