//! `cargo xtask install [--prefix DIR] [--profile NAME]`: yosoku outside its repository. The CLI
//! into `<prefix>/bin`, the plugins into `<prefix>/lib/yosoku/plugins` (where the CLI looks,
//! relative to itself), the web viewer's files into `<prefix>/share/yosoku/web` (what
//! `yosoku serve` serves) and the bundled pipelines with their data into
//! `<prefix>/share/yosoku/pipelines`, and the MPI timer interposer (built with `mpicc` when there
//! is one) into `<prefix>/lib/yosoku`. `check` (a stage of `cargo xtask test`) installs into a
//! temporary prefix and uses it from a directory outside the repository.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{cargo, repo_root, run_cmd, target_dir, web};

/// Plugins that are not for users: the ABI's executable example and its failure modes.
const NOT_INSTALLED: &[&str] = &["dummy"];

/// The plugin directories of the workspace that are installed, by name (`plugins/<name>`).
fn plugin_names() -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(repo_root().join("plugins"))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !NOT_INSTALLED.contains(&n.as_str()))
        .collect();
    names.sort();
    Ok(names)
}

/// The directory cargo writes a profile's artifacts to.
fn profile_dir(profile: &str) -> PathBuf {
    target_dir().join(if profile == "dev" { "debug" } else { profile })
}

/// Copies `from` to `to` through a temporary file beside it, so that a running `yosoku` or an
/// interrupted install never sees half a file.
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    let tmp = to.with_file_name(format!(
        ".{}.tmp",
        to.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::copy(from, &tmp)
        .with_context(|| format!("cannot copy {} to {}", from.display(), tmp.display()))?;
    std::fs::rename(&tmp, to)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), to.display()))?;
    Ok(())
}

/// Copies the tree `from` into `to` (replacing `to` whole: a file removed upstream goes too).
fn copy_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<usize> {
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("cannot remove {}", to.display()))?;
    }
    std::fs::create_dir_all(to)?;
    let mut files = 0;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))?
    {
        let path = entry?.path();
        if skip(&path) {
            continue;
        }
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            files += copy_tree(&path, &target, skip)?;
        } else {
            copy_file(&path, &target)?;
            files += 1;
        }
    }
    Ok(files)
}

/// What `install` put where.
#[derive(Debug)]
pub struct Installed {
    pub binary: PathBuf,
    pub plugins: Vec<PathBuf>,
    /// The MPI timer interposer, when an MPI C compiler was there to build it.
    pub interposer: Option<PathBuf>,
    pub web: PathBuf,
    pub pipelines: PathBuf,
}

/// Builds the CLI and the plugins with `profile` (unless `build` is false: `cargo xtask test`
/// has built them) and installs them, the web viewer's files of `dist` and the bundled pipelines
/// into `prefix`.
pub fn install_built(prefix: &Path, profile: &str, dist: &Path, build: bool) -> Result<Installed> {
    let names = plugin_names()?;
    if build {
        let mut cargo = cargo();
        cargo.args(["build", "--profile", profile, "-p", "yosoku-cli"]);
        for n in &names {
            cargo.args(["-p", &format!("yosoku-plugin-{}", n.replace('_', "-"))]);
        }
        run_cmd(&mut cargo)?;
    }
    let built = profile_dir(profile);
    let bin = prefix.join("bin");
    let lib = prefix.join("lib/yosoku/plugins");
    let share = prefix.join("share/yosoku");
    for d in [&bin, &lib, &share] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let binary = bin.join(format!("yosoku{}", std::env::consts::EXE_SUFFIX));
    copy_file(
        &built.join(format!("yosoku{}", std::env::consts::EXE_SUFFIX)),
        &binary,
    )?;
    let mut plugins = Vec::new();
    for n in &names {
        let file = format!(
            "{}yosoku_plugin_{n}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        let to = lib.join(&file);
        copy_file(&built.join(&file), &to)?;
        plugins.push(to);
    }
    let interposer = install_interposer(&prefix.join("lib/yosoku"))?;
    let web = share.join("web");
    copy_tree(dist, &web, &|_| false)?;
    let pipelines = share.join("pipelines");
    let golden = repo_root().join("pipelines/golden");
    copy_tree(&repo_root().join("pipelines"), &pipelines, &|p| p == golden)?;
    Ok(Installed {
        binary,
        plugins,
        interposer,
        web,
        pipelines,
    })
}

/// Whether an MPI C compiler runs here.
fn has_mpicc() -> bool {
    Command::new("mpicc")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds the MPI timer interposer into `dir` with `mpicc` (through a temporary file, renamed),
/// for the `run` collector to find there; `None` when there is no MPI C compiler (said).
fn install_interposer(dir: &Path) -> Result<Option<PathBuf>> {
    if !has_mpicc() {
        eprintln!(
            "xtask: no MPI C compiler (mpicc) here: the MPI timer interposer is not installed, and the mpi_timer plugin's `run` collector needs `interposer` set (install Open MPI, e.g. Debian's openmpi-bin and libopenmpi-dev, and install again)"
        );
        return Ok(None);
    }
    let to = dir.join(crate::mpi::INTERPOSER);
    let tmp = dir.join(format!(".{}.tmp", crate::mpi::INTERPOSER));
    run_cmd(
        Command::new("mpicc")
            .args(["-O2", "-Wall", "-shared", "-fPIC", "-o"])
            .arg(&tmp)
            .arg(repo_root().join("plugins/mpi_timer/interposer/yosoku_mpi_timer.c"))
            .arg("-ldl"),
    )?;
    std::fs::rename(&tmp, &to)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), to.display()))?;
    Ok(Some(to))
}

