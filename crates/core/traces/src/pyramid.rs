//! The level-of-detail form of a large trace: what a viewer needs to draw 100 million records by
//! reading only what is on screen (docs/kernel-trace.md, "Large traces").
//!
//! ```text
//! <bundle>/traces/<name>/
//!   index.json                 lanes, kinds, time range, levels, chunks (PyramidIndex)
//!   levels/<l>/<t>.arrow       tile t of level l: per lane, TILE_BINS bins of occupancy and
//!                              dominant kind; level l has 2^l tiles across the whole trace
//!   chunks/<c>.arrow           the records themselves, sorted by start, in chunks of about
//!                              CHUNK_ROWS rows, each a contiguous range of start times
//! ```
//!
//! A bin's occupancy is the busy time of the lane in the bin over the bin's length (above 1 when
//! records overlap: threads sharing an SM); its kind is the kind with the most busy time in it
//! (exact within a record's bin, merged approximately across records: a kind keeps the bin while
//! it holds the most time of any one kind seen so far).
//!
//! A view of `pixels` columns over `[t0, t1]` reads the coarsest level whose bins are at most
//! half a pixel, and only the tiles that overlap the view; past the finest level it reads the
//! chunks that can hold a record in view. Memory and transfer follow the screen, not the trace.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, Float32Array, Int64Array, RecordBatch, UInt16Array, UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use serde::{Deserialize, Serialize};

/// Bins per lane in one tile.
pub const TILE_BINS: usize = 2048;
/// Rows per chunk the builder aims at.
pub const CHUNK_ROWS: u64 = 1 << 18;
/// The `format` of `index.json`.
pub const FORMAT: &str = "yosoku-trace-pyramid";
pub const VERSION: u32 = 1;
/// Budget of bins (all lanes) at the finest level: 14 bytes each while building.
pub const MAX_FINEST_BINS: usize = 32 << 20;

/// `index.json` of a trace pyramid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyramidIndex {
    pub format: String,
    pub version: u32,
    pub name: String,
    /// What a lane is (`sm`, `block`, `thread`, `rank`).
    pub lane_kind: String,
    pub lanes: Vec<String>,
    pub kinds: Vec<String>,
    pub t_min_ns: i64,
    pub t_max_ns: i64,
    pub records: u64,
    pub tile_bins: u32,
    /// Level l (0 = coarsest) has 2^l tiles.
    pub levels: u32,
    /// The longest record: a record that starts this long before a view may reach into it.
    pub max_duration_ns: i64,
    /// Whether the records are a measurement or synthetic (generated to measure the viewer).
    pub provenance: String,
    pub chunks: Vec<ChunkInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkInfo {
    pub file: String,
    pub first_start_ns: i64,
    pub last_start_ns: i64,
    pub rows: u64,
}

/// Why a pyramid's index, tile or chunk could not be read or written. The caller names the
/// file.
#[derive(Debug, thiserror::Error)]
pub enum PyramidError {
    #[error("invalid pyramid index: {0}")]
    IndexJson(#[from] serde_json::Error),
    #[error(
        "a pyramid index of format {format:?} version {version}; this yosoku reads {FORMAT:?} version {VERSION}"
    )]
    IndexVersion { format: String, version: u32 },
    #[error("invalid pyramid index: empty time range or no levels")]
    EmptyIndex,
    /// The bytes are not an Arrow IPC file this reader trusts (`yosoku_bundle::ipc::check_file`
    /// or arrow-ipc refused them).
    #[error("not an Arrow IPC file: {0}")]
    NotIpc(ArrowError),
    /// Arrow could not build, write or read a batch.
    #[error("{0}")]
    Arrow(#[from] ArrowError),
    #[error("unexpected columns {0:?}")]
    Columns(Vec<String>),
    #[error("a tile of {bins} bins; expected {lanes} lanes x {tile_bins}")]
    TileSize {
        bins: usize,
        lanes: usize,
        tile_bins: usize,
    },
    #[error("column `{column}` is not {expected}")]
    ColumnType {
        column: String,
        expected: &'static str,
    },
    #[error("nulls in column `{0}` of a chunk")]
    Nulls(String),
}

