//! The plugin ABI, exercised through the real host on real shared libraries: the dummy plugin
//! (built by cargo as a dev-dependency, so it sits beside this test binary) and a plugin written
//! in C against the header.

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use serde_json::{Map, Value, json};
use yosoku_plugin_host::{CollectorKind, HostError, LoadedPlugin, PluginHost, Progress};

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
    let copy = dir.join(format!(
        "{}yosoku_plugin_dummy_copy{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    std::fs::copy(dummy_path(), &copy).unwrap();
    PluginHost::new(vec![]).load(&copy).unwrap()
}

fn config(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn collect(
    plugin: &LoadedPlugin,
    collector: &str,
    cfg: Value,
) -> Result<Vec<(String, arrow_array::RecordBatch)>, HostError> {
    plugin.collect(collector, &config(cfg), &mut |_| {})
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
    assert_eq!(dummy.abi_version(), 1);
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
    let tables = plugin
        .collect(
            "synthetic",
            &config(json!({"device": "gpu0", "programs": ["a", "b", "c"], "seconds": 0.5})),
            &mut |p: Progress| reports.push(p),
        )
        .unwrap();
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
    assert!(text.contains("implements ABI version 1, not 99"), "{text}");

    let plugin = PluginHost::new(vec![])
        .with_abi_versions(vec![2, 1])
        .load(&dummy_path())
        .unwrap();
    assert_eq!(plugin.abi_version(), 1);
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
            "plugin `dummy` has no collector `nope`; it has: synthetic, time_command, fail"
        ),
        "{err}"
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
    let mut cc = Command::new("cc");
    cc.args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(output)
        .arg(source);
    for dir in include {
        cc.arg("-I").arg(dir);
    }
    let status = cc
        .status()
        .expect("a C compiler (`cc`) is needed to build test plugins");
    assert!(status.success(), "cc failed on {}", source.display());
}

#[test]
fn a_plugin_written_in_c_against_the_header_loads_and_reports_errors() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = dir.path().join(format!(
        "{}yosoku_plugin_c_example{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    compile_c(
        &manifest.join("tests/c_plugin/c_plugin.c"),
        &library,
        &[&manifest.join("../plugin_abi/include")],
    );
    let plugin = PluginHost::new(vec![]).load(&library).unwrap();
    assert_eq!(plugin.info().name, "c_example");
    assert_eq!(plugin.info().collectors[0].name, "refuse");

    let err = collect(&plugin, "refuse", json!({"why": "testing"})).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"plugin `c_example`, collector `refuse` failed: C collector refuse refuses config {"why":"testing"} (errors released so far: 0)"#
    );
    // The host released the first error through the plugin's own callback.
    let err = collect(&plugin, "refuse", json!({"why": "again"})).unwrap_err();
    assert!(
        err.to_string().ends_with("(errors released so far: 1)"),
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
