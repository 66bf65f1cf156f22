//! TAU text profiles (`profile.<node>.<context>.<thread>`, TAU_PROFILE_FORMAT=profile) as per-rank
//! compute and MPI time, so runs profiled with TAU land in the same tables as the interposer's.
//!
//! A profile starts with `<n> templated_functions_MULTI_TIME`, then a `# Name Calls Subrs Excl
//! Incl ProfileCalls # <metadata>...` line, then `n` function lines:
//! `"<name>" <calls> <subrs> <excl> <incl> <profilecalls> GROUP="<groups>"`, times in
//! microseconds. Call-path lines (`a => b`) repeat the flat ones and are skipped. TAU keeps totals,
//! not executions: each function becomes one `mpi_blocks` row holding all its calls (exclusive
//! time), with no iteration and no start; a function in group `MPI` is communication, every
//! other (`.TAU application` itself: the time outside every instrumented function) compute.

use std::path::Path;

use yosoku_plugin_sdk::PluginError;

/// One flat function of a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub calls: u64,
    pub exclusive_usecs: f64,
    pub inclusive_usecs: f64,
    pub mpi: bool,
}

/// One rank's profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub rank: i32,
    pub host: String,
    pub command: String,
    pub functions: Vec<Function>,
}

impl Profile {
    /// The top-level timer's inclusive time: the rank's wall time.
    pub fn wall_usecs(&self) -> f64 {
        self.functions
            .iter()
            .map(|f| f.inclusive_usecs)
            .fold(0.0, f64::max)
    }
}

/// The value of `<attribute><name>{name}</name><value>...</value>` in the metadata.
fn attribute(metadata: &str, name: &str) -> Option<String> {
    let key = format!("<name>{name}</name><value>");
    let start = metadata.find(&key)? + key.len();
    let end = metadata[start..].find("</value>")?;
    Some(metadata[start..start + end].to_owned())
}

/// The rank a profile file is of: `profile.<node>.<context>.<thread>`, thread 0 only.
pub fn rank_of_file(path: &Path) -> Option<i32> {
    let name = path.file_name()?.to_str()?;
    let mut parts = name.strip_prefix("profile.")?.split('.');
    let node = parts.next()?.parse().ok()?;
    let context: u32 = parts.next()?.parse().ok()?;
    let thread: u32 = parts.next()?.parse().ok()?;
    (parts.next().is_none() && context == 0 && thread == 0).then_some(node)
}

/// Parses one profile.
/// The largest count an f64 holds exactly (2^53).
const MAX_EXACT_COUNT: f64 = 9_007_199_254_740_992.0;

pub fn parse(path: &Path, rank: i32, text: &str) -> Result<Profile, PluginError> {
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let count: usize = match lines.next() {
        Some((_, first)) => first
            .split_once(' ')
            .filter(|(_, rest)| rest.starts_with("templated_functions"))
            .and_then(|(n, _)| n.parse().ok())
            .ok_or_else(|| {
                PluginError::at(
                    path,
                    1,
                    1,
                    format!(
                        "expected `<n> templated_functions_MULTI_TIME` (a TAU text profile), found `{}`",
                        first.chars().take(60).collect::<String>()
                    ),
                )
            })?,
        None => return Err(PluginError::new(format!("{}: empty profile", path.display()))),
    };
    let metadata = match lines.next() {
        Some((_, l)) if l.starts_with("# Name Calls Subrs Excl Incl") => l.to_owned(),
        Some((n, l)) => {
            return Err(PluginError::at(
                path,
                n,
                1,
                format!(
                    "expected the header `# Name Calls Subrs Excl Incl ProfileCalls ...`, found `{}`",
                    l.chars().take(60).collect::<String>()
                ),
            ));
        }
        None => {
            return Err(PluginError::at_line(
                path,
                2,
                "the profile stops before its header",
            ));
        }
    };
    let mut functions = Vec::new();
    for _ in 0..count {
        let Some((n, line)) = lines.next() else {
            // Named at the line after the last: where the next function was expected.
            return Err(PluginError::at_line(
                path,
                text.lines().count() + 1,
                format!(
                    "the header announces {count} functions but the file ends after {} (truncated?)",
                    functions.len()
                ),
            ));
        };
        let rest = line
            .strip_prefix('"')
            .ok_or_else(|| PluginError::at(path, n, 1, "expected a quoted function name"))?;
        let close = rest.find('"').ok_or_else(|| {
            PluginError::at(path, n, 2, "the function name's closing quote is missing")
        })?;
        let name = rest[..close].trim().to_owned();
        let fields: Vec<&str> = rest[close + 1..].split_whitespace().collect();
        let column = close + 3;
        let number = |i: usize, what: &str| -> Result<f64, PluginError> {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    PluginError::at(
                        path,
                        n,
                        column,
                        format!(
                            "`{name}`: field {} ({what}) must be a number >= 0, found `{}`",
                            i + 1,
                            fields.get(i).unwrap_or(&"")
                        ),
                    )
                })
        };
        let calls = number(0, "Calls")?;
        // A count, exact in the f64 TAU writes it as (found by `cargo xtask fuzz --target
        // tau_profile`: 1e60 calls became u64::MAX, then -1 in `mpi_ranks`).
        if calls.fract() != 0.0 || calls > MAX_EXACT_COUNT {
            return Err(PluginError::at(
                path,
                n,
                column,
                format!(
                    "`{name}`: field 1 (Calls) must be a whole number up to 2^53, found `{}`",
                    fields[0]
                ),
            ));
        }
        let exclusive = number(2, "Excl")?;
        let inclusive = number(3, "Incl")?;
        if name.contains(" => ") {
            continue;
        }
        let group = fields
            .iter()
            .find_map(|f| f.strip_prefix("GROUP=\""))
            .unwrap_or("")
            .trim_end_matches('"');
        functions.push(Function {
            mpi: group.split('|').any(|g| g == "MPI"),
            name,
            calls: calls as u64,
            exclusive_usecs: exclusive,
            inclusive_usecs: inclusive,
        });
    }
    if functions.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no functions in the profile",
            path.display()
        )));
    }
    Ok(Profile {
        rank,
        host: attribute(&metadata, "Hostname")
            .or_else(|| attribute(&metadata, "Node Name"))
            .unwrap_or_default(),
        command: attribute(&metadata, "Command Line").unwrap_or_default(),
        functions,
    })
}