impl PyramidIndex {
    pub fn from_json(bytes: &[u8]) -> Result<Self, PyramidError> {
        let index: PyramidIndex = serde_json::from_slice(bytes)?;
        if index.format != FORMAT || index.version != VERSION {
            return Err(PyramidError::IndexVersion {
                format: index.format,
                version: index.version,
            });
        }
        if index.t_max_ns <= index.t_min_ns || index.tile_bins == 0 || index.levels == 0 {
            return Err(PyramidError::EmptyIndex);
        }
        Ok(index)
    }

    pub fn span_ns(&self) -> f64 {
        (self.t_max_ns - self.t_min_ns) as f64
    }

    /// Bins per lane across the trace at `level`.
    pub fn bins(&self, level: u32) -> usize {
        (self.tile_bins as usize) << level
    }

    pub fn bin_ns(&self, level: u32) -> f64 {
        self.span_ns() / self.bins(level) as f64
    }

    /// The level to draw `pixels` columns over `[t0, t1]` ns with: the coarsest whose bins are at
    /// most half a pixel; `None` when even the finest level's bins are wider (draw records).
    pub fn level_for(&self, t0: f64, t1: f64, pixels: usize) -> Option<u32> {
        let pixel_ns = (t1 - t0) / pixels.max(1) as f64;
        (0..self.levels).find(|&l| self.bin_ns(l) * 2.0 <= pixel_ns)
    }

    /// The tiles of `level` that overlap `[t0, t1]` ns.
    pub fn tiles_for(&self, level: u32, t0: f64, t1: f64) -> std::ops::Range<usize> {
        let tiles = 1usize << level;
        let tile_ns = self.span_ns() / tiles as f64;
        let first = ((t0 - self.t_min_ns as f64) / tile_ns).floor().max(0.0) as usize;
        let last = (((t1 - self.t_min_ns as f64) / tile_ns).ceil().max(0.0) as usize).min(tiles);
        first.min(tiles)..last
    }

    /// The chunks that can hold a record overlapping `[t0, t1]` ns.
    pub fn chunks_for(&self, t0: f64, t1: f64) -> Vec<usize> {
        let from = t0 - self.max_duration_ns as f64;
        (0..self.chunks.len())
            .filter(|&c| {
                let ch = &self.chunks[c];
                ch.last_start_ns as f64 >= from && ch.first_start_ns as f64 <= t1
            })
            .collect()
    }

    pub fn tile_file(level: u32, tile: usize) -> String {
        format!("levels/{level}/{tile}.arrow")
    }
}

/// One tile: occupancy and kind of `TILE_BINS` bins per lane, lane after lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    pub occupancy: Vec<f32>,
    pub kind: Vec<u16>,
}

fn tile_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("occupancy", DataType::Float32, false),
        Field::new("kind", DataType::UInt16, false),
    ]))
}

fn chunk_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("lane_index", DataType::UInt32, false),
        Field::new("kind_index", DataType::UInt16, false),
        Field::new("start_ns", DataType::Int64, false),
        Field::new("duration_ns", DataType::Int64, false),
        Field::new("source_row", DataType::Int64, false),
    ]))
}

fn encode(batch: &RecordBatch) -> Result<Vec<u8>, PyramidError> {
    use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
    let mut bytes = Vec::new();
    let options = IpcWriteOptions::default()
        .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))?;
    let mut w = FileWriter::try_new_with_options(&mut bytes, &batch.schema(), options)?;
    w.write(batch)?;
    w.finish()?;
    drop(w);
    Ok(bytes)
}

