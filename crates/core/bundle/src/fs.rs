//! Writing and reading bundle directories.
//!
//! A bundle is written into a hidden temporary directory beside its destination, then swapped in
//! with one atomic step: on Linux `renameat2(RENAME_EXCHANGE)` exchanges the new and the old
//! directory, elsewhere the old one is renamed aside first. A run that fails or is killed before
//! the swap leaves only its temporary directory (removed by the next write) and the previous
//! bundle untouched.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use crate::builder::hex;
use crate::{
    BundleError, InputFile, MANIFEST_FILE, Manifest, ManifestBuilder, ModelRecord, TABLES_DIR, ipc,
    table_file_name,
};

/// A bundle read back from disk.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub manifest: Manifest,
    /// Tables in manifest order.
    pub tables: Vec<(String, RecordBatch)>,
    /// Its fitted models' files (path relative to the bundle, bytes), in manifest order.
    pub model_files: Vec<(String, Vec<u8>)>,
}

impl Bundle {
    /// The table named `<namespace>.<table>`.
    pub fn table(&self, name: &str) -> Option<&RecordBatch> {
        self.tables.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }
}

fn hidden_sibling(dir: &Path, tag: &str) -> Result<PathBuf, BundleError> {
    let name = dir.file_name().ok_or_else(|| {
        BundleError::io(
            dir,
            std::io::Error::other("a bundle needs a directory name"),
        )
    })?;
    let parent = dir.parent().unwrap_or(Path::new("."));
    Ok(parent.join(format!(".{}.{tag}", name.to_string_lossy())))
}

/// Removes temporary directories that killed runs left beside `dir`.
fn remove_leftovers(dir: &Path) {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if let Ok(entries) = std::fs::read_dir(parent) {
        for entry in entries.flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if let Some(rest) = file_name.strip_prefix(&prefix)
                && (rest.starts_with("tmp-") || rest.starts_with("old-"))
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), BundleError> {
    use std::io::Write;
    let mut file = std::fs::File::create(path).map_err(|e| BundleError::io(path, e))?;
    file.write_all(bytes)
        .map_err(|e| BundleError::io(path, e))?;
    file.sync_all().map_err(|e| BundleError::io(path, e))
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    inner: W,
    hasher: sha2::Sha256,
}

impl<W: std::io::Write> std::io::Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use sha2::Digest as _;
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `batch` to `path` as an Arrow IPC file, encoded as it is written, and syncs it.
/// Returns the SHA-256 of the file's bytes.
fn write_table(path: &Path, batch: &RecordBatch) -> Result<String, BundleError> {
    use sha2::Digest as _;
    let file = std::fs::File::create(path).map_err(|e| BundleError::io(path, e))?;
    let mut sink = Hashing {
        inner: std::io::BufWriter::with_capacity(1 << 20, file),
        hasher: sha2::Sha256::new(),
    };
    ipc::encode_to(&mut sink, batch).map_err(|source| match source {
        // The file system's refusal (a full disk), not the table's.
        arrow_schema::ArrowError::IoError(_, e) => BundleError::io(path, e),
        source => BundleError::Arrow {
            path: path.display().to_string(),
            source,
        },
    })?;
    let sha256 = hex(&sink.hasher.finalize());
    let file = sink
        .inner
        .into_inner()
        .map_err(|e| BundleError::io(path, e.into_error()))?;
    file.sync_all().map_err(|e| BundleError::io(path, e))?;
    Ok(sha256)
}

/// Writes the tables, the model files and, last, the manifest into `tmp`, each model's training
/// table's hash filled into the manifest as its file is written.
fn fill(
    tmp: &Path,
    manifest: &mut Manifest,
    tables: &[(String, RecordBatch)],
    files: &[(String, Vec<u8>)],
) -> Result<(), BundleError> {
    let tables_dir = tmp.join(TABLES_DIR);
    std::fs::create_dir_all(&tables_dir).map_err(|e| BundleError::io(&tables_dir, e))?;
    for (name, batch) in tables {
        let path = tables_dir.join(table_file_name(name));
        let sha256 = write_table(&path, batch)?;
        for training in manifest
            .models
            .iter_mut()
            .filter_map(|m| m.training.as_mut())
        {
            if training.table == *name {
                training.sha256.clone_from(&sha256);
            }
        }
    }
    for (file, bytes) in files {
        let path = tmp.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| BundleError::io(parent, e))?;
        }
        write_file(&path, bytes)?;
    }
    write_file(&tmp.join(MANIFEST_FILE), manifest.to_json().as_bytes())
}

