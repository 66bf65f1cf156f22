//! The plugin ABI, exercised through the real host on real shared libraries: the dummy plugin
//! (built by cargo as a dev-dependency, so it sits beside this test binary) and a plugin written
//! in C against the header.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use serde_json::{Map, Value, json};
use yosoku_plugin_abi::{YosokuError, YosokuPlugin, YosokuPluginInitFn, plugin_struct_size};
use yosoku_plugin_host::{
    Collection, CollectorKind, HostError, LoadedPlugin, PluginHost, Progress,
};

/// The directory cargo put this test binary and the dummy plugin's cdylib in.
fn deps_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

fn dummy_path() -> PathBuf {
    let path = deps_dir().join(format!(
        "{}yosoku_plugin_dummy{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        path.is_file(),
        "the dummy plugin was not built at {}",
        path.display()
    );
    path
}

/// The dummy loaded from its build location; shared by the tests that never panic it.
fn dummy() -> LoadedPlugin {
    PluginHost::new(vec![]).load(&dummy_path()).unwrap()
}

/// A private copy of the dummy: a different file is a different library instance, so poisoning it
/// does not affect the other tests running in this process.
fn private_dummy(dir: &Path) -> LoadedPlugin {
    PluginHost::new(vec![])
        .load(&private_copy(dir, "copy"))
        .unwrap()
}

/// A copy of the dummy library under another name, `yosoku_plugin_dummy_<suffix>`.
fn private_copy(dir: &Path, suffix: &str) -> PathBuf {
    let copy = dir.join(format!(
        "{}yosoku_plugin_dummy_{suffix}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    std::fs::copy(dummy_path(), &copy).unwrap();
    copy
}

fn config(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// Checks the configuration, lets the plugin validate it, and collects: what the runner does.
fn collect(
    plugin: &LoadedPlugin,
    collector: &str,
    cfg: Value,
) -> Result<Vec<(String, arrow_array::RecordBatch)>, HostError> {
    collect_all(plugin, collector, cfg).map(|c| c.tables)
}

fn collect_all(
    plugin: &LoadedPlugin,
    collector: &str,
    cfg: Value,
) -> Result<Collection, HostError> {
    let checked = plugin.check_config(collector, &config(cfg))?;
    plugin.validate(&checked)?;
    plugin.collect(&checked, &mut |_| {})
}

#[test]
fn discovery_finds_the_dummy_and_reads_its_descriptor() {
    let discovery = PluginHost::new(vec![deps_dir()]).discover();
    let dummy = discovery
        .plugins
        .get("dummy")
        .unwrap_or_else(|| panic!("dummy not found; problems: {:?}", discovery.problems));
    let info = dummy.info();
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(dummy.abi_version(), 2);
    assert!(dummy.ignored_fields().is_empty());
    let synthetic = dummy.collector("synthetic").unwrap();
    assert_eq!(synthetic.kind, CollectorKind::Importer);
    assert_eq!(synthetic.tables, ["runs", "counters"]);
    let keys: Vec<&str> = synthetic.config.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(keys, ["device", "programs", "seconds"]);
    assert_eq!(
        dummy.collector("time_command").unwrap().kind,
        CollectorKind::Runner
    );
}

#[test]
fn happy_path_returns_several_named_tables_and_progress() {
    let plugin = dummy();
    let mut reports = Vec::new();
    let checked = plugin
        .check_config(
            "synthetic",
            &config(json!({"device": "gpu0", "programs": ["a", "b", "c"], "seconds": 0.5})),
        )
        .unwrap();
    let tables = plugin
        .collect(&checked, &mut |p: Progress| reports.push(p))
        .unwrap()
        .tables;
    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["runs", "counters"]);
    let runs = &tables[0].1;
    assert_eq!(runs.num_rows(), 3);
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert_eq!(secs.values().to_vec(), [0.5, 1.0, 1.5]);
    assert_eq!(tables[1].1.num_rows(), 3);
    assert_eq!(reports.len(), 3);
    assert_eq!((reports[2].done, reports[2].total), (3, 3));
}

#[test]
fn a_runner_really_runs_and_times_a_command() {
    let tables = collect(
        &dummy(),
        "time_command",
        json!({"command": ["sleep", "0.05"], "repetitions": 2}),
    )
    .unwrap();
    let runs = &tables[0].1;
    assert_eq!(runs.num_rows(), 2);
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    for s in secs.values() {
        assert!(*s >= 0.05 && *s < 5.0, "sleep 0.05 measured {s} s");
    }
    let err = collect(&dummy(), "time_command", json!({"command": ["false"]})).unwrap_err();
    assert!(
        err.to_string().contains("`false` failed on repetition 1"),
        "{err}"
    );
}

#[test]
fn version_mismatch_is_refused_and_older_versions_are_negotiated() {
    let err = PluginHost::new(vec![])
        .with_abi_versions(vec![99])
        .load(&dummy_path())
        .unwrap_err();
    assert!(matches!(err, HostError::VersionMismatch { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("ABI versions this host offers ([99])"),
        "{text}"
    );
    assert!(
        text.contains("implements ABI versions [2, 1], not 99"),
        "{text}"
    );

    let plugin = PluginHost::new(vec![])
        .with_abi_versions(vec![3, 2, 1])
        .load(&dummy_path())
        .unwrap();
    assert_eq!(plugin.abi_version(), 2);
}

#[test]
fn errors_propagate_with_their_message() {
    let err = collect(&dummy(), "fail", json!({"message": "no device at /dev/x"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin `dummy`, collector `fail` failed: no device at /dev/x"
    );
}

#[test]
fn bad_configuration_and_unknown_collectors_are_refused_before_the_call() {
    let err = collect(
        &dummy(),
        "synthetic",
        json!({"devise": "x", "programs": "a"}),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("plugin `dummy`, collector `synthetic`: "),
        "{text}"
    );
    assert!(
        text.contains("unknown config key `devise`; expected one of: device, programs, seconds"),
        "{text}"
    );
    assert!(
        text.contains("missing required config key `device` (string)"),
        "{text}"
    );
    assert!(
        text.contains("config key `programs`: expected string_list, found string"),
        "{text}"
    );

    let err = collect(&dummy(), "nope", json!({})).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "plugin `dummy` has no collector `nope`; it has: synthetic, checksum, time_command, fail"
        ),
        "{err}"
    );

    // Values the types cannot judge: the plugin's own `validate`, before anything runs.
    let err = collect(
        &dummy(),
        "time_command",
        json!({"command": ["true"], "repetitions": 0}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin `dummy`, collector `time_command` refused its configuration: config key `repetitions`: expected an integer >= 1, found 0"
    );
}

#[test]
fn a_panic_becomes_an_error_and_poisons_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = private_dummy(dir.path());
    let err = collect(&plugin, "panic", json!({})).unwrap_err();
    assert!(matches!(err, HostError::Panicked { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("the dummy plugin panics on purpose (at plugins/dummy/src/lib.rs:"),
        "{err}"
    );
    assert!(plugin.poisoned().is_some());
    // Every later call is refused, even to a healthy collector.
    let err = collect(
        &plugin,
        "synthetic",
        json!({"device": "d", "programs": ["a"]}),
    )
    .unwrap_err();
    assert!(matches!(err, HostError::Poisoned { .. }), "{err}");
    // Loading the same library again does not cure it: the poison lives in the library.
    let again = PluginHost::new(vec![]).load(plugin.path()).unwrap_err();
    assert!(again.to_string().contains("poisoned"), "{again}");
}

#[test]
fn a_panic_inside_a_stream_reader_is_an_error_and_poisons_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = private_dummy(dir.path());
    let err = collect(&plugin, "reader_panic", json!({})).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("plugin `dummy`, collector `reader_panic`, table `runs`: reading the Arrow stream failed"), "{text}");
    assert!(
        text.contains("the dummy reader panics on purpose (at plugins/dummy/src/lib.rs:"),
        "{text}"
    );
    let err = collect(
        &plugin,
        "synthetic",
        json!({"device": "d", "programs": ["a"]}),
    )
    .unwrap_err();
    assert!(matches!(err, HostError::Poisoned { .. }), "{err}");
}

#[test]
fn invalid_arrow_gets_a_clear_error() {
    let plugin = dummy();
    let err = collect(&plugin, "released_stream", json!({})).unwrap_err();
    assert!(
        err.to_string()
            .contains("table `runs`: the Arrow stream is already released"),
        "{err}"
    );

    let err = collect(&plugin, "stream_error", json!({})).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("plugin `dummy`, collector `stream_error`, table `runs`: reading the Arrow stream failed"), "{text}");
    assert!(text.contains("the device went away"), "{text}");

    let err = collect(&plugin, "wrong_schema", json!({})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin `dummy`, collector `wrong_schema`, table `runs`: not a valid `runs` table: \
         column `measured_secs` has type Utf8, expected Float64"
    );

    let err = collect(&plugin, "undeclared_table", json!({})).unwrap_err();
    assert!(
        err.to_string()
            .contains("table `surprise` is not one the collector declares (runs)"),
        "{err}"
    );
    // None of these poisoned the plugin.
    assert!(plugin.poisoned().is_none());
    assert!(
        collect(
            &plugin,
            "synthetic",
            json!({"device": "d", "programs": ["a"]})
        )
        .is_ok()
    );
}

#[test]
fn files_that_are_not_plugins_are_reported_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let so = |name: &str| {
        dir.path().join(format!(
            "{}yosoku_plugin_{name}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ))
    };
    std::fs::write(so("garbage"), b"not a shared library").unwrap();
    let empty_c = dir.path().join("empty.c");
    std::fs::write(&empty_c, "int yosoku_something_else(void) { return 0; }\n").unwrap();
    compile_c(&empty_c, &so("no_entry"), &[]);

    let discovery = PluginHost::new(vec![dir.path().to_path_buf()]).discover();
    assert!(discovery.plugins.is_empty());
    let problems: Vec<String> = discovery.problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with(&format!(
            "cannot load plugin library {}",
            so("garbage").display()
        )),
        "{problems:?}"
    );
    assert!(
        problems[1].contains("is not a yosoku plugin: it does not export `yosoku_plugin_init`"),
        "{problems:?}"
    );

    let err = PluginHost::new(vec![dir.path().to_path_buf()])
        .find("csx9000")
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("no plugin called `csx9000`; no plugins were found (searched: "),
        "{text}"
    );
}

#[test]
fn two_libraries_with_one_plugin_name_keep_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join(dummy_path().file_name().unwrap());
    std::fs::copy(dummy_path(), &copy).unwrap();
    let discovery = PluginHost::new(vec![deps_dir(), dir.path().to_path_buf()]).discover();
    assert_eq!(discovery.plugins["dummy"].path(), dummy_path());
    assert!(
        discovery
            .problems
            .iter()
            .any(|p| matches!(p, HostError::DuplicateName { name, .. } if name == "dummy")),
        "{:?}",
        discovery.problems
    );
}

fn compile_c(source: &Path, output: &Path, include: &[&Path]) {
    compile_c_with(source, output, include, &[]);
}

fn compile_c_with(source: &Path, output: &Path, include: &[&Path], defines: &[&str]) {
    let mut cc = Command::new("cc");
    cc.args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(output)
        .arg(source);
    for dir in include {
        cc.arg("-I").arg(dir);
    }
    for define in defines {
        cc.arg(format!("-D{define}"));
    }
    let status = cc
        .status()
        .expect("a C compiler (`cc`) is needed to build test plugins");
    assert!(status.success(), "cc failed on {}", source.display());
}

/// The C plugin built into `dir`, with `defines` (`-D` flags).
fn c_plugin(dir: &Path, defines: &[&str]) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = dir.join(format!(
        "{}yosoku_plugin_c_example{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    compile_c_with(
        &manifest.join("tests/c_plugin/c_plugin.c"),
        &library,
        &[&manifest.join("../abi/include")],
        defines,
    );
    library
}

#[test]
fn a_plugin_written_in_c_against_the_header_loads_and_reports_errors() {
    let dir = tempfile::tempdir().unwrap();
    let library = c_plugin(dir.path(), &[]);
    let plugin = PluginHost::new(vec![]).load(&library).unwrap();
    assert_eq!(plugin.info().name, "c_example");
    assert_eq!(plugin.info().collectors[0].name, "refuse");
    // An older plugin serves a newer host: version 2 was refused, version 1 negotiated (and
    // the refusal's message released through the plugin's callback).
    assert_eq!(plugin.abi_version(), 1);

    let err = collect(&plugin, "refuse", json!({"why": "testing"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"plugin `c_example`, collector `refuse` failed: C collector refuse refuses config {"why":"testing"} (errors released so far: 1, streams released: 0)"#
    );
    // The host released the error through the plugin's own callback.
    let err = collect(&plugin, "refuse", json!({"why": "again"})).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("(errors released so far: 2, streams released: 0)"),
        "{err}"
    );

    let err = PluginHost::new(vec![])
        .with_abi_versions(vec![3])
        .load(&library)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the C plugin implements ABI version 1 only"),
        "{err}"
    );
}

/// The C plugin builds an Arrow C stream by hand; the host reads its batch and releases it
/// through the plugin's callbacks.
#[test]
fn a_c_plugin_pushes_a_real_arrow_stream() {
    use arrow_array::cast::AsArray;
    let dir = tempfile::tempdir().unwrap();
    let plugin = PluginHost::new(vec![])
        .load(&c_plugin(dir.path(), &[]))
        .unwrap();
    let tables = collect(&plugin, "numbers", json!({})).unwrap();
    assert_eq!(tables.len(), 1);
    let (name, batch) = &tables[0];
    assert_eq!(name, "numbers");
    let names: Vec<&str> = batch
        .column_by_name("name")
        .unwrap()
        .as_string::<i32>()
        .iter()
        .flatten()
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let values = batch
        .column_by_name("value")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert_eq!(values.values().to_vec(), [1.5, 2.5, 4.0]);
    let err = collect(&plugin, "refuse", json!({"why": "count"})).unwrap_err();
    assert!(err.to_string().ends_with("streams released: 1)"), "{err}");
}

/// A plugin of a newer yosoku describes itself with fields, a collector kind and a config type
/// this host does not know: it loads, the extras are listed, and only the collector that needs
/// the unknown type is refused.
#[test]
fn a_descriptor_from_a_newer_plugin_loads_and_its_extras_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = PluginHost::new(vec![])
        .load(&c_plugin(dir.path(), &["YOSOKU_TEST_NEWER_DESCRIPTOR"]))
        .unwrap();
    assert_eq!(plugin.info().descriptor_version, 7);
    assert_eq!(
        plugin.ignored_fields(),
        [
            "homepage",
            "collectors[0].config[0].secret",
            "collectors[1].live"
        ]
    );
    let watch = plugin.collector("watch").unwrap();
    assert_eq!(watch.kind, CollectorKind::Other("streamer".into()));
    assert!(watch.unusable().is_some());
    let err = plugin
        .check_config("watch", &config(json!({"every": "5s"})))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("config key `every` has type `duration`, which this yosoku does not know"),
        "{err}"
    );
    // The collector this host understands works as ever.
    let err = collect(&plugin, "refuse", json!({"why": "x"})).unwrap_err();
    assert!(
        err.to_string().contains("C collector refuse refuses"),
        "{err}"
    );
}

