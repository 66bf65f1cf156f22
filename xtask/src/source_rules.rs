//! Rules of the source that no compiler checks, read from the code (comments, strings and test
//! modules left out):
//!
//! - the module graph of a library crate: which of its modules each module names, through `use`
//!   trees and paths; the tests keep the viewer's modules free of circles, no module importing
//!   one that imports it (ARCHITECTURE.md, "Inside the viewer");
//! - the length of every function outside tests: none over [`MAX_FUNCTION_LINES`], so that a
//!   function does one step and its steps have names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};

/// Rust source with its comments, string and character literals blanked (their line breaks
/// kept), so that only code is searched for paths.
fn code_only(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &source[i..];
        let blank = |s: &str| -> String { s.chars().filter(|c| *c == '\n').collect() };
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.push_str(&blank(&rest[..end]));
            i += end;
        } else if let Some((prefix, hashes)) =
            raw_string_start(rest, i == 0 || !is_ident(bytes[i - 1]))
        {
            let open = prefix + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[open..]
                .find(&close)
                .map_or(rest.len(), |e| open + e + close.len());
            out.push_str("\"\"");
            out.push_str(&blank(&rest[..end]));
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            out.push_str("\"\"");
            out.push_str(&blank(&rest[..end]));
            i += end;
        } else if let Some(len) = char_literal(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `r"`, `r#"`, `br##"`...: the length of the prefix (`r`, `br`) and the number of hashes of a
/// raw string starting here.
fn raw_string_start(rest: &str, at_token_start: bool) -> Option<(usize, usize)> {
    if !at_token_start {
        return None;
    }
    let after = rest.strip_prefix("br").or_else(|| rest.strip_prefix('r'))?;
    let hashes = after.bytes().take_while(|b| *b == b'#').count();
    after[hashes..]
        .starts_with('"')
        .then_some((rest.len() - after.len(), hashes))
}

/// The length of a character literal starting here (`'a'`, `'\n'`, `'\u{1F600}'`); none for a
/// lifetime.
fn char_literal(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices();
    if chars.next()?.1 != '\'' {
        return None;
    }
    let (_, c) = chars.next()?;
    if c == '\\' {
        // The escaped character, then anything up to the closing quote (`\u{1F600}`).
        let close = rest.get(3..)?.find('\'')?;
        return (close <= 10).then_some(close + 4);
    }
    let (at, next) = chars.next()?;
    (next == '\'').then_some(at + 1)
}

/// `code` without its `#[cfg(test)] mod ... { ... }` blocks: tests may look across the layers.
fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        if !trimmed.starts_with("mod ") {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        // `#[cfg(test)] mod tests;`: the module is a file of its own (left out by its name).
        let semicolon = after.find(';').unwrap_or(after.len());
        let Some(open) = after.find('{').filter(|&open| open < semicolon) else {
            rest = &after[(semicolon + 1).min(after.len())..];
            continue;
        };
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a `use` tree names, each as its segments (`a::{b, c::d}` is `a::b` and `a::c::d`;
/// `self` inside braces is the prefix itself).
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    // Without white space, and without the aliases of `x as y` (the path is `x`).
    let mut compact = String::new();
    let mut tokens = tree.split_whitespace();
    while let Some(token) = tokens.next() {
        if token == "as" {
            if let Some(alias) = tokens.next() {
                compact
                    .push_str(alias.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
            }
        } else {
            compact.push_str(token);
        }
    }
    let mut out = Vec::new();
    expand_into(&compact, &[], &mut out);
    out
}

fn expand_into(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    // Split the top level on commas outside braces.
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let (path, group) = match part.find("::{") {
            Some(at) if part.ends_with('}') => (&part[..at], Some(&part[at + 3..part.len() - 1])),
            _ => (part, None),
        };
        let mut segments = prefix.to_vec();
        if path.starts_with('{') && path.ends_with('}') {
            expand_into(&path[1..path.len() - 1], &segments, out);
            continue;
        }
        segments.extend(
            path.split("::")
                .filter(|s| !s.is_empty() && *s != "*")
                .map(str::to_owned),
        );
        match group {
            Some(group) => expand_into(group, &segments, out),
            None => {
                if segments.last().is_some_and(|s| s == "self") {
                    segments.pop();
                }
                out.push(segments);
            }
        }
    }
}

/// Every path `code` names: each `use` tree expanded, and every other `a::b::c` in it.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest_of_code = String::new();
    let mut rest = code;
    // `use` declarations (possibly `pub use`, `pub(crate) use`), up to their `;`.
    while let Some(at) = find_keyword(rest, "use") {
        rest_of_code.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let end = after.find(';').unwrap_or(after.len());
        paths.extend(expand_use_tree(after[..end].trim()));
        rest = after.get(end + 1..).unwrap_or("");
    }
    rest_of_code.push_str(rest);
    // Inline paths: identifiers joined by `::`.
    let bytes = rest_of_code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if is_ident(bytes[i]) && (i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b':')) {
            let mut segments = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while j < bytes.len() && is_ident(bytes[j]) {
                    j += 1;
                }
                segments.push(rest_of_code[start..j].to_owned());
                // Generic arguments between segments (`Registered::<V>::KIND`) end the path.
                if rest_of_code[j..].starts_with("::")
                    && bytes.get(j + 2).is_some_and(|b| is_ident(*b))
                {
                    j += 2;
                } else {
                    break;
                }
            }
            if segments.len() > 1 {
                paths.push(segments);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    paths
}

/// Where the keyword `word` starts in `code` as a whole token.
fn find_keyword(code: &str, word: &str) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(at) = code[from..].find(word).map(|a| a + from) {
        let before = at == 0 || !is_ident(bytes[at - 1]);
        let after = bytes.get(at + word.len()).is_none_or(|b| !is_ident(*b));
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The module a source file of a crate's `src/` is: `""` for lib.rs, `views` for views/mod.rs
/// or views.rs, `views::gantt::table` for views/gantt/table.rs.
fn module_of(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_owned());
        }
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The modules `code` declares under `#[cfg(test)]` as files of their own (`mod tests;`).
fn test_module_files(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = rest[at + "#[cfg(test)]".len()..].trim_start();
        let Some(after) = rest.strip_prefix("mod ") else {
            continue;
        };
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if after[name.len()..].trim_start().starts_with(';') {
            out.push(name);
        }
    }
    out
}