/// Puts the finished `tmp` where `dir` is, atomically.
fn swap_in(tmp: &Path, dir: &Path) -> Result<(), BundleError> {
    if !dir.exists() {
        return std::fs::rename(tmp, dir).map_err(|e| BundleError::io(dir, e));
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        if renameat_with(CWD, tmp, CWD, dir, RenameFlags::EXCHANGE).is_ok() {
            // `tmp` now holds the previous bundle.
            let _ = std::fs::remove_dir_all(tmp);
            return Ok(());
        }
        // A file system without RENAME_EXCHANGE: fall through.
    }
    let old = hidden_sibling(dir, &format!("old-{}", std::process::id()))?;
    std::fs::rename(dir, &old).map_err(|e| BundleError::io(dir, e))?;
    if let Err(e) = std::fs::rename(tmp, dir) {
        // Put the previous bundle back.
        let _ = std::fs::rename(&old, dir);
        return Err(BundleError::io(dir, e));
    }
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// Seconds since the Unix epoch now (0 on a clock before it).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes a bundle to `dir`, replacing the bundle there: `tables` in the order given (each
/// recorded in the manifest), the manifest `builder` describes, made now. Refuses to replace a
/// directory that is not a bundle. On failure nothing at `dir` changes. Returns the manifest
/// written.
pub fn write(
    dir: &Path,
    builder: ManifestBuilder,
    tables: &[(String, RecordBatch)],
) -> Result<Manifest, BundleError> {
    write_with(dir, builder, tables, |_| Ok(()))
}

/// [`write`], with `extra` writing more files (a trace pyramid) into the new bundle's directory
/// before it replaces the old one: an error there leaves the old bundle as it was.
pub fn write_with(
    dir: &Path,
    mut builder: ManifestBuilder,
    tables: &[(String, RecordBatch)],
    extra: impl FnOnce(&Path) -> Result<(), BundleError>,
) -> Result<Manifest, BundleError> {
    builder.tables(tables);
    let (mut manifest, files) = builder.build_with_files(unix_now());
    write_manifest_and_tables(dir, &mut manifest, tables, &files, extra)?;
    Ok(manifest)
}

fn write_manifest_and_tables(
    dir: &Path,
    manifest: &mut Manifest,
    tables: &[(String, RecordBatch)],
    files: &[(String, Vec<u8>)],
    extra: impl FnOnce(&Path) -> Result<(), BundleError>,
) -> Result<(), BundleError> {
    if dir.exists() && !is_bundle(dir) {
        return Err(BundleError::NotABundle {
            path: dir.display().to_string(),
        });
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| BundleError::io(parent, e))?;
    }
    remove_leftovers(dir);
    let tmp = hidden_sibling(dir, &format!("tmp-{}", std::process::id()))?;
    let _ = std::fs::remove_dir_all(&tmp);
    let result = fill(&tmp, manifest, tables, files)
        .and_then(|()| extra(&tmp))
        .and_then(|()| swap_in(&tmp, dir));
    result.map_err(|cause| {
        let _ = std::fs::remove_dir_all(&tmp);
        BundleError::Write {
            dir: dir.display().to_string(),
            cause: Box::new(cause),
        }
    })
}

/// Writes part of `bundle` to `dir` as a bundle of its own: the tables named in `keep` (each
/// must be there), under the bundle's own manifest with its table list cut to them and without
/// its trace pyramids (their records dropped). The steps still list every table they made: the
/// manifest says what the run was, its table list what this directory holds. A model is kept,
/// with its file, where every table it is made of is kept. Written as [`write`] writes: whole
/// or not at all, refusing a directory that is not a bundle.
pub fn write_kept(dir: &Path, bundle: &Bundle, keep: &[String]) -> Result<Manifest, BundleError> {
    let mut manifest = bundle.manifest.clone();
    manifest.tables.retain(|t| keep.contains(&t.name));
    manifest.traces.clear();
    manifest
        .models
        .retain(|m| m.tables.iter().all(|t| keep.contains(t)));
    for m in &mut manifest.models {
        m.scores.retain(|t| keep.contains(t));
    }
    let files: Vec<(String, Vec<u8>)> = bundle
        .model_files
        .iter()
        .filter(|(file, _)| {
            manifest
                .models
                .iter()
                .any(|m| m.fitted.as_ref().is_some_and(|f| f.file == *file))
        })
        .cloned()
        .collect();
    let tables: Vec<(String, RecordBatch)> = bundle
        .tables
        .iter()
        .filter(|(n, _)| keep.contains(n))
        .cloned()
        .collect();
    write_manifest_and_tables(dir, &mut manifest, &tables, &files, |_| Ok(()))?;
    Ok(manifest)
}