#[test]
fn a_bad_descriptor_is_refused_with_every_problem_named() {
    let dir = tempfile::tempdir().unwrap();
    let library = c_plugin(dir.path(), &["YOSOKU_TEST_BAD_DESCRIPTOR"]);
    let err = PluginHost::new(vec![]).load(&library).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "plugin library {}: invalid descriptor: collector `refuse`: config key `why` is declared twice; \
             collector `refuse`: config key `why` (integer) has a default of type string; \
             collector `refuse` is declared twice; \
             collector `refuse`: table name \"Runs.v2\": use lowercase ASCII letters, digits and `_`",
            library.display()
        )
    );
}

/// The dummy, built with this SDK (ABI version 2), loaded by a host that knows only version 1:
/// the plugin fills only version 1's struct, is never asked to validate, and never touches the
/// version-2 field of the sink.
#[test]
fn a_plugin_newer_than_the_host_serves_it_with_the_older_version() {
    let old_host = PluginHost::new(vec![]).with_abi_versions(vec![1]);
    let plugin = old_host.load(&dummy_path()).unwrap();
    assert_eq!(plugin.abi_version(), 1);
    // `validate` is version 2: an older host does not call it, and the collector's own check
    // answers instead, when it runs.
    let err = collect(
        &plugin,
        "time_command",
        json!({"command": ["true"], "repetitions": 0}),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin `dummy`, collector `time_command` failed: config key `repetitions`: expected an integer >= 1, found 0"
    );
    // The input hashes are version 2 too: an older host hears nothing of them.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("input.txt");
    std::fs::write(&file, "abc").unwrap();
    let collected = collect_all(&plugin, "checksum", json!({"paths": [file]})).unwrap();
    assert!(collected.inputs_read.is_empty());
    assert_eq!(collected.tables[0].1.num_rows(), 1);

    // What an older host allocates is only version 1's struct: call the entry point with exactly
    // that many bytes, followed by a guard, and check not one byte of the guard moved.
    // SAFETY: the dummy's entry point has the ABI's signature; the buffer is large and aligned
    // enough for version 1's struct, and the plugin is told version 1.
    unsafe {
        let library = libloading::Library::new(private_copy(dir.path(), "raw")).unwrap();
        let init: libloading::Symbol<'_, YosokuPluginInitFn> =
            library.get(b"yosoku_plugin_init").unwrap();
        let v1 = plugin_struct_size(1).unwrap();
        #[repr(C, align(8))]
        struct Buffer([u8; 128]);
        let mut buffer = Buffer([0xA5; 128]);
        buffer.0[..v1].fill(0);
        let mut error = YosokuError::empty();
        let status = init(
            1,
            buffer.0.as_mut_ptr().cast::<YosokuPlugin>(),
            &raw mut error,
        );
        assert_eq!(status, 0, "{:?}", error.take_message());
        assert!(
            buffer.0[v1..].iter().all(|b| *b == 0xA5),
            "the plugin wrote past version 1"
        );
        assert_eq!(u32::from_ne_bytes(buffer.0[..4].try_into().unwrap()), 1);
        // Never unloaded: the plugin's statics must outlive every use.
        std::mem::forget(library);
    }
}