/// The code of every module of the crate at `src` (comments, strings and test modules left
/// out), by module path: lib.rs and the files of its modules, but not `main.rs` (another
/// crate, the binary), nor the files of test modules (`#[cfg(test)] mod tests;`).
fn crate_sources(src: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    let mut sources = BTreeMap::new();
    let mut tests = BTreeSet::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file).to_path_buf();
        if relative == Path::new("main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let code = code_only(&text);
        let module = module_of(&relative);
        for name in test_module_files(&code) {
            tests.insert(join_module(&module, &name));
        }
        sources.insert(module, without_test_modules(&code));
    }
    sources.retain(|m, _| {
        !tests
            .iter()
            .any(|t| m == t || m.starts_with(&format!("{t}::")))
    });
    Ok(sources)
}

/// `base::name`, or `name` at the crate root.
fn join_module(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_owned()
    } else {
        format!("{base}::{name}")
    }
}

/// The module graph of the library at `src` (lib.rs and the files of its modules): for each
/// module, the modules of the crate it names (through `use` or a path), test modules aside.
/// A name the crate root re-exports (`pub use data::LoadedBundle`) counts as its module's.
/// `main.rs` is another crate (the binary), and left out.
pub fn module_graph(src: &Path) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let sources = crate_sources(src)?;
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let join = join_module;
    // Names the crate root re-exports, with the module they come from.
    let mut reexports: BTreeMap<String, String> = BTreeMap::new();
    if let Some(root) = sources.get("") {
        for path in paths_in(root) {
            let mut module = String::new();
            for segment in path.iter().take(path.len().saturating_sub(1)) {
                if modules.contains(&join(&module, segment)) {
                    module = join(&module, segment);
                }
            }
            if let Some(name) = path.last() {
                reexports.insert(name.clone(), module);
            }
        }
    }
    let mut graph = BTreeMap::new();
    for (module, code) in &sources {
        if module.is_empty() {
            continue;
        }
        let mut targets = BTreeSet::new();
        for path in paths_in(code) {
            let mut segments = path.iter().map(String::as_str).peekable();
            let mut current = match segments.peek().copied() {
                Some("crate") => {
                    segments.next();
                    String::new()
                }
                Some("self") => {
                    segments.next();
                    module.clone()
                }
                Some("super") => {
                    let mut base = module.clone();
                    while segments.peek() == Some(&"super") {
                        segments.next();
                        base = base
                            .rsplit_once("::")
                            .map_or(String::new(), |(p, _)| p.to_owned());
                    }
                    base
                }
                Some(first) if modules.contains(&join(module, first)) => module.clone(),
                _ => continue,
            };
            for segment in segments {
                let next = join(&current, segment);
                if modules.contains(&next) {
                    current = next;
                } else {
                    if current.is_empty()
                        && let Some(from) = reexports.get(segment)
                    {
                        current.clone_from(from);
                    }
                    break;
                }
            }
            if !current.is_empty() && current != *module {
                targets.insert(current);
            }
        }
        graph.insert(module.clone(), targets);
    }
    Ok(graph)
}

