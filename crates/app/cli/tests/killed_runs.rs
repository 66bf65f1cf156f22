//! Killed runs and full disks (RELIABILITY.md, "A failed run writes nothing"): `yosoku run`
//! killed with SIGKILL at many points — while it starts, collects, writes the bundle, and after
//! the new bundle is in place — leaves either the previous bundle byte for byte or the new one
//! whole, and the next run clears what a killed one left behind; a run that fills its disk fails
//! with a "no space" error and keeps the previous bundle.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
use common::{files, plugin_dir};

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A pipeline reading a CSV of `rows` measurements with the `table` plugin, in `dir`.
fn pipeline(dir: &Path, name: &str, rows: usize) -> PathBuf {
    let mut csv = String::from("program,size,time_ms,flops\n");
    for i in 0..rows {
        writeln!(
            csv,
            "kernel_{},{},{},{}",
            i % 97,
            i,
            0.5 + (i % 1013) as f64 * 1e-3,
            i * 3
        )
        .unwrap();
    }
    std::fs::write(dir.join(format!("{name}.csv")), csv).unwrap();
    let spec = dir.join(format!("{name}.toml"));
    std::fs::write(
        &spec,
        format!(
            "[pipeline]\nname = \"{name}\"\n\n[sources.mine]\nplugin = \"table\"\ncollector = \"file\"\nconfig = {{ paths = [\"{name}.csv\"], default_device = \"cpu\", program = \"program\", variant = \"size\" }}\n"
        ),
    )
    .unwrap();
    spec
}

fn command(spec: &Path, out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_yosoku"));
    command
        .args(["run", "--quiet"])
        .arg(spec)
        .arg("-o")
        .arg(out)
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn run(spec: &Path, out: &Path) {
    let result = command(spec, out).output().unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// What a run of the bundle `out` leaves beside it while it writes (`.out.tmp-<pid>`,
/// `.out.old-<pid>`).
fn leftovers(out: &Path) -> Vec<String> {
    let prefix = format!(".{}.", out.file_name().unwrap().to_str().unwrap());
    std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&prefix))
        .collect()
}

/// Files under the leftovers of `out`'s runs.
fn files_being_written(out: &Path) -> Option<usize> {
    let names = leftovers(out);
    (!names.is_empty()).then(|| {
        names
            .iter()
            .map(|n| files(&out.parent().unwrap().join(n)).len())
            .sum()
    })
}

/// When to kill a run.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// This long after it started.
    Time(Duration),
    /// As soon as the bundle being written holds this many files.
    Writing(usize),
    /// As soon as the new bundle has replaced the previous one.
    Replaced,
}

/// Whether `out` holds a whole bundle: every table its manifest lists, and nothing else.
fn assert_whole(out: &Path) {
    let bundle = yosoku_bundle::fs::read_bundle(out).unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<PathBuf> = bundle
        .manifest
        .tables
        .iter()
        .map(|t| PathBuf::from(&t.file))
        .chain([PathBuf::from(yosoku_bundle::MANIFEST_FILE)])
        .collect();
    let mut present: Vec<PathBuf> = files(out).into_keys().collect();
    let mut listed = listed;
    listed.sort();
    present.sort();
    assert_eq!(present, listed);
}

fn kill_at(spec: &Path, out: &Path, at: KillAt, previous_manifest: &[u8]) -> Child {
    let mut child = command(spec, out).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break; // finished before the point came
        }
        let now = match at {
            KillAt::Time(after) => started.elapsed() >= after,
            KillAt::Writing(n) => files_being_written(out).is_some_and(|f| f >= n),
            KillAt::Replaced => std::fs::read(out.join(yosoku_bundle::MANIFEST_FILE))
                .is_ok_and(|m| m != previous_manifest),
        };
        if now {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            panic!("{at:?}: the run neither ended nor reached the point in 60 s");
        }
        std::thread::yield_now();
    }
    let _ = child.kill(); // fails only when the run has ended and been reaped: it has not
    child
}