fn decode(bytes: &[u8], want: &Schema) -> Result<RecordBatch, PyramidError> {
    // What arrow-ipc would trust (blocks and buffers past the file) is refused first.
    yosoku_bundle::ipc::check_file(bytes).map_err(PyramidError::Arrow)?;
    let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes), None)
        .map_err(PyramidError::NotIpc)?;
    let schema = reader.schema();
    if schema.fields() != want.fields() {
        return Err(PyramidError::Columns(
            schema.fields().iter().map(|f| f.name().clone()).collect(),
        ));
    }
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>()?;
    Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
}

/// Column `i` of `batch` as an array of type `A` (named `expected` in the error).
fn column_as<'b, A: 'static>(
    batch: &'b RecordBatch,
    i: usize,
    expected: &'static str,
) -> Result<&'b A, PyramidError> {
    batch
        .column(i)
        .as_any()
        .downcast_ref::<A>()
        .ok_or_else(|| PyramidError::ColumnType {
            column: batch.schema().field(i).name().clone(),
            expected,
        })
}

impl Tile {
    pub fn encode(&self) -> Result<Vec<u8>, PyramidError> {
        let batch = RecordBatch::try_new(
            tile_schema(),
            vec![
                Arc::new(Float32Array::from(self.occupancy.clone())) as ArrayRef,
                Arc::new(UInt16Array::from(self.kind.clone())),
            ],
        )?;
        encode(&batch)
    }

    pub fn decode(bytes: &[u8], lanes: usize, tile_bins: usize) -> Result<Tile, PyramidError> {
        let batch = decode(bytes, &tile_schema())?;
        if batch.num_rows() != lanes * tile_bins {
            return Err(PyramidError::TileSize {
                bins: batch.num_rows(),
                lanes,
                tile_bins,
            });
        }
        let occ: &Float32Array = column_as(&batch, 0, "Float32")?;
        let kind: &UInt16Array = column_as(&batch, 1, "UInt16")?;
        Ok(Tile {
            occupancy: occ.values().to_vec(),
            kind: kind.values().to_vec(),
        })
    }
}

/// The records of one chunk, sorted by start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkRows {
    pub lane: Vec<u32>,
    pub kind: Vec<u16>,
    pub start_ns: Vec<i64>,
    pub duration_ns: Vec<i64>,
    pub source_row: Vec<i64>,
}

impl ChunkRows {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn push(&mut self, r: &PyramidRecord) {
        self.lane.push(r.lane);
        self.kind.push(r.kind);
        self.start_ns.push(r.start_ns);
        self.duration_ns.push(r.duration_ns);
        self.source_row.push(r.source_row);
    }

    /// Sorts by start, then writes Arrow IPC (LZ4).
    pub fn encode_sorted(mut self) -> Result<Vec<u8>, PyramidError> {
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_unstable_by_key(|&i| (self.start_ns[i as usize], i));
        let pick = |v: &[i64]| -> Vec<i64> { order.iter().map(|&i| v[i as usize]).collect() };
        self.start_ns = pick(&self.start_ns);
        self.duration_ns = pick(&self.duration_ns);
        self.source_row = pick(&self.source_row);
        self.lane = order.iter().map(|&i| self.lane[i as usize]).collect();
        self.kind = order.iter().map(|&i| self.kind[i as usize]).collect();
        let batch = RecordBatch::try_new(
            chunk_schema(),
            vec![
                Arc::new(UInt32Array::from(self.lane)) as ArrayRef,
                Arc::new(UInt16Array::from(self.kind)),
                Arc::new(Int64Array::from(self.start_ns)),
                Arc::new(Int64Array::from(self.duration_ns)),
                Arc::new(Int64Array::from(self.source_row)),
            ],
        )?;
        encode(&batch)
    }