/// A cycle of `graph` (its modules in order, the first again at the end), if it has one.
pub fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = stack[from..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

/// A cycle among the viewer's modules (`viewer/src`), if there is one.
pub fn viewer_module_cycle(root: &Path) -> Result<Option<Vec<String>>> {
    Ok(find_cycle(&module_graph(&root.join("viewer/src"))?))
}

/// The views of the viewer (`views!` in `viewer/src/views/mod.rs`) that import another view,
/// each with the one it imports: views share drawing helpers through `views::common` and
/// `views::axes`, never through a sibling view.
pub fn views_importing_views(root: &Path) -> Result<Vec<(String, String)>> {
    let registry = std::fs::read_to_string(root.join("viewer/src/views/mod.rs"))?;
    let list = registry
        .split_once("views! {")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(list, _)| list)
        .unwrap_or_default();
    let views: Vec<String> = list
        .split(',')
        .filter_map(|entry| entry.trim().split_once("::"))
        .map(|(module, _)| format!("views::{}", module.trim()))
        .collect();
    let of = |module: &str| {
        views
            .iter()
            .find(|v| module == v.as_str() || module.starts_with(&format!("{v}::")))
            .cloned()
    };
    let mut out = Vec::new();
    for (module, targets) in module_graph(&root.join("viewer/src"))? {
        let Some(view) = of(&module) else { continue };
        for target in targets {
            if let Some(other) = of(&target)
                && other != view
            {
                out.push((module.clone(), target));
            }
        }
    }
    Ok(out)
}

/// What only the viewer's `platform` module (and its entry points, `main.rs` and `web`) may
/// name: files, the environment, the browser.
pub const PLATFORM_PATHS: &[&str] = &["std::fs", "std::env", "js_sys", "web_sys", "wasm_bindgen"];

/// The viewer's modules outside `platform`, `web` and `main.rs` that name one of
/// [`PLATFORM_PATHS`] (tests aside), each with the path.
pub fn platform_code_outside_platform(root: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (module, code) in crate_sources(&root.join("viewer/src"))? {
        if module == "platform" || module == "web" {
            continue;
        }
        for path in PLATFORM_PATHS {
            if code.contains(path) {
                out.push((module.clone(), (*path).to_owned()));
            }
        }
    }
    Ok(out)
}

/// `graph` without the edges to the crate root: every module may use what `lib.rs` defines (the
/// crate's error type, the helpers all its families share), and the root declares and
/// re-exports every module, so a circle through the root is no circle. Any other circle is one,
/// a child and its parent naming each other included: a family's `mod.rs` declares and
/// re-exports, and what its modules share is a module of its own (`steps/step.rs`,
/// `transfer/gpu.rs`, `mpi/spec.rs`).
pub fn without_root_edges(
    mut graph: BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    for targets in graph.values_mut() {
        targets.retain(|t| !t.is_empty());
    }
    graph
}

