//! The fuzz targets of the readers of the core crates: bundles, pipeline files, traces: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_core.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use yosoku_bundle::{Manifest, ipc};
use yosoku_pipeline::PipelineSpec;
use yosoku_profiler_import::metrics;
use yosoku_regression::pmnf::{self, PmnfOptions, extrap};
use yosoku_traces::chrome;
use yosoku_traces::kernel_trace::{self as trace_file, LaneBy};
use yosoku_traces::pyramid::{ChunkRows, TILE_BINS, Tile};

use crate::yosoku_fuzz::{INPUT, check_located, check_tables, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[
    ("bundle_ipc", bundle_ipc),
    ("bundle_manifest", bundle_manifest),
    ("chrome_trace", chrome_trace),
    ("kernel_trace", kernel_trace),
    ("pipeline_spec", pipeline_spec),
    ("pyramid_chunk", pyramid_chunk),
    ("extrap_file", extrap_file),
    ("cube_profile", cube_profile),
    ("device_file", device_file),
    ("metrics_file", metrics_file),
];

/// A bundle table file as the viewer and `yosoku report` decode it: no panic, and a batch that
/// decodes encodes to a file that decodes to the same batch.
pub fn bundle_ipc(data: &[u8]) {
    if let Ok(batch) = ipc::decode(data) {
        let bytes = ipc::encode(&batch).expect("a decoded batch encodes");
        let again = ipc::decode(&bytes).expect("an encoded batch decodes");
        assert_eq!(
            batch, again,
            "the batch changed in an encode-decode round trip"
        );
    }
}

/// The reader prefixes the manifest path; the parse error must say where in it.
pub fn bundle_manifest(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Err(e) = Manifest::from_json(text) {
        check_located(&format!("{INPUT}: {e}"));
    }
}

/// As the traces plugin reads a file that fits in memory: the error is prefixed with the path.
/// Then as `yosoku trace check` reads it: a summary, or problems that each name the event, or
/// what the file as a whole is.
pub fn chrome_trace(data: &[u8]) {
    match chrome::import_slice(data, "fuzz") {
        Ok(imported) => check_tables([("spans", &imported.spans)]),
        Err(e) => check_located(&format!("{INPUT}: {e}")),
    }
    if let Err(problems) = chrome::check(data) {
        assert!(!problems.is_empty(), "a trace refused without a problem");
    }
}

/// Read in small chunks, so records straddle chunk ends.
pub fn kernel_trace(data: &[u8]) {
    let tables = trace_file::read(data, 64).and_then(|t| t.tables("fuzz", LaneBy::Sm));
    match tables {
        Ok(t) => check_tables([
            ("trace_records", &t.records),
            ("trace_alignment", &t.alignment),
            ("spans", &t.spans),
        ]),
        Err(e) => check_located(&format!("{INPUT}: {e}")),
    }
}

/// A device file of the catalogue (`--devices`, `YOSOKU_DEVICES`, what `yosoku calibrate`
/// writes): a device whose every value is a positive number with a source the file declares, or
/// an error at a line and column.
pub fn device_file(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match yosoku_devices::parse(text, INPUT) {
        Ok(device) => {
            for (name, value) in device.spec.iter().chain(&device.measured) {
                assert!(
                    value.value.is_finite() && value.value > 0.0,
                    "{name} = {} read from a device file",
                    value.value
                );
                assert!(
                    device.sources.contains_key(&value.source),
                    "{name}'s source `{}` is not among the file's",
                    value.source
                );
            }
        }
        Err(e) => check_located(&e.to_string()),
    }
}

/// A user's metric mapping (`YOSOKU_METRICS`, a profiler collector's `metrics` key) over the
/// built-in one: each alias of the file's metrics maps to its metric, or an error at a line and
/// column.
pub fn metrics_file(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match metrics::mapping().with_file(text, INPUT) {
        Ok(mapping) => {
            for info in mapping.metrics().iter().filter(|m| m.source == INPUT) {
                for (tool, name) in &info.aliases {
                    let found = mapping.lookup(tool, name).map(|c| c.name.as_str());
                    assert_eq!(
                        found,
                        Some(info.name.as_str()),
                        "{tool} name `{name}` of metric `{}`",
                        info.name
                    );
                }
            }
        }
        Err(e) => check_located(&e),
    }
}

pub fn pipeline_spec(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Err(e) = PipelineSpec::parse(INPUT, text) {
        check_located(&e.to_string());
    }
}

/// A trace pyramid's chunk or tile file as the viewer reads it from a bundle (the first byte
/// picks which): no panic, no allocation beyond what the bytes can hold; a chunk that decodes
/// encodes and decodes to the same rows, a tile that decodes has its bins.
pub fn pyramid_chunk(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    if pick % 2 == 0 {
        if let Ok(rows) = ChunkRows::decode(bytes) {
            let n = rows.len();
            let again = rows.encode_sorted().expect("decoded rows encode");
            let back = ChunkRows::decode(&again).expect("encoded rows decode");
            assert_eq!(back.len(), n, "a chunk's rows changed in a round trip");
        }
    } else {
        let lanes = usize::from(pick >> 1).max(1);
        if let Ok(tile) = Tile::decode(bytes, lanes, TILE_BINS) {
            assert_eq!(tile.occupancy.len(), lanes * TILE_BINS);
            assert_eq!(tile.kind.len(), lanes * TILE_BINS);
        }
    }
}

/// An Extra-P experiment as `yosoku scaling` reads it, in the format the first byte picks (its
/// value mod 6: text, JSON Lines, Talpas, JSON, a saved experiment's `experiment.json`, or the
/// format told by the bytes, a zip then read as a saved experiment and an Extra-P 3 experiment
/// from its bytes; each point's median where the byte is 128 or more): no panic; a refusal
/// names its line (1 or more; the binary formats, their file or byte); a read of a text names
/// every note's line, and every value read is a finite number. Where the byte's bit 6 is set, the first call paths are modelled and the
/// model evaluated at every point, by the robust search too where bit 5 is also set, without a
/// panic: the searches cost milliseconds an input, the reader microseconds, so most inputs go to
/// the reader alone.
pub fn extrap_file(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    // 0-4 a format given, 5 the format told by the bytes (a refusal there names its line).
    let format = match [
        extrap::Format::Text,
        extrap::Format::JsonLines,
        extrap::Format::Talpas,
        extrap::Format::Json,
        extrap::Format::Saved,
    ]
    .get(usize::from(pick % 6))
    {
        Some(&format) => format,
        None => match extrap::Format::detect(bytes) {
            Ok(format) => format,
            Err(e) => {
                assert!(e.line >= 1, "a refusal at line 0: {e}");
                check_located(&format!("{INPUT}:{}: {}", e.line, e.message));
                return;
            }
        },
    };
    let read = if pick % 6 == 5 && format == extrap::Format::Extrap3 {
        // Extra-P 3's binary experiment: an error names the byte it is at.
        extrap::parse_extrap3(bytes, pick >= 128).inspect_err(|e| {
            assert_eq!(e.line, 0, "{e}");
            assert!(e.message.starts_with("byte "), "names no byte: {e}");
        })
    } else if pick % 6 == 5 && format == extrap::Format::Saved {
        // A zip, as `yosoku scaling` reads a saved experiment: an error is about the file as a
        // whole (line 0) or names its line of experiment.json.
        extrap::parse_saved(bytes, pick >= 128).inspect_err(|e| {
            assert_eq!(e.line, 0, "{e}");
            let at_line = e
                .message
                .strip_prefix("experiment.json:")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
            assert!(
                at_line || e.message.contains("zip"),
                "a saved experiment's error names neither the zip nor a line: {e}"
            );
        })
    } else {
        let Some(text) = text(bytes) else { return };
        extrap::parse(format, text, pick >= 128).inspect_err(|e| {
            assert!(e.line >= 1, "a refusal at line 0: {e}");
            check_located(&format!("{INPUT}:{}: {}", e.line, e.message));
        })
    };
    let Ok(experiment) = read else { return };
    // Extra-P 3's notes are about the file as a whole (it has no lines).
    if format != extrap::Format::Extrap3 {
        for note in &experiment.notes {
            assert!(note.starts_with("line "), "a note names no line: {note}");
        }
    }
    for s in &experiment.series {
        for p in &s.points {
            assert!(
                p.coordinate.iter().chain(&p.values).all(|v| v.is_finite()),
                "{} / {}: a value that is not a finite number was read: {p:?}",
                s.callpath,
                s.metric
            );
        }
    }
    // The models of a few call paths: the searches' arithmetic on what the reader let through.
    if pick & 64 == 0 {
        return;
    }
    let options = PmnfOptions::default();
    for s in experiment.series.iter().take(2) {
        if let Ok(m) = pmnf::fit(&s.points, &options) {
            for p in &s.points {
                std::hint::black_box(m.evaluate(&p.coordinate));
            }
        }
        if pick & 32 != 0 {
            let _ = pmnf::robust::fit_robust(&s.points, &options);
        }
    }
}

/// A Cube profile (`profile.cubex`). The first byte picks the input (its second bit: read for
/// inclusive values; its next: how locations combine; its highest: medians): even, the
/// archive's bytes; odd, its members, past the tar that guards them with checksums: `anchor.xml`, then one
/// metric's `.index` and `.data` (each before the last led by its length, two bytes, little
/// endian), given as metrics 0 and 1 alike. A refusal says what is wrong; a profile read has a
/// value for every location of every call path of every metric, and, as two runs of a set
/// (`a.p1`, `a.p2`), gives an experiment whose every value is a finite number, or is refused
/// because no call path has one.
pub fn cube_profile(data: &[u8]) {
    use extrap::cube;
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    // The second bit: inclusive values.
    let values = if pick & 2 == 0 {
        cube::Values::Exclusive
    } else {
        cube::Values::Inclusive
    };
    let read = if pick % 2 == 0 {
        cube::parse_profile(bytes, values)
    } else {
        let mut rest = bytes;
        let mut take = || -> Vec<u8> {
            let (n, after) = match rest {
                [a, b, after @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), after),
                _ => (rest.len(), &[][..]),
            };
            let (part, after) = after.split_at(n.min(after.len()));
            rest = after;
            part.to_vec()
        };
        let anchor = take();
        let index = take();
        let data = rest.to_vec();
        let members: std::collections::HashMap<String, Vec<u8>> = [
            ("anchor.xml", anchor),
            ("0.index", index.clone()),
            ("0.data", data.clone()),
            ("1.index", index),
            ("1.data", data),
        ]
        .into_iter()
        .map(|(n, b)| (n.to_owned(), b))
        .collect();
        cube::parse_members(&members, values)
    };
    let profile = match read {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.trim().is_empty(), "a refusal that says nothing");
            return;
        }
    };
    for m in &profile.metrics {
        for (callpath, values) in &m.callpaths {
            assert_eq!(
                values.len(),
                profile.locations,
                "{callpath} / {}: values at {} of {} locations",
                m.name,
                values.len(),
                profile.locations
            );
        }
    }
    // Two points, the first with two repetitions (the second of them measuring twice as much,
    // and nothing at its first location), so that a point's medians and means pool several
    // runs' locations, over different numbers of them with threaded weak scaling.
    let mut doubled = profile.clone();
    for m in &mut doubled.metrics {
        for (_, values) in &mut m.callpaths {
            values.iter_mut().for_each(|v| *v *= 2.0);
            if let Some(first) = values.first_mut() {
                *first = 0.0;
            }
        }
    }
    let runs: Vec<cube::Run> = [
        ("a.p1.r1", &profile),
        ("a.p1.r2", &doubled),
        ("a.p2", &profile),
    ]
    .into_iter()
    .map(|(folder, profile)| {
        cube::Run::of_profile(
            folder.to_owned(),
            "profile.cubex".to_owned(),
            profile.clone(),
        )
    })
    .collect();
    let scaling = [
        cube::Scaling::Weak,
        cube::Scaling::WeakThreaded,
        cube::Scaling::Strong,
    ][usize::from(pick / 4 % 3)];
    // Runs of one profile naming one parameter that changes: refused only where no call path
    // has a finite value (or none has values at all).
    let experiment = match cube::cube_set(&runs, scaling, pick >= 128) {
        Ok(e) => e,
        Err(e) => {
            assert!(
                e.message.contains("no call path has values at all"),
                "two runs of one profile refused: {e}"
            );
            return;
        }
    };
    for s in &experiment.series {
        for p in &s.points {
            assert!(
                p.values.iter().all(|v| v.is_finite()),
                "{} / {}: a value that is not a finite number: {p:?}",
                s.callpath,
                s.metric
            );
        }
        assert!(
            (s.point_values.iter().flatten()).all(|m| m.is_finite()),
            "{} / {}: a point's median that is not a finite number: {:?}",
            s.callpath,
            s.metric,
            s.point_values
        );
    }
    // Every share of a run's time is a number, 0 at the least.
    let shares = cube::time_shares(&runs, scaling);
    assert!(
        shares.iter().all(|(_, s)| s.is_finite() && *s >= 0.0),
        "{shares:?}"
    );
    // The runs with their locations combined as they are read, a point's together, give the
    // same experiment, and the same shares.
    let combined: Vec<cube::Run> =
        cube::group_by_point(runs.into_iter().map(|r| (r.folder.clone(), r)))
            .into_iter()
            .flat_map(|point| cube::combine_point(point, scaling, pick >= 128))
            .collect();
    assert_eq!(cube::time_shares(&combined, scaling), shares);
    let again = cube::cube_set(&combined, scaling, pick >= 128)
        .expect("the runs combined as read refused where their whole profiles were not");
    assert_eq!(again.notes, experiment.notes);
    assert_eq!(again.series.len(), experiment.series.len());
    for (a, b) in again.series.iter().zip(&experiment.series) {
        assert_eq!((&a.callpath, &a.metric), (&b.callpath, &b.metric));
        assert_eq!(a.points, b.points, "{} / {}", a.callpath, a.metric);
        assert_eq!(
            a.point_values, b.point_values,
            "{} / {}",
            a.callpath, a.metric
        );
    }
}