/// The size and SHA-256 of a file, read once in blocks.
pub fn hash_file(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::Digest as _;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = sha2::Sha256::new();
    let size = std::io::copy(&mut file, &mut hasher)?;
    Ok((size, hex(&hasher.finalize())))
}

/// The manifest's record of an input file, hashed here: read by `source` under its config
/// `key`, shown as `shown` (the path as the user wrote it), read from `path`.
pub fn hashed_input(
    source: &str,
    key: &str,
    shown: String,
    path: &Path,
) -> Result<InputFile, BundleError> {
    let (size_bytes, sha256) = hash_file(path).map_err(|e| BundleError::io(path, e))?;
    Ok(InputFile {
        source: source.to_owned(),
        key: key.to_owned(),
        path: shown,
        sha256,
        size_bytes,
    })
}

/// Whether `dir` holds a bundle: it has a manifest file (whether that reads is for
/// [`read_manifest`] to say). What every command and the server ask before reading or replacing
/// a directory as a bundle.
pub fn is_bundle(dir: &Path) -> bool {
    dir.join(MANIFEST_FILE).is_file()
}

/// Reads the manifest of the bundle in `dir`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, BundleError> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| BundleError::io(&path, e))?;
    Manifest::from_json(&text).map_err(|source| BundleError::Manifest {
        path: path.display().to_string(),
        source,
    })
}

/// Reads one Arrow IPC file.
pub fn read_table_file(path: &Path) -> Result<RecordBatch, BundleError> {
    let bytes = std::fs::read(path).map_err(|e| BundleError::io(path, e))?;
    ipc::decode(&bytes).map_err(|source| BundleError::Arrow {
        path: path.display().to_string(),
        source,
    })
}

/// Reads a whole bundle.
pub fn read_bundle(dir: &Path) -> Result<Bundle, BundleError> {
    let manifest = read_manifest(dir)?;
    let tables = manifest
        .tables
        .iter()
        .map(|t| Ok((t.name.clone(), read_table_file(&dir.join(&t.file))?)))
        .collect::<Result<_, BundleError>>()?;
    let model_files = manifest
        .models
        .iter()
        .filter_map(|m| m.fitted.as_ref())
        .map(|f| {
            let path = dir.join(&f.file);
            let bytes = std::fs::read(&path).map_err(|e| BundleError::io(&path, e))?;
            Ok((f.file.clone(), bytes))
        })
        .collect::<Result<_, BundleError>>()?;
    Ok(Bundle {
        manifest,
        tables,
        model_files,
    })
}

/// A saved model read back: its training table and its fitted parameters (JSON), each checked
/// against the hash the manifest recorded when the model was saved.
#[derive(Debug, Clone)]
pub struct SavedModelFiles {
    /// The training table's name (`<namespace>.<table>`) and its rows.
    pub training_table: String,
    pub training: RecordBatch,
    pub fitted_json: Option<String>,
}