/// The `src` directory of every crate of the workspace: `crates/<layer>/<crate>`, `plugins/*`,
/// `viewer` and `xtask`.
pub fn workspace_sources(root: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for parent in ["crates/core", "crates/plugin", "crates/app", "plugins"] {
        let dir = root.join(parent);
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let src = entry?.path().join("src");
            if src.is_dir() {
                out.push(src);
            }
        }
    }
    out.extend(["viewer", "xtask"].map(|c| root.join(c).join("src")));
    out.sort();
    Ok(out)
}

/// Every crate's circle of modules (after [`without_root_edges`]): the crate's `src` and
/// the modules around the circle, the first again at the end.
pub fn module_cycles(root: &Path) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for src in workspace_sources(root)? {
        if let Some(cycle) = find_cycle(&without_root_edges(module_graph(&src)?)) {
            let shown = src.strip_prefix(root).unwrap_or(&src).display().to_string();
            out.push((shown, cycle));
        }
    }
    Ok(out)
}

/// The private glob imports of a crate's own modules (`use super::*;`) outside test modules in
/// the crates at `root`: a glob hides which modules a module uses, and so the circles
/// [`module_cycles`] looks for. A `pub use family::*` re-export, and a glob of another crate
/// (a prelude), are allowed.
pub fn private_glob_imports(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for src in workspace_sources(root)? {
        let sources = crate_sources(&src)?;
        let internal = |path: &str| {
            let first = path.split("::").next().unwrap_or("");
            matches!(first, "crate" | "super" | "self")
                || sources.keys().any(|m| m.split("::").next() == Some(first))
        };
        for (module, code) in &sources {
            for statement in code.split(';') {
                let statement = statement.trim();
                if let Some(path) = statement.strip_prefix("use ")
                    && path.ends_with('*')
                    && internal(path)
                {
                    let shown = src.strip_prefix(root).unwrap_or(&src).display().to_string();
                    out.push(format!("{shown}: {module}: {statement}"));
                }
            }
        }
    }
    Ok(out)
}

/// Where code outside tests finds a bundle's model by a table name's ending or by a name
/// written into the code, under `root` (every crate's `src`): in a module that reads a manifest's
/// models (`models_of(`, `.models`), an `ends_with(` or `strip_suffix(`; anywhere, a `.model(`
/// given a literal. A model is found by its kind and its record's fields (`training`, `scores`,
/// `fitted`), never by what its tables happen to be called.
pub fn model_lookups_by_name(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for src in workspace_sources(root)? {
        let mut sources = crate_sources(&src)?;
        let main = src.join("main.rs");
        if main.is_file() {
            let text = std::fs::read_to_string(&main)
                .with_context(|| format!("cannot read {}", main.display()))?;
            sources.insert("main".to_owned(), without_test_modules(&code_only(&text)));
        }
        let shown = src.strip_prefix(root).unwrap_or(&src).display().to_string();
        out.extend(
            sources
                .iter()
                .flat_map(|(module, code)| {
                    model_lookups_in(code).into_iter().map(move |l| (module, l))
                })
                .map(|(module, line)| format!("{shown}: {module}: line {line}")),
        );
    }
    Ok(out)
}

/// The step kinds of the validate stage that save a model (each kind is a module of
/// `yosoku-pipeline`'s `steps`): a model is fitted and saved in the fit stage, and validation
/// steps name it (ARCHITECTURE, invariant 14).
pub fn validation_steps_saving_models(root: &Path) -> Result<Vec<String>> {
    let sources = crate_sources(&root.join("crates/core/pipeline/src"))?;
    Ok(sources
        .into_iter()
        .filter(|(_, code)| saves_a_model_in_validation(code))
        .map(|(module, _)| module)
        .collect())
}

/// Whether `code` (comments and strings blanked) declares a validate-stage kind that saves a
/// model.
fn saves_a_model_in_validation(code: &str) -> bool {
    code.contains("Stage::Validate") && code.contains(".saved_model(")
}