    pub fn decode(bytes: &[u8]) -> Result<ChunkRows, PyramidError> {
        let b = decode(bytes, &chunk_schema())?;
        let u32s = |i: usize| -> Result<Vec<u32>, PyramidError> {
            Ok(column_as::<UInt32Array>(&b, i, "UInt32")?.values().to_vec())
        };
        let u16s = |i: usize| -> Result<Vec<u16>, PyramidError> {
            Ok(column_as::<UInt16Array>(&b, i, "UInt16")?.values().to_vec())
        };
        let i64s = |i: usize| -> Result<Vec<i64>, PyramidError> {
            let a: &Int64Array = column_as(&b, i, "Int64")?;
            if a.null_count() > 0 {
                return Err(PyramidError::Nulls(b.schema().field(i).name().clone()));
            }
            Ok(a.values().to_vec())
        };
        Ok(ChunkRows {
            lane: u32s(0)?,
            kind: u16s(1)?,
            start_ns: i64s(2)?,
            duration_ns: i64s(3)?,
            source_row: i64s(4)?,
        })
    }
}

/// One record as the pyramid takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PyramidRecord {
    pub lane: u32,
    pub kind: u16,
    pub start_ns: i64,
    pub duration_ns: i64,
    pub source_row: i64,
}

/// Accumulates the finest level's bins from records in any order, in constant time per record
/// (coverage kept as a difference array, so a record spanning a million bins costs what a short
/// one does); [`PyramidBuilder::tiles`] then gives every level's tiles.
///
/// A bin's kind is the kind of the longest record that starts in it; a bin where none starts
/// keeps the kind of the bin before it while it is busy (the record still running).
#[derive(Debug)]
pub struct PyramidBuilder {
    lanes: usize,
    t_min: i64,
    span: f64,
    levels: u32,
    /// Bins per lane at the finest level.
    bins: usize,
    /// +1 where whole-bin coverage starts, -1 where it ends (one extra bin per lane).
    diff: Vec<i32>,
    /// Partial coverage of the first and last bin of each record, as a fraction of the bin.
    edge: Vec<f32>,
    start_kind: Vec<u16>,
    start_len: Vec<f32>,
    records: u64,
    max_duration: i64,
}

impl PyramidBuilder {
    /// A builder for `lanes` lanes over `[t_min, t_max]` ns, sized for about `records` records:
    /// about 2 records per finest bin, within [`MAX_FINEST_BINS`] over all lanes (14 bytes each
    /// while building).
    pub fn new(lanes: usize, t_min: i64, t_max: i64, records: u64) -> Self {
        let lanes = lanes.max(1);
        let per_lane = (records / lanes as u64 / 2).max(TILE_BINS as u64) as usize;
        let cap = (MAX_FINEST_BINS / lanes).max(TILE_BINS);
        let mut levels = 1u32;
        while (TILE_BINS << levels) <= per_lane.min(cap) && levels < 24 {
            levels += 1;
        }
        let bins = TILE_BINS << (levels - 1);
        let t_max = t_max.max(t_min + 1);
        PyramidBuilder {
            lanes,
            t_min,
            span: (t_max - t_min) as f64,
            levels,
            bins,
            diff: vec![0; lanes * (bins + 1)],
            edge: vec![0.0; lanes * bins],
            start_kind: vec![0; lanes * bins],
            start_len: vec![-1.0; lanes * bins],
            records: 0,
            max_duration: 0,
        }
    }

    pub fn levels(&self) -> u32 {
        self.levels
    }

    pub fn max_duration_ns(&self) -> i64 {
        self.max_duration
    }

    pub fn add(&mut self, r: &PyramidRecord) {
        self.records += 1;
        self.max_duration = self.max_duration.max(r.duration_ns);
        let lane = (r.lane as usize).min(self.lanes - 1);
        let bins_per_ns = self.bins as f64 / self.span;
        // Positions in bins.
        let s = ((r.start_ns - self.t_min) as f64 * bins_per_ns).clamp(0.0, self.bins as f64);
        let len = (r.duration_ns.max(0) as f64 * bins_per_ns).max(1e-3);
        let e = (s + len).min(self.bins as f64);
        let b0 = (s as usize).min(self.bins - 1);
        let b1 = (e as usize).min(self.bins - 1);
        let base = lane * self.bins;
        if b0 == b1 {
            self.edge[base + b0] += (e - s) as f32;
        } else {
            self.edge[base + b0] += (b0 as f64 + 1.0 - s) as f32;
            self.edge[base + b1] += (e - b1 as f64) as f32;
            if b1 > b0 + 1 {
                let d = lane * (self.bins + 1);
                self.diff[d + b0 + 1] += 1;
                self.diff[d + b1] -= 1;
            }
        }
        if len as f32 > self.start_len[base + b0] {
            self.start_len[base + b0] = len as f32;
            self.start_kind[base + b0] = r.kind;
        }
    }