/// Every `profile.<rank>.0.0` in `dir`, by rank; every rank from 0 to the highest must be there.
pub fn read_dir(dir: &Path) -> Result<Vec<Profile>, PluginError> {
    if dir.is_file() {
        let text = std::fs::read(dir).map_err(|e| PluginError::io(dir, &e))?;
        let head = String::from_utf8_lossy(&text[..text.len().min(4096)]).into_owned();
        return Err(yosoku_plugin_sdk::formats::refusal(
            dir,
            None,
            &head,
            ("mpi_timer", "tau_profile"),
            "a file, where a directory of TAU profiles (profile.<rank>.0.0) was expected",
        ));
    }
    let mut files: Vec<(i32, std::path::PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| PluginError::io(dir, &e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| rank_of_file(&p).map(|r| (r, p)))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no TAU profiles (profile.<rank>.0.0) in it",
            dir.display()
        )));
    }
    if let Some(missing) = (0..files.len() as i32).find(|r| !files.iter().any(|f| f.0 == *r)) {
        return Err(PluginError::new(format!(
            "{}: rank {missing} has no profile (expected {}); ranks found: {:?}",
            dir.display(),
            dir.join(format!("profile.{missing}.0.0")).display(),
            files.iter().map(|f| f.0).collect::<Vec<_>>()
        )));
    }
    files
        .iter()
        .map(|(rank, path)| {
            let text = yosoku_plugin_sdk::read_input_to_string(path)?;
            parse(path, *rank, &text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "3 templated_functions_MULTI_TIME\n\
        # Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>Hostname</name><value>n1</value></attribute></metadata>\n\
        \".TAU application\" 1 2 100 400 0 GROUP=\"TAU_DEFAULT\" \n\
        \"MPI_Send()  \" 5 0 300 300 0 GROUP=\"MPI\" \n\
        \".TAU application => MPI_Send()  \" 5 0 300 300 0 GROUP=\"TAU_CALLPATH|MPI\" \n\
        0 aggregates\n";

    #[test]
    fn flat_functions_are_read_and_call_paths_skipped() {
        let p = parse(Path::new("profile.1.0.0"), 1, PROFILE).unwrap();
        assert_eq!(p.host, "n1");
        assert_eq!(p.functions.len(), 2);
        assert_eq!(
            (
                p.functions[1].name.as_str(),
                p.functions[1].calls,
                p.functions[1].mpi
            ),
            ("MPI_Send()", 5, true)
        );
        assert_eq!(p.wall_usecs(), 400.0);
        assert_eq!(rank_of_file(Path::new("x/profile.3.0.0")), Some(3));
        assert_eq!(rank_of_file(Path::new("profile.3.0.1")), None);
    }

    #[test]
    fn bad_profiles_name_file_line_and_column() {
        let e = parse(Path::new("p"), 0, "hello\n").unwrap_err().to_string();
        assert!(
            e.starts_with("p:1:1: expected `<n> templated_functions"),
            "{e}"
        );
        let bad = PROFILE.replace("\" 5 0 300 300", "\" 1e60 0 300 300");
        let e = parse(Path::new("p"), 0, &bad).unwrap_err().to_string();
        assert!(
            e.starts_with("p:4:") && e.contains("must be a whole number up to 2^53, found `1e60`"),
            "{e}"
        );
        let bad = PROFILE.replace("\" 5 0 300 300", "\" 5 0 x 300");
        let e = parse(Path::new("p"), 0, &bad).unwrap_err().to_string();
        assert!(e.starts_with("p:4:"), "{e}");
        assert!(
            e.contains("`MPI_Send()`: field 3 (Excl) must be a number >= 0, found `x`"),
            "{e}"
        );
        let cut: String = PROFILE.lines().take(3).map(|l| format!("{l}\n")).collect();
        let e = parse(Path::new("p"), 0, &cut).unwrap_err().to_string();
        assert!(
            e.starts_with("p:4: ") && e.contains("announces 3 functions but the file ends after 1"),
            "{e}"
        );
    }
}