#[test]
fn a_run_killed_at_any_point_leaves_the_previous_bundle_or_the_new_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    // About 4 MB of tables: the bundle takes a while to write.
    let spec = pipeline(dir.path(), "measured", 60_000);
    let out = dir.path().join("out");
    run(&spec, &out);
    assert_whole(&out);
    let bundle_files = files(&out).len();

    // How long a whole run takes here, for the kill points spread over it.
    let started = Instant::now();
    run(&spec, &out);
    let whole_run = started.elapsed();

    let mut points: Vec<KillAt> = (0..16).map(|i| KillAt::Time(whole_run * i / 16)).collect();
    points.extend((0..=bundle_files).map(KillAt::Writing));
    points.extend([KillAt::Replaced, KillAt::Replaced]);

    let mut previous = files(&out);
    let (mut kept, mut replaced, mut interrupted_writes, mut finished) = (0, 0, 0, 0);
    for at in points {
        let manifest = previous[Path::new(yosoku_bundle::MANIFEST_FILE)].clone();
        let mut child = kill_at(&spec, &out, at, &manifest);
        let status = child.wait().unwrap();
        if status.success() {
            finished += 1;
        }
        let now = files(&out);
        if now == previous {
            kept += 1;
        } else {
            // Not the previous bundle: then the new one, whole, never a mixture.
            assert_whole(&out);
            replaced += 1;
            previous = now;
        }
        if !leftovers(&out).is_empty() {
            interrupted_writes += 1;
            // The next run clears them.
            run(&spec, &out);
            assert_eq!(leftovers(&out), Vec::<String>::new(), "{at:?}");
            assert_whole(&out);
            previous = files(&out);
        }
    }
    eprintln!(
        "kill points: {} (whole run {:.0} ms): previous bundle kept {kept}, new bundle whole \
         {replaced}, killed while writing {interrupted_writes}, finished first {finished}",
        16 + bundle_files + 1 + 2,
        whole_run.as_secs_f64() * 1e3
    );
    assert!(interrupted_writes >= 2, "{interrupted_writes}");
    assert!(kept > interrupted_writes, "{kept}");
    run(&spec, &out);
    assert_eq!(leftovers(&out), Vec::<String>::new());
}

/// The ways to mount a small filesystem here: a user namespace (no privilege needed where the
/// kernel allows them), else a mount namespace as root.
fn namespace_command() -> Option<Vec<&'static str>> {
    for prefix in [
        vec!["unshare", "--user", "--map-root-user", "--mount"],
        vec!["unshare", "--mount"],
    ] {
        let probe = Command::new(prefix[0])
            .args(&prefix[1..])
            .args([
                "sh",
                "-c",
                "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs \"$d\"",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if probe.is_ok_and(|s| s.success()) {
            return Some(prefix);
        }
    }
    None
}

#[test]
fn a_run_that_fills_the_disk_fails_with_no_space_and_keeps_the_previous_bundle() {
    let Some(namespace) = namespace_command() else {
        eprintln!(
            "skipped: no way to mount a small filesystem here (`unshare --user --mount` and \
             `unshare --mount` with a tmpfs both refused)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let small = pipeline(dir.path(), "small", 20);
    // About 4 MB of tables, on a 1 MiB filesystem.
    let large = pipeline(dir.path(), "large", 60_000);
    let disk = dir.path().join("disk");
    let saved = dir.path().join("saved");
    std::fs::create_dir_all(&disk).unwrap();
    std::fs::create_dir_all(&saved).unwrap();
    let script = r#"set -e
mount -t tmpfs -o size=1m tmpfs "$DISK"
"$YOSOKU" run --quiet "$SMALL" -o "$DISK/out"
cp -a "$DISK/out" "$SAVED/before"
set +e
"$YOSOKU" run --quiet "$LARGE" -o "$DISK/out" 2> "$SAVED/stderr"
echo $? > "$SAVED/code"
set -e
cp -a "$DISK/out" "$SAVED/after"
ls -A "$DISK" > "$SAVED/listing"
"$YOSOKU" run --quiet "$SMALL" -o "$DISK/out"
ls -A "$DISK" > "$SAVED/listing-after-next"
"#;
    let status = Command::new(namespace[0])
        .args(&namespace[1..])
        .args(["sh", "-c", script])
        .env("YOSOKU", env!("CARGO_BIN_EXE_yosoku"))
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .env("DISK", &disk)
        .env("SAVED", &saved)
        .env("SMALL", &small)
        .env("LARGE", &large)
        .status()
        .unwrap();
    assert!(status.success());
    let read = |name: &str| std::fs::read_to_string(saved.join(name)).unwrap();
    assert_eq!(read("code").trim(), "1");
    let stderr = read("stderr");
    eprintln!("the full disk's error: {stderr}");
    // Said once, with the file that did not fit and the bundle that was kept.
    assert_eq!(
        stderr.matches("No space left on device").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.starts_with(&format!(
            "error: writing the bundle failed: {}/.out.tmp-",
            disk.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!(
            ": No space left on device (os error 28); {}/out is as it was before\n",
            disk.display()
        )),
        "{stderr}"
    );
    assert_eq!(files(&saved.join("before")), files(&saved.join("after")));
    assert!(!files(&saved.join("before")).is_empty());
    assert_eq!(read("listing").trim(), "out");
    assert_eq!(read("listing-after-next").trim(), "out");
}