/// Reads the model `record` of the bundle in `dir`: refused where it was saved before models
/// recorded their training table, or where its training table or its file no longer has the
/// hash recorded when it was fitted (the bundle was changed since).
pub fn read_model(
    dir: &Path,
    manifest: &Manifest,
    record: &ModelRecord,
) -> Result<SavedModelFiles, BundleError> {
    let changed = |what: String| BundleError::ModelChanged {
        dir: dir.display().to_string(),
        model: record.name.clone(),
        what,
    };
    let training = record.training.as_ref().ok_or_else(|| {
        changed("it records no training table: it was saved by a yosoku older than December 2026; run its pipeline again".to_owned())
    })?;
    let table = manifest.table(&training.table).ok_or_else(|| {
        changed(format!(
            "its training table `{}` is not in the bundle",
            training.table
        ))
    })?;
    // A file's bytes, or why they are not what the model was saved with.
    let read_hashed = |file: &str, sha256: &str, what: String| {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).map_err(|e| BundleError::io(&path, e))?;
        let found = crate::sha256_hex(&bytes);
        if found != sha256 {
            return Err(changed(format!(
                "{what} ({}) has SHA-256 {found}, not the {sha256} it had when the model was fitted: it changed after the fit; run the pipeline again",
                path.display()
            )));
        }
        Ok((path, bytes))
    };
    let (path, bytes) = read_hashed(
        &table.file,
        &training.sha256,
        format!("its training table `{}`", training.table),
    )?;
    let batch = ipc::decode(&bytes).map_err(|source| BundleError::Arrow {
        path: path.display().to_string(),
        source,
    })?;
    let fitted_json = match &record.fitted {
        None => None,
        Some(f) => {
            let (path, bytes) =
                read_hashed(&f.file, &f.sha256, "its fitted parameters".to_owned())?;
            Some(
                String::from_utf8(bytes)
                    .map_err(|_| changed(format!("{} is not UTF-8 text", path.display())))?,
            )
        }
    };
    Ok(SavedModelFiles {
        training_table: training.table.clone(),
        training: batch,
        fitted_json,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn manifest(name: &str) -> ManifestBuilder {
        let mut b = ManifestBuilder::new(name, "");
        b.spec_text("p.toml", b"");
        b
    }

    fn write_bundle(
        dir: &Path,
        builder: ManifestBuilder,
        tables: &[(String, RecordBatch)],
    ) -> Result<Manifest, BundleError> {
        write(dir, builder, tables)
    }

    fn table(values: Vec<i64>) -> Vec<(String, RecordBatch)> {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(values))]).unwrap();
        vec![("s.t".to_owned(), batch)]
    }

    /// A model saved with its training table's hash and its fitted file reads back; a change to
    /// either afterwards is refused with the model, the file and what changed; a kept part
    /// keeps the model only with its tables.
    #[test]
    fn a_saved_model_reads_back_and_a_changed_table_or_file_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("b");
        let mut tables = table(vec![1, 2, 3]);
        tables.push(("s.other".to_owned(), table(vec![9]).remove(0).1));
        let mut b = manifest("m");
        b.model(
            ModelRecord {
                name: "fit".into(),
                kind: "k".into(),
                tables: vec!["s.t".into()],
                training: Some(crate::HashedTable {
                    table: "s.t".into(),
                    sha256: String::new(),
                }),
                options: serde_json::Map::new(),
                fitted: None,
                scores: Vec::new(),
            },
            Some(b"{\"a\": 1}".to_vec()),
        );
        assert!(b.model_scores("fit", "s.other"));
        assert!(!b.model_scores("nothing", "s.other"));
        let written = write(&dir, b, &tables).unwrap();
        let record = &written.models[0];
        let hashed = record.training.as_ref().unwrap();
        let (_, file_hash) = hash_file(&dir.join(TABLES_DIR).join("s.t.arrow")).unwrap();
        assert_eq!(hashed.sha256, file_hash);
        assert_eq!(record.scores, ["s.other"]);
        let back = read_manifest(&dir).unwrap();
        assert_eq!(back, written);
        let saved = read_model(&dir, &back, &back.models[0]).unwrap();
        assert_eq!(saved.training, tables[0].1);
        assert_eq!(saved.fitted_json.as_deref(), Some("{\"a\": 1}"));

        // The kept part without the training table has no model; with it, the model and file.
        let bundle = read_bundle(&dir).unwrap();
        let part = root.path().join("part");
        let kept = write_kept(&part, &bundle, &["s.other".to_owned()]).unwrap();
        assert!(kept.models.is_empty());
        let kept = write_kept(&part, &bundle, &["s.t".to_owned()]).unwrap();
        assert!(kept.models[0].scores.is_empty());
        read_model(&part, &kept, &kept.models[0]).unwrap();

        std::fs::write(dir.join("models/fit.json"), "{\"a\": 2}").unwrap();
        let e = read_model(&dir, &back, &back.models[0])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model `fit`: its fitted parameters") && e.contains("models/fit.json"),
            "{e}"
        );
        let other = crate::ipc::encode(&table(vec![1, 2, 4])[0].1).unwrap();
        std::fs::write(dir.join(TABLES_DIR).join("s.t.arrow"), other).unwrap();
        let e = read_model(&dir, &back, &back.models[0])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model `fit`: its training table `s.t`")
                && e.contains("changed after the fit"),
            "{e}"
        );
        let mut old = back.models[0].clone();
        old.training = None;
        let e = read_model(&dir, &back, &old).unwrap_err().to_string();
        assert!(e.contains("older than December 2026"), "{e}");
    }

    #[test]
    fn a_kept_part_reads_back_with_only_its_tables() {
        let root = tempfile::tempdir().unwrap();
        let whole = root.path().join("whole");
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let batch = |v: Vec<i64>| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(v))]).unwrap()
        };
        let tables = vec![
            ("a.t".to_owned(), batch(vec![1])),
            ("b.t".to_owned(), batch(vec![2, 3])),
            ("c.t".to_owned(), batch(vec![4])),
        ];
        write_bundle(&whole, manifest("three"), &tables).unwrap();
        let read = read_bundle(&whole).unwrap();
        let part = root.path().join("part");
        let kept = write_kept(&part, &read, &["c.t".to_owned(), "a.t".to_owned()]).unwrap();
        let back = read_bundle(&part).unwrap();
        assert_eq!(back.manifest, kept);
        assert_eq!(back.manifest.pipeline, read.manifest.pipeline);
        assert_eq!(
            back.manifest.created_unix_secs,
            read.manifest.created_unix_secs
        );
        // The manifest's order, not the order asked for.
        assert_eq!(back.tables, vec![tables[0].clone(), tables[2].clone()]);
        let files: Vec<String> = std::fs::read_dir(part.join(TABLES_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files.len(), 2, "{files:?}");
    }

    #[test]
    fn a_bundle_is_written_replaced_and_read_back() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("results/b");
        let first = table(vec![1, 2]);
        write_bundle(&dir, manifest("first"), &first).unwrap();
        let second = table(vec![3]);
        write_bundle(&dir, manifest("second"), &second).unwrap();
        let bundle = read_bundle(&dir).unwrap();
        assert_eq!(bundle.manifest.pipeline.name, "second");
        assert_eq!(bundle.tables, second);
        // No temporary or old directories are left beside it.
        let entries: Vec<String> = std::fs::read_dir(root.path().join("results"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(entries, ["b"]);
    }

    #[test]
    fn a_directory_that_is_not_a_bundle_is_never_replaced() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("precious.txt"), "keep me").unwrap();
        let err = write_bundle(root.path(), manifest("x"), &table(vec![1])).unwrap_err();
        assert!(err.to_string().starts_with("refusing to replace"), "{err}");
        assert!(root.path().join("precious.txt").exists());
    }

    #[test]
    fn a_failed_write_keeps_the_previous_bundle_and_leaves_nothing_behind() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("b");
        let first = table(vec![1, 2]);
        write_bundle(&dir, manifest("first"), &first).unwrap();
        // A table name that cannot be a file name makes the write fail midway.
        let bad = vec![("a/b/../../../c\0".to_owned(), first[0].1.clone())];
        assert!(write_bundle(&dir, manifest("bad"), &bad).is_err());
        assert_eq!(read_bundle(&dir).unwrap().manifest.pipeline.name, "first");
        let entries: Vec<String> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(entries, ["b"]);
    }

    #[test]
    fn leftovers_of_a_killed_run_are_cleared() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("b");
        std::fs::create_dir_all(root.path().join(".b.tmp-999999/tables")).unwrap();
        let t = table(vec![1]);
        write_bundle(&dir, manifest("x"), &t).unwrap();
        assert!(!root.path().join(".b.tmp-999999").exists());
    }

    #[test]
    fn a_manifest_of_another_format_version_is_refused() {
        let mut m = manifest("x").build(0);
        m.format_version = 99;
        let err = Manifest::from_json(&m.to_json()).unwrap_err();
        assert!(matches!(err, crate::ManifestError::Version(99)), "{err}");
        assert_eq!(
            err.to_string(),
            "key `format_version`: version 99 is not supported (this yosoku reads version 1)"
        );
    }
}