/// A file the collector reads with the SDK's `read_input` reaches the host with its size and
/// SHA-256, so the runner need not read it again.
#[test]
fn inputs_are_reported_with_their_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("input.txt");
    std::fs::write(&file, "abc").unwrap();
    let collected = collect_all(&dummy(), "checksum", json!({"paths": [file]})).unwrap();
    assert_eq!(collected.inputs_read.len(), 1);
    let read = &collected.inputs_read[0];
    assert_eq!(read.path, file);
    assert_eq!(read.size_bytes, 3);
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    assert_eq!(
        read.sha256_hex,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

/// A panic while the host releases a stream (the plugin's reader dropped in Arrow's `release`
/// callback) is caught inside the plugin: the host survives, the plugin is poisoned.
#[test]
fn a_panic_when_a_stream_is_released_poisons_the_plugin_and_the_host_survives() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = private_dummy(dir.path());
    let tables = collect(&plugin, "drop_panic", json!({})).unwrap();
    assert_eq!(tables[0].1.num_rows(), 1);
    let err = collect(
        &plugin,
        "synthetic",
        json!({"device": "d", "programs": ["a"]}),
    )
    .unwrap_err();
    assert!(matches!(err, HostError::Poisoned { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("the dummy reader panics on purpose when it is dropped"),
        "{err}"
    );
}