/// `cargo xtask install [--prefix DIR] [--profile NAME]` (default `~/.local`, `release`).
pub fn command(args: &[String]) -> Result<()> {
    let mut prefix = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".local"))
        .context("no HOME: name the prefix with --prefix DIR")?;
    let mut profile = "release".to_owned();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--prefix" => prefix = PathBuf::from(it.next().context("--prefix needs a directory")?),
            "--profile" => profile = it.next().context("--profile needs a name")?.clone(),
            other => bail!(
                "unknown argument `{other}`; usage: cargo xtask install [--prefix DIR] [--profile release|dev]"
            ),
        }
    }
    let prefix = std::path::absolute(&prefix)?;
    let dist = web::build(web::WebBuild::Release)?;
    let installed = install_built(&prefix, &profile, &dist, true)?;
    println!(
        "installed into {}:\n  {}\n  {} plugins in {}\n  the MPI timer interposer: {}\n  the web viewer in {}\n  the pipelines in {}\n\n\
         Try it outside the repository:\n  {} run {}/csx600-montecarlo.toml\n  {} serve results\n\
         (add {}/bin to PATH to type `yosoku`)",
        prefix.display(),
        installed.binary.display(),
        installed.plugins.len(),
        prefix.join("lib/yosoku/plugins").display(),
        installed.interposer.as_ref().map_or_else(
            || "not installed (no mpicc here)".to_owned(),
            |p| p.display().to_string()
        ),
        installed.web.display(),
        installed.pipelines.display(),
        installed.binary.display(),
        installed.pipelines.display(),
        installed.binary.display(),
        prefix.display(),
    );
    Ok(())
}

/// Runs an MPI program (himeno_mpi, 2 ranks) through the installed yosoku's `run` collector from
/// outside the repository, no `interposer` given: the installed one is found beside yosoku.
fn mpi_run_without_interposer_path(
    installed: &Installed,
    work: &Path,
    yosoku: &dyn Fn(&[&str]) -> Command,
) -> Result<()> {
    let Some(interposer) = &installed.interposer else {
        eprintln!("xtask: no MPI C compiler: the installed yosoku's MPI run is not checked");
        return Ok(());
    };
    let himeno = crate::mpi::tools_dir().join(crate::mpi::HIMENO);
    if !himeno.is_file() {
        crate::mpi::build_tools()?;
    }
    let pipeline = work.join("mpi-installed.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[pipeline]\nname = \"mpi-installed\"\n\n[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\nconfig = {{ program = {:?}, args = [\"65\", \"33\", \"33\", \"10\"], ranks = 2, binding = \"none\", oversubscribe = true, timeout_secs = 120 }}\n",
            himeno.display().to_string()
        ),
    )?;
    run_cmd(crate::mpi::mpi_env(&mut yosoku(&[
        "run",
        &pipeline.to_string_lossy(),
        "-o",
        "results/mpi",
        "-q",
    ])))?;
    let manifest = std::fs::read_to_string(work.join("results/mpi/manifest.json"))
        .context("the installed yosoku's MPI run wrote no bundle")?;
    if !manifest.contains("run.mpi_blocks") {
        bail!("the installed yosoku's MPI run has no `run.mpi_blocks` table:\n{manifest:.400}");
    }
    eprintln!(
        "xtask: the installed yosoku ran himeno_mpi on 2 ranks with the interposer it installed ({}), no path given",
        interposer.display()
    );
    Ok(())
}