    /// The finest level: occupancy and kind per bin, lane after lane.
    fn finest(&self) -> (Vec<f32>, Vec<u16>) {
        let mut occupancy = vec![0.0f32; self.lanes * self.bins];
        let mut kind = vec![0u16; self.lanes * self.bins];
        for l in 0..self.lanes {
            let mut cover = 0i64;
            let mut running = 0u16;
            for b in 0..self.bins {
                cover += i64::from(self.diff[l * (self.bins + 1) + b]);
                let i = l * self.bins + b;
                occupancy[i] = cover as f32 + self.edge[i];
                if self.start_len[i] >= 0.0 {
                    running = self.start_kind[i];
                }
                kind[i] = running;
            }
        }
        (occupancy, kind)
    }

    /// Every tile of every level, coarsest level first: `(level, tile, tile)`.
    pub fn tiles(self) -> Vec<(u32, usize, Tile)> {
        let mut out = Vec::new();
        let (mut busy, mut kind) = self.finest();
        let mut bins = self.bins;
        let mut level = self.levels - 1;
        loop {
            let tiles = bins / TILE_BINS;
            for t in 0..tiles {
                let mut tile = Tile {
                    occupancy: Vec::with_capacity(self.lanes * TILE_BINS),
                    kind: Vec::with_capacity(self.lanes * TILE_BINS),
                };
                for l in 0..self.lanes {
                    let from = l * bins + t * TILE_BINS;
                    tile.occupancy
                        .extend_from_slice(&busy[from..from + TILE_BINS]);
                    tile.kind.extend_from_slice(&kind[from..from + TILE_BINS]);
                }
                out.push((level, t, tile));
            }
            if level == 0 {
                break;
            }
            // Halve: a coarse bin is the mean occupancy of its two halves and the kind of the
            // busier one.
            let half = bins / 2;
            let mut b2 = vec![0.0f32; self.lanes * half];
            let mut k2 = vec![0u16; self.lanes * half];
            for l in 0..self.lanes {
                for b in 0..half {
                    let (i, j) = (l * bins + 2 * b, l * bins + 2 * b + 1);
                    let o = l * half + b;
                    b2[o] = (busy[i] + busy[j]) / 2.0;
                    k2[o] = if busy[i] >= busy[j] { kind[i] } else { kind[j] };
                }
            }
            (busy, kind, bins) = (b2, k2, half);
            level -= 1;
        }
        out.sort_by_key(|(l, t, _)| (*l, *t));
        out
    }
}

/// Plans chunks of about [`CHUNK_ROWS`] rows from a histogram of record starts over
/// `buckets.len()` equal time buckets spanning `[t_min, t_max]`: the chunk of each bucket.
pub fn plan_chunks(counts: &[u64]) -> Vec<u32> {
    let mut chunk_of = Vec::with_capacity(counts.len());
    let mut chunk = 0u32;
    let mut rows = 0u64;
    for &c in counts {
        if rows > 0 && rows + c > CHUNK_ROWS {
            chunk += 1;
            rows = 0;
        }
        chunk_of.push(chunk);
        rows += c;
    }
    chunk_of
}

