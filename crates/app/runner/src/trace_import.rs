//! `yosoku trace import`: a kernel-trace file of any size (docs/kernel-trace.md) into a bundle
//! that holds its per-SM clock alignment and its spans as a level-of-detail pyramid with chunked
//! records (yosoku_traces::pyramid), read in three streamed passes so that memory is bounded by
//! the pyramid, not by the trace: the SMs' clocks; the pyramid and a histogram of span starts;
//! the spans into per-chunk spill files, each then sorted and written as Arrow IPC.

use std::io::Write;
use std::path::Path;

use yosoku_bundle::{InputFile, ManifestBuilder, StepRecord, TraceRecord};
use yosoku_tables::Figure;
pub use yosoku_traces::kernel_trace::LaneBy;
use yosoku_traces::kernel_trace::{
    Alignment, AlignmentScan, Columns, Header, Reader, SpanStream, alignment_batch,
};
use yosoku_traces::pyramid::{
    ChunkInfo, ChunkRows, PyramidBuilder, PyramidIndex, PyramidRecord, TILE_BINS, bucket_of,
    plan_chunks,
};

/// Why a trace could not be imported. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum TraceImportError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Trace {
        path: String,
        source: yosoku_traces::TraceError,
    },
    #[error(transparent)]
    Bundle(#[from] yosoku_bundle::BundleError),
}

/// The bundle's one table: the SMs' clock alignment.
const ALIGNMENT_TABLE: &str = "trace.trace_alignment";

/// What an import read and wrote, and how long each pass took.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceImport {
    pub records: u64,
    pub file_bytes: u64,
    pub spans: u64,
    pub lanes: usize,
    pub levels: u32,
    pub chunks: usize,
    pub backwards: u64,
    /// `measured`, or `synthetic` when the file's header says so.
    pub provenance: &'static str,
    pub alignment_pass_secs: f64,
    pub pyramid_pass_secs: f64,
    pub chunk_pass_secs: f64,
    pub total_secs: f64,
}

/// Reads a kernel-trace file in chunks, handing each chunk's records to `each`; checks the file
/// whole (header, record count) at the end. Returns the header and the file's SHA-256 when
/// `hash` is set.
fn for_each_chunk(
    input: &Path,
    hash: bool,
    mut each: impl FnMut(&Header, &Columns),
) -> Result<(Header, Option<String>, u64), TraceImportError> {
    use sha2::Digest;
    use std::io::Read;
    let io = |e| TraceImportError::Io {
        path: input.display().to_string(),
        source: e,
    };
    let trace = |e| TraceImportError::Trace {
        path: input.display().to_string(),
        source: e,
    };
    let mut file = std::fs::File::open(input).map_err(io)?;
    let mut reader = Reader::new();
    let mut hasher = hash.then(sha2::Sha256::new);
    let mut buf = vec![0u8; 8 << 20];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        if let Some(h) = hasher.as_mut() {
            h.update(&buf[..n]);
        }
        reader.feed(&buf[..n]).map_err(trace)?;
        let records = reader.take_records();
        if let Some(header) = reader.header() {
            each(header, &records);
        }
    }
    let header = reader.finish_streamed().map_err(trace)?;
    let sha = hasher.map(|h| h.finalize().iter().map(|b| format!("{b:02x}")).collect());
    Ok((header, sha, size))
}