/// The lines (from 1) of `code` (comments and strings blanked) that find a model by name.
fn model_lookups_in(code: &str) -> Vec<usize> {
    let reads_models = code.contains("models_of(") || code.contains(".models");
    code.lines()
        .enumerate()
        .filter(|(_, line)| {
            let by_suffix =
                reads_models && (line.contains("ends_with(") || line.contains("strip_suffix("));
            by_suffix || line.contains(".model(\"")
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The most lines a function outside tests may take, from `fn` to its closing brace.
pub const MAX_FUNCTION_LINES: usize = 130;

/// A function of the source: where it starts, its name and its length in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSpan {
    pub file: String,
    pub line: usize,
    pub name: String,
    pub lines: usize,
}

/// Every function with a body in `code` (comments and strings already blanked), with its first
/// line and its length in lines. A nested function counts on its own and in the one around it.
fn functions_in(code: &str) -> Vec<(usize, String, usize)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = find_keyword(&code[from..], "fn").map(|a| a + from) {
        from = at + 2;
        // `fn` as a type (`fn(&str) -> bool`) has no name.
        let rest = &code[from..];
        let name_start = rest.len() - rest.trim_start().len();
        let name: String = rest[name_start..]
            .bytes()
            .take_while(|b| is_ident(*b))
            .map(char::from)
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` before a `;` (a declaration without one has none).
        let Some(open) = code[from..]
            .find(['{', ';'])
            .map(|o| o + from)
            .filter(|&o| bytes[o] == b'{')
        else {
            continue;
        };
        let mut depth = 0usize;
        let mut close = None;
        for (i, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            continue;
        };
        let first = code[..at].matches('\n').count() + 1;
        let last = code[..close].matches('\n').count() + 1;
        out.push((first, name, last - first + 1));
    }
    out
}

/// The functions over `limit` lines in the Rust files under `dirs` of the repository at `root`,
/// tests aside (`tests/` and `benches/` folders, `#[cfg(test)]` modules), longest first.
pub fn long_functions(root: &Path, dirs: &[&str], limit: usize) -> Result<Vec<FunctionSpan>> {
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files)?;
    }
    let mut long = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).unwrap_or(&file);
        if relative
            .iter()
            .any(|part| part == "tests" || part == "benches" || part == "target")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let code = without_test_modules(&code_only(&text));
        long.extend(
            functions_in(&code)
                .into_iter()
                .filter(|(_, _, lines)| *lines > limit)
                .map(|(line, name, lines)| FunctionSpan {
                    file: relative.display().to_string(),
                    line,
                    name,
                    lines,
                }),
        );
    }
    long.sort_by_key(|f| std::cmp::Reverse(f.lines));
    Ok(long)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    #[test]
    fn no_module_of_the_viewer_imports_one_that_imports_it() {
        let cycle = viewer_module_cycle(root()).unwrap();
        assert!(
            cycle.is_none(),
            "the viewer's modules import each other: {cycle:?}"
        );
        // The registry and the data layer are where cycles were: check that the graph sees
        // their edges at all.
        let graph = module_graph(&root().join("viewer/src")).unwrap();
        assert!(graph["app"].contains("views"), "{graph:#?}");
        assert!(graph["views"].contains("views::gantt"), "{graph:#?}");
        assert!(
            graph["views::gantt"].contains("views::gantt::trace"),
            "{graph:#?}"
        );
        assert!(graph["trace_store"].contains("platform"), "{graph:#?}");
        assert!(graph["web"].contains("data"), "{graph:#?}");
    }

    /// Files, the environment and the browser are the platform module's.
    #[test]
    fn only_the_platform_module_touches_the_platform() {
        let found = platform_code_outside_platform(root()).unwrap();
        assert!(
            found.is_empty(),
            "platform code outside viewer/src/platform.rs: {found:#?}"
        );
    }

    /// A view draws with the shared helpers, never with another view's.
    #[test]
    fn no_view_imports_another_view() {
        let found = views_importing_views(root()).unwrap();
        assert!(
            found.is_empty(),
            "views importing another view (move what they share to views::common): {found:#?}"
        );
    }

    /// Paths are found in `use` trees and in code, relative ones resolved against the module,
    /// names the root re-exports counted as their module's; comments, strings and test modules
    /// do not count; a cycle is reported with its modules in order.
    #[test]
    fn the_module_graph_follows_uses_and_paths_and_finds_a_cycle() {
        let dir = tempfile_dir("module-graph");
        let write = |file: &str, text: &str| write_file(&dir, file, text);
        write(
            "lib.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub use a::Thing;\n",
        );
        write(
            "a.rs",
            "use crate::{b::{self, X}, c as see};\n// crate::d::nothing\nfn f() { let s = \"crate::c\"; }\npub struct Thing;\n",
        );
        write(
            "b.rs",
            "pub mod inner;\nfn g() -> crate::Thing { inner::make() }\n",
        );
        write(
            "b/inner.rs",
            "pub fn make() -> super::super::c::C { todo!() }\n",
        );
        write(
            "c.rs",
            "pub struct C;\n#[cfg(test)]\nmod tests { use crate::a; }\n",
        );
        let graph = module_graph(&dir).unwrap();
        let edges = |m: &str| graph[m].iter().cloned().collect::<Vec<_>>();
        assert_eq!(edges("a"), ["b", "c"]);
        assert_eq!(edges("b"), ["a", "b::inner"]);
        assert_eq!(edges("b::inner"), ["c"]);
        assert!(edges("c").is_empty());
        assert_eq!(
            find_cycle(&graph),
            Some(vec!["a".into(), "b".into(), "a".into()])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The rule holds in every crate of the workspace, and sees their modules at all.
    #[test]
    fn no_module_of_any_crate_imports_one_that_imports_it() {
        let cycles = module_cycles(root()).unwrap();
        assert!(
            cycles.is_empty(),
            "modules that import each other (one must give way: move what both need into a module of its own): {cycles:#?}"
        );
        let sources = workspace_sources(root()).unwrap();
        assert!(sources.len() >= 20, "{sources:?}");
        let models = module_graph(&root().join("crates/core/models/src")).unwrap();
        assert!(
            models["mpi::predict"].contains("mpi::tables"),
            "{:#?}",
            models["mpi::predict"]
        );
        let globs = private_glob_imports(root()).unwrap();
        assert!(
            globs.is_empty(),
            "glob imports hide which modules a module uses; name what is used: {globs:#?}"
        );
    }

    /// No code finds a model by a table name's ending or a written name; the rule finds the way
    /// `yosoku predict` found its model and scores before models had fields.
    #[test]
    fn models_are_found_by_kind_and_field_never_by_a_name() {
        let found = model_lookups_by_name(root()).unwrap();
        assert!(
            found.is_empty(),
            "find a model by `models_of(KIND)` and its record's fields: {found:#?}"
        );
        let before = code_only(
            "fn model_tables(manifest: &Manifest) {\n    let model = manifest\n        .models_of(MODEL_KIND)\n        .filter(|m| m.tables[0].ends_with(&format!(\".{}\", OBSERVATIONS.name)));\n    let scores = manifest.models_of(MODEL_KIND).flat_map(|m| m.tables.iter());\n}\nfn by_name(b: &Manifest) { b.model(\"apps_model\"); }\n",
        );
        assert_eq!(model_lookups_in(&before), [4, 7]);
        // A table found by its ending, in code that reads no models, is no model lookup.
        let tables = code_only(
            "fn spans(names: &[String]) { names.iter().filter(|n| n.ends_with(\".spans\")); }\n",
        );
        assert!(model_lookups_in(&tables).is_empty());
    }

    /// Every model is fitted in the fit stage: no validate-stage kind saves one. The rule finds
    /// the way `scaling_model` recorded its models before `scaling_fit` fitted them.
    #[test]
    fn models_are_fitted_and_saved_in_the_fit_stage() {
        let found = validation_steps_saving_models(root()).unwrap();
        assert!(
            found.is_empty(),
            "fit the model in a fit step and name it from the validation step: {found:?}"
        );
        let before = code_only(
            "pub(crate) const SCALING_MODEL: StepKind = StepKind::new::<ScalingParams>(\n    \"scaling_model\",\n    Stage::Validate,\n    \"...\",\n);\nfn run() { StepOutput::new().saved_model(MODEL_KIND, training, &[&SCALING_MODELS]) }\n",
        );
        assert!(saves_a_model_in_validation(&before));
        assert!(!saves_a_model_in_validation(
            &before.replace("Stage::Validate", "Stage::Fit")
        ));
    }

    /// A parent and a child naming each other are a circle (a family's `mod.rs` re-exporting
    /// a module that uses what the `mod.rs` defines), and so are two siblings, directly or
    /// around a third; what the family's modules share in a module of its own is none. A test
    /// module's file is left out, and so are the crate root's edges.
    #[test]
    fn a_circle_of_a_parent_and_child_or_of_siblings_is_found() {
        let dir = tempfile_dir("family");
        let write = |file: &str, text: &str| write_file(&dir, file, text);
        write("lib.rs", "pub mod fam;\npub struct Error;\n");
        write(
            "fam/mod.rs",
            "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\npub use a::run;\npub struct Spec;\n",
        );
        write(
            "fam/a.rs",
            "use super::Spec;\nuse crate::Error;\npub fn run() {}\n",
        );
        write("fam/b.rs", "pub fn helper() {}\n");
        write("fam/tests.rs", "use super::*;\nuse super::a::run;\n");
        let graph = without_root_edges(module_graph(&dir).unwrap());
        assert!(!graph.contains_key("fam::tests"), "{graph:#?}");
        assert_eq!(
            find_cycle(&graph),
            Some(vec!["fam".into(), "fam::a".into(), "fam".into()])
        );
        // What the modules share in a module of their own: no circle.
        write(
            "fam/mod.rs",
            "mod a;\nmod b;\nmod spec;\n#[cfg(test)]\nmod tests;\npub use a::run;\npub use spec::Spec;\n",
        );
        write("fam/spec.rs", "pub struct Spec;\n");
        write(
            "fam/a.rs",
            "use super::spec::Spec;\nuse super::b::helper;\nuse crate::Error;\npub fn run() {}\n",
        );
        let graph = without_root_edges(module_graph(&dir).unwrap());
        assert_eq!(find_cycle(&graph), None, "{graph:#?}");
        write("fam/b.rs", "use super::a::run;\npub fn helper() {}\n");
        let graph = without_root_edges(module_graph(&dir).unwrap());
        assert_eq!(
            find_cycle(&graph),
            Some(vec!["fam::a".into(), "fam::b".into(), "fam::a".into()])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writes `text` to `file` under `dir`, making its directories.
    fn write_file(dir: &Path, file: &str, text: &str) {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn tempfile_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("yosoku-xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// No function outside tests is over `MAX_FUNCTION_LINES` lines: a longer one does several
    /// steps that want names of their own (ARCHITECTURE.md, "Where to make a change").
    #[test]
    fn no_function_outside_tests_is_over_the_limit() {
        let long = long_functions(
            root(),
            &["crates", "plugins", "viewer", "xtask"],
            MAX_FUNCTION_LINES,
        )
        .unwrap();
        assert!(
            long.is_empty(),
            "functions over {MAX_FUNCTION_LINES} lines; cut them along their steps: {long:#?}"
        );
        // The scan sees the functions at all: the longest are a little under the limit.
        let near = long_functions(root(), &["crates", "plugins"], 100).unwrap();
        assert!(near.len() >= 5, "{near:#?}");
    }

    /// A function's length runs from `fn` to its closing brace; braces in strings, comments and
    /// test modules do not count, nor do `fn` types and bodiless declarations.
    #[test]
    fn function_lengths_count_from_fn_to_the_closing_brace() {
        let source = "trait T {\n    fn declared(&self);\n}\n\nfn f(g: fn(u8) -> u8) -> u8 {\n    let s = \"}}}\";\n    // }\n    g(1)\n}\n\n#[cfg(test)]\nmod tests {\n    fn long() {\n\n\n    }\n}\n";
        let code = without_test_modules(&code_only(source));
        assert_eq!(functions_in(&code), vec![(5, "f".to_owned(), 5)]);
    }
}