/// The bucket of a start time among `buckets` equal buckets over `[t_min, t_max]`.
pub fn bucket_of(start_ns: i64, t_min: i64, t_max: i64, buckets: usize) -> usize {
    let span = (t_max - t_min).max(1) as f64;
    (((start_ns - t_min) as f64 / span * buckets as f64) as usize).min(buckets - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(levels: u32) -> PyramidIndex {
        PyramidIndex {
            format: FORMAT.into(),
            version: VERSION,
            name: "t".into(),
            lane_kind: "sm".into(),
            lanes: vec!["SM 0".into()],
            kinds: vec!["a".into()],
            t_min_ns: 0,
            t_max_ns: 1_000_000,
            records: 0,
            tile_bins: TILE_BINS as u32,
            levels,
            max_duration_ns: 10,
            provenance: "synthetic".into(),
            chunks: vec![
                ChunkInfo {
                    file: "chunks/0.arrow".into(),
                    first_start_ns: 0,
                    last_start_ns: 499_000,
                    rows: 5,
                },
                ChunkInfo {
                    file: "chunks/1.arrow".into(),
                    first_start_ns: 500_000,
                    last_start_ns: 999_000,
                    rows: 5,
                },
            ],
        }
    }

    /// A tile file `cargo xtask fuzz --target pyramid_chunk` found whose buffers arrow-ipc
    /// sliced past their body (it panicked): an error now. The fuzz input's first byte picks a
    /// tile of two lanes.
    #[test]
    fn a_damaged_tile_is_an_error_not_a_panic() {
        let input =
            include_bytes!("../../../../fuzz/regressions/pyramid_chunk/message-past-its-metadata");
        let error = Tile::decode(&input[1..], 2, TILE_BINS).unwrap_err();
        assert!(matches!(error, PyramidError::Arrow(_)), "{error}");
        assert!(error.to_string().contains("a damaged file"), "{error}");
        // A footer block with no room for a message (arrow-ipc sliced its first 4 bytes).
        let input =
            include_bytes!("../../../../fuzz/regressions/pyramid_chunk/block-without-a-message");
        let error = match input.split_first() {
            Some((pick, rest)) if pick % 2 == 0 => ChunkRows::decode(rest).map(|_| ()),
            Some((pick, rest)) => {
                Tile::decode(rest, usize::from(pick >> 1).max(1), TILE_BINS).map(|_| ())
            }
            None => Ok(()),
        }
        .unwrap_err();
        assert!(error.to_string().contains("a damaged file"), "{error}");
    }

    #[test]
    fn a_view_reads_the_coarsest_fine_enough_level_and_only_its_tiles() {
        let i = index(4);
        // 1000 pixels over everything: level 0 bins (1e6/2048 ns) are under half a pixel.
        assert_eq!(i.level_for(0.0, 1e6, 1000), Some(0));
        // Zoomed 8x: 125 ns pixels; level 2 bins (122 ns) are too wide, level 3 (61 ns) fit.
        assert_eq!(i.level_for(0.0, 125_000.0, 1000), Some(3));
        assert_eq!(i.tiles_for(3, 0.0, 125_000.0), 0..1);
        assert_eq!(i.tiles_for(3, 120_000.0, 260_000.0), 0..3);
        // Past the finest level: records.
        assert_eq!(i.level_for(0.0, 10_000.0, 1000), None);
        assert_eq!(i.chunks_for(400_000.0, 410_000.0), vec![0]);
        assert_eq!(i.chunks_for(499_005.0, 500_001.0), vec![0, 1]);
        assert_eq!(i.chunks_for(499_995.0, 500_001.0), vec![1]);
    }

    #[test]
    fn an_index_of_another_format_or_version_or_broken_is_refused() {
        let good = serde_json::to_vec(&index(4)).unwrap();
        assert_eq!(PyramidIndex::from_json(&good).unwrap(), index(4));
        let mut newer = index(4);
        newer.version = VERSION + 1;
        let e = PyramidIndex::from_json(&serde_json::to_vec(&newer).unwrap()).unwrap_err();
        assert!(
            matches!(e, PyramidError::IndexVersion { version, .. } if version == VERSION + 1),
            "{e}"
        );
        assert!(e.to_string().contains("version 2"), "{e}");
        let mut empty = index(4);
        empty.t_max_ns = empty.t_min_ns;
        let e = PyramidIndex::from_json(&serde_json::to_vec(&empty).unwrap()).unwrap_err();
        assert!(matches!(e, PyramidError::EmptyIndex), "{e}");
        let e = PyramidIndex::from_json(&good[..good.len() / 2]).unwrap_err();
        assert!(matches!(e, PyramidError::IndexJson(_)), "{e}");
        assert!(e.to_string().starts_with("invalid pyramid index"), "{e}");
    }

    #[test]
    fn levels_conserve_busy_time() {
        let mut b = PyramidBuilder::new(2, 0, 1_000_000, 2 * 2 * 4096);
        assert_eq!(b.levels(), 2);
        for k in 0..1000 {
            b.add(&PyramidRecord {
                lane: (k % 2) as u32,
                kind: (k % 3) as u16,
                start_ns: k * 1000,
                duration_ns: 500,
                source_row: k,
            });
        }
        let tiles = b.tiles();
        assert_eq!(tiles.len(), 1 + 2);
        // Level 0, one tile: lane 0 is busy half the time in the first half of the trace...
        let total = |level: u32| -> f64 {
            tiles
                .iter()
                .filter(|t| t.0 == level)
                .map(|t| t.2.occupancy.iter().map(|&o| f64::from(o)).sum::<f64>())
                .sum::<f64>()
                / (TILE_BINS << level) as f64
                * 1e6
        };
        // 1000 records x 500 ns, in ns, at every level.
        for level in 0..2 {
            assert!((total(level) - 500_000.0).abs() < 5.0, "{}", total(level));
        }
        let bytes = tiles[0].2.encode().unwrap();
        assert_eq!(Tile::decode(&bytes, 2, TILE_BINS).unwrap(), tiles[0].2);
        assert!(Tile::decode(&bytes, 3, TILE_BINS).is_err());
    }

    #[test]
    fn a_long_record_covers_its_bins_whole_and_colours_them() {
        let mut b = PyramidBuilder::new(1, 0, TILE_BINS as i64 * 10, 0);
        // From the middle of bin 1 to the middle of bin 100 (10 ns bins), kind 3; then a
        // short one of kind 5 in bin 200.
        b.add(&PyramidRecord {
            lane: 0,
            kind: 3,
            start_ns: 15,
            duration_ns: 990,
            source_row: 0,
        });
        b.add(&PyramidRecord {
            lane: 0,
            kind: 5,
            start_ns: 2000,
            duration_ns: 5,
            source_row: 1,
        });
        let tiles = b.tiles();
        let t = &tiles[0].2;
        assert!((t.occupancy[1] - 0.5).abs() < 1e-6);
        assert_eq!(t.occupancy[50], 1.0);
        assert!((t.occupancy[100] - 0.5).abs() < 1e-6);
        assert_eq!(t.occupancy[101], 0.0);
        assert_eq!((t.kind[1], t.kind[50], t.kind[100]), (3, 3, 3));
        assert!((t.occupancy[200] - 0.5).abs() < 1e-6);
        assert_eq!(t.kind[200], 5);
    }

    #[test]
    fn chunks_are_planned_by_rows_and_sorted_by_start() {
        let plan = plan_chunks(&[CHUNK_ROWS / 2, CHUNK_ROWS / 2, 1, CHUNK_ROWS, 0]);
        assert_eq!(plan, vec![0, 0, 1, 2, 2]);
        let mut rows = ChunkRows::default();
        for (i, s) in [30, 10, 20].into_iter().enumerate() {
            rows.push(&PyramidRecord {
                lane: i as u32,
                kind: 0,
                start_ns: s,
                duration_ns: 1,
                source_row: i as i64,
            });
        }
        let back = ChunkRows::decode(&rows.encode_sorted().unwrap()).unwrap();
        assert_eq!(back.start_ns, vec![10, 20, 30]);
        assert_eq!(back.lane, vec![1, 2, 0]);
        assert!(ChunkRows::decode(b"junk").is_err());
    }
}