/// `yosoku trace import`: a kernel-trace file of any size into a bundle holding its per-SM
/// alignment and its spans as a level-of-detail pyramid with chunked records, read in three
/// streamed passes (alignment; pyramid and start histogram; chunks through spill files), so that
/// memory stays bounded by the pyramid, not the trace.
pub fn import_kernel_trace(
    input: &Path,
    output: &Path,
    lanes: LaneBy,
) -> Result<TraceImport, TraceImportError> {
    let started = std::time::Instant::now();
    let trace_error = |e| TraceImportError::Trace {
        path: input.display().to_string(),
        source: e,
    };
    // Pass 1: the SMs' clocks.
    let mut scan: Option<AlignmentScan> = None;
    let (header, sha, size) = for_each_chunk(input, true, |h, cols| {
        scan.get_or_insert_with(|| AlignmentScan::new(h)).add(cols);
    })?;
    let scan = scan.unwrap_or_else(|| AlignmentScan::new(&header));
    let align = scan.finish();
    if align.records == 0 {
        return Err(trace_error(yosoku_traces::TraceError::format(
            "byte 40",
            "the trace has no records",
        )));
    }
    let pass_a = started.elapsed().as_secs_f64();
    // Pass 2: the pyramid and where the spans start.
    let (pyramid, builder) = PyramidPass::run(input, &align, lanes)?;
    let name = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".to_owned());
    let provenance = if header.synthetic {
        "synthetic"
    } else {
        "measured"
    };
    let alignment = alignment_batch(&name, &align.sms, header.timer).map_err(trace_error)?;
    let trace_dir = format!("traces/{name}");
    let described = Described {
        input,
        name: &name,
        provenance,
        header: &header,
        records: align.records,
        lanes,
        sha,
        size,
    };
    let manifest = described.manifest(&pyramid, &trace_dir);
    let pass_b = started.elapsed().as_secs_f64() - pass_a;
    let tables = vec![(ALIGNMENT_TABLE.to_owned(), alignment)];
    let mut pass_c = 0.0;
    let n_chunks = pyramid.plan.last().map_or(0, |&c| c as usize + 1);
    yosoku_bundle::fs::write_with(output, manifest, &tables, |tmp| {
        let c_started = std::time::Instant::now();
        let dir = tmp.join(&trace_dir);
        // Pass 3: each span to its chunk's spill file, each chunk then sorted and written.
        let chunks = pyramid.write_chunks(input, &align, lanes, &dir, &tmp.join(".spill"))?;
        write_tiles(builder, &dir)?;
        let index = PyramidIndex {
            format: yosoku_traces::pyramid::FORMAT.to_owned(),
            version: yosoku_traces::pyramid::VERSION,
            name: name.clone(),
            lane_kind: lanes.kind().to_owned(),
            lanes: pyramid.lane_names.clone(),
            kinds: pyramid.kinds.clone(),
            t_min_ns: pyramid.t_min,
            t_max_ns: pyramid.t_max,
            records: pyramid.spans,
            tile_bins: TILE_BINS as u32,
            levels: pyramid.levels,
            max_duration_ns: pyramid.max_duration_ns,
            provenance: provenance.to_owned(),
            chunks,
        };
        let p = dir.join("index.json");
        let json = serde_json::to_vec(&index).map_err(|e| io(&p, std::io::Error::other(e)))?;
        std::fs::write(&p, json).map_err(|e| io(&p, e))?;
        pass_c = c_started.elapsed().as_secs_f64();
        Ok(())
    })?;
    Ok(TraceImport {
        records: align.records,
        file_bytes: size,
        spans: pyramid.spans,
        lanes: pyramid.lane_names.len(),
        levels: pyramid.levels,
        chunks: n_chunks,
        backwards: pyramid.backwards,
        provenance,
        alignment_pass_secs: pass_a,
        pyramid_pass_secs: pass_b,
        chunk_pass_secs: pass_c,
        total_secs: started.elapsed().as_secs_f64(),
    })
}

/// An I/O error of a bundle being written, naming the path.
fn io(p: &Path, e: std::io::Error) -> yosoku_bundle::BundleError {
    yosoku_bundle::BundleError::Io {
        path: p.display().to_string(),
        source: e,
    }
}

/// Buckets of the histogram of span starts the chunks are planned from.
const BUCKETS: usize = 1 << 16;

/// What the second pass found (beside the pyramid it built): the lanes and kinds, the pyramid's
/// shape, and the chunk each start bucket's spans go to.
struct PyramidPass {
    lane_names: Vec<String>,
    kinds: Vec<String>,
    levels: u32,
    max_duration_ns: i64,
    /// The chunk of each start bucket.
    plan: Vec<u32>,
    spans: u64,
    backwards: u64,
    t_min: i64,
    t_max: i64,
}