/// One HTTP GET of `path` from `addr`: the status code and the body.
fn get(addr: &str, path: &str) -> Result<(u16, String)> {
    let mut stream =
        std::net::TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("GET {path}: not an HTTP response: {text:.200}"))?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Ok((code, body))
}

/// The stage of `cargo xtask test` (`build` false: the test build's CLI and plugins, placed in
/// target/debug) and `cargo xtask install-check`: installs into a temporary prefix (the dev
/// profile, the test's web files), runs a bundled pipeline from a directory outside the
/// repository with no plugin path set, and serves its bundle and the viewer with `yosoku serve`.
pub fn check(dist: &Path, build: bool) -> Result<()> {
    let root = std::env::temp_dir().join(format!("yosoku-install-check-{}", std::process::id()));
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let (prefix, work) = (root.join("prefix"), root.join("work"));
    std::fs::create_dir_all(&work)?;
    let result = check_in(&prefix, &work, dist, build);
    let _ = std::fs::remove_dir_all(&root);
    result
}

fn check_in(prefix: &Path, work: &Path, dist: &Path, build: bool) -> Result<()> {
    let installed = install_built(prefix, "dev", dist, build)?;
    let yosoku = |args: &[&str]| {
        let mut c = Command::new(&installed.binary);
        c.args(args)
            .current_dir(work)
            .env_remove("YOSOKU_PLUGIN_PATH")
            .env_remove("YOSOKU_METRICS");
        c
    };
    let pipeline = installed.pipelines.join("csx600-montecarlo.toml");
    run_cmd(&mut yosoku(&[
        "run",
        &pipeline.to_string_lossy(),
        "-o",
        "results/mc",
        "-q",
    ]))?;
    if !work.join("results/mc/manifest.json").is_file() {
        bail!(
            "the installed yosoku wrote no bundle into {}",
            work.display()
        );
    }
    mpi_run_without_interposer_path(&installed, work, &yosoku)?;
    let listed = yosoku(&["plugins"]).output()?;
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    if !listed.contains(&prefix.join("lib/yosoku/plugins").display().to_string()) {
        bail!("`yosoku plugins` does not list the installed plugins:\n{listed}");
    }
    let mut server = yosoku(&["serve", "results", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()?;
    let outcome = (|| -> Result<()> {
        let stdout = server
            .stdout
            .take()
            .context("no stdout of `yosoku serve`")?;
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first)?;
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|u| u.split('/').next())
            .with_context(|| format!("`yosoku serve` printed no URL: {first}"))?
            .to_owned();
        let (code, page) = get(&addr, "/")?;
        if code != 200 || !page.contains("yosoku_viewer") {
            bail!("GET / from the installed server: {code}, {page:.200}");
        }
        let (code, index) = get(&addr, "/bundles/index.json")?;
        if code != 200 || !index.contains("\"mc\"") {
            bail!("GET /bundles/index.json: {code}, {index}");
        }
        let (code, _) = get(&addr, "/bundles/mc/manifest.json")?;
        if code != 200 {
            bail!("GET /bundles/mc/manifest.json: {code}");
        }
        eprintln!(
            "xtask: installed into {}, ran {} from {}, served it at http://{addr}/",
            prefix.display(),
            pipeline.display(),
            work.display()
        );
        Ok(())
    })();
    let _ = server.kill();
    let _ = server.wait();
    outcome
}