impl PyramidPass {
    /// Pass 2: the spans into the pyramid, and the histogram of their starts.
    fn run(
        input: &Path,
        align: &Alignment,
        lanes: LaneBy,
    ) -> Result<(Self, PyramidBuilder), TraceImportError> {
        let (t_min, t_max) = (align.t_min_ns, align.t_max_ns.max(align.t_min_ns + 1));
        let mut stream = SpanStream::new(align, lanes).map_err(|e| TraceImportError::Trace {
            path: input.display().to_string(),
            source: e,
        })?;
        let lane_names = stream.lane_names();
        let mut builder = PyramidBuilder::new(lane_names.len(), t_min, t_max, align.records);
        let mut counts = vec![0u64; BUCKETS];
        let mut spans = 0u64;
        for_each_chunk(input, false, |_, cols| {
            stream.add(cols, &mut |r| {
                builder.add(r);
                counts[bucket_of(r.start_ns, t_min, t_max, BUCKETS)] += 1;
                spans += 1;
            });
        })?;
        let pass = Self {
            lane_names,
            kinds: stream.kind_names().to_vec(),
            backwards: stream.backwards,
            levels: builder.levels(),
            max_duration_ns: builder.max_duration_ns(),
            plan: plan_chunks(&counts),
            spans,
            t_min,
            t_max,
        };
        Ok((pass, builder))
    }

    /// Pass 3: the spans again, each to its chunk's spill file in `spill_dir`; then each chunk
    /// read back, sorted and written as Arrow IPC under `dir/chunks/` (empty chunks left out).
    fn write_chunks(
        &self,
        input: &Path,
        align: &Alignment,
        lanes: LaneBy,
        dir: &Path,
        spill_dir: &Path,
    ) -> Result<Vec<ChunkInfo>, yosoku_bundle::BundleError> {
        for d in [dir.join("chunks"), spill_dir.to_path_buf()] {
            std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
        }
        let n_chunks = self.plan.last().map_or(0, |&c| c as usize + 1);
        let mut spills = Vec::with_capacity(n_chunks);
        for c in 0..n_chunks {
            let p = spill_dir.join(format!("{c}.bin"));
            let f = std::fs::File::create(&p).map_err(|e| io(&p, e))?;
            spills.push(std::io::BufWriter::with_capacity(1 << 16, f));
        }
        let mut stream = SpanStream::new(align, lanes)
            .map_err(|e| io(input, std::io::Error::other(e.to_string())))?;
        let mut failed: Option<std::io::Error> = None;
        let (t_min, t_max) = (self.t_min, self.t_max);
        for_each_chunk(input, false, |_, cols| {
            stream.add(cols, &mut |r| {
                let c = self.plan[bucket_of(r.start_ns, t_min, t_max, BUCKETS)] as usize;
                if let Err(e) = spills[c].write_all(&spill_record(r))
                    && failed.is_none()
                {
                    failed = Some(e);
                }
            });
        })
        .map_err(|e| io(input, std::io::Error::other(e.to_string())))?;
        if let Some(e) = failed {
            return Err(io(spill_dir, e));
        }
        let mut chunks = Vec::with_capacity(n_chunks);
        for (c, w) in spills.into_iter().enumerate() {
            let p = spill_dir.join(format!("{c}.bin"));
            w.into_inner()
                .map_err(|e| io(&p, e.into_error()))?
                .sync_all()
                .ok();
            let bytes = std::fs::read(&p).map_err(|e| io(&p, e))?;
            let rows = spilled_rows(&bytes);
            std::fs::remove_file(&p).map_err(|e| io(&p, e))?;
            if rows.is_empty() {
                continue;
            }
            let first = rows.start_ns.iter().copied().min().unwrap_or(0);
            let last = rows.start_ns.iter().copied().max().unwrap_or(0);
            let n = rows.len() as u64;
            let file = format!("chunks/{}.arrow", chunks.len());
            let encoded = rows
                .encode_sorted()
                .map_err(|e| io(&dir.join(&file), std::io::Error::other(e)))?;
            std::fs::write(dir.join(&file), encoded).map_err(|e| io(&dir.join(&file), e))?;
            chunks.push(ChunkInfo {
                file,
                first_start_ns: first,
                last_start_ns: last,
                rows: n,
            });
        }
        let _ = std::fs::remove_dir(spill_dir);
        Ok(chunks)
    }
}

/// The pyramid's tiles, each as a file under `dir`.
fn write_tiles(builder: PyramidBuilder, dir: &Path) -> Result<(), yosoku_bundle::BundleError> {
    for (level, tile, t) in builder.tiles() {
        let file = dir.join(PyramidIndex::tile_file(level, tile));
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        let encoded = t
            .encode()
            .map_err(|e| io(&file, std::io::Error::other(e)))?;
        std::fs::write(&file, encoded).map_err(|e| io(&file, e))?;
    }
    Ok(())
}

/// Bytes of a span in a spill file.
const SPILL_RECORD_BYTES: usize = 30;

/// A span as a spill file holds it: lane, kind, start, duration, source row, little-endian.
fn spill_record(r: &PyramidRecord) -> [u8; SPILL_RECORD_BYTES] {
    let mut rec = [0u8; SPILL_RECORD_BYTES];
    rec[0..4].copy_from_slice(&r.lane.to_le_bytes());
    rec[4..6].copy_from_slice(&r.kind.to_le_bytes());
    rec[6..14].copy_from_slice(&r.start_ns.to_le_bytes());
    rec[14..22].copy_from_slice(&r.duration_ns.to_le_bytes());
    rec[22..30].copy_from_slice(&r.source_row.to_le_bytes());
    rec
}

/// The spans of a spill file, in the order written.
fn spilled_rows(bytes: &[u8]) -> ChunkRows {
    let mut rows = ChunkRows::default();
    for rec in bytes.chunks_exact(SPILL_RECORD_BYTES) {
        let le8 = |a: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&rec[a..a + 8]);
            i64::from_le_bytes(x)
        };
        rows.push(&PyramidRecord {
            lane: u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]),
            kind: u16::from_le_bytes([rec[4], rec[5]]),
            start_ns: le8(6),
            duration_ns: le8(14),
            source_row: le8(22),
        });
    }
    rows
}

/// What the bundle's manifest says of the trace.
struct Described<'a> {
    input: &'a Path,
    name: &'a str,
    provenance: &'static str,
    header: &'a Header,
    records: u64,
    lanes: LaneBy,
    sha: Option<String>,
    size: u64,
}

impl Described<'_> {
    /// The manifest of the trace's bundle: one step, `trace`, with the alignment table and the
    /// pyramid in `trace_dir`.
    fn manifest(&self, pyramid: &PyramidPass, trace_dir: &str) -> ManifestBuilder {
        let (name, provenance, header) = (self.name, self.provenance, self.header);
        let (spans, lanes) = (pyramid.spans, pyramid.lane_names.len());
        let mut manifest = ManifestBuilder::new(
            format!("trace-{name}"),
            format!(
                "{provenance} kernel trace of {} ({} SMs, timer {}): {} records, {spans} spans on {lanes} lanes by {}",
                header.device,
                header.sm_count,
                header.timer.name(),
                self.records,
                self.lanes.kind()
            ),
        );
        let sha = self.sha.clone().unwrap_or_default();
        manifest
            .spec_hashed(self.input.display().to_string(), sha.clone())
            .input(InputFile {
                source: "trace".to_owned(),
                key: "file".to_owned(),
                path: self.input.display().to_string(),
                sha256: sha,
                size_bytes: self.size,
            })
            .single_step(
                "collect",
                StepRecord {
                    id: "trace".to_owned(),
                    kind: "yosoku trace import".to_owned(),
                    wall_secs: 0.0,
                    inputs: Vec::new(),
                    tables: vec![ALIGNMENT_TABLE.to_owned()],
                    figures: vec![
                        Figure::new(format!("{provenance} records"), self.records as f64, "")
                            .headline(),
                        Figure::new("spans", spans as f64, ""),
                        Figure::new("lanes", lanes as f64, ""),
                        Figure::new("backwards steps", pyramid.backwards as f64, ""),
                    ],
                    notes: Vec::new(),
                },
            )
            .trace(TraceRecord {
                name: name.to_owned(),
                dir: trace_dir.to_owned(),
                records: spans,
                lanes: lanes as u64,
            });
        manifest
    }
}
