//! Large traces kept on disk or on the server (a bundle's `traces/<name>/`, a level-of-detail
//! pyramid with chunked records): tiles and chunks are read when a view needs them and dropped,
//! least recently used first, past a memory budget. The desktop reads files; the browser fetches
//! them (asynchronously: a view draws what it has, a coarser level meanwhile, and is repainted
//! when more arrives).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use yosoku_traces::pyramid::{ChunkRows, PyramidIndex, Tile};

/// What a trace's store may hold in tiles and chunks together.
pub const MEMORY_BUDGET_BYTES: usize = 512 << 20;

/// A piece of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Piece {
    Tile(u32, usize),
    Chunk(usize),
}

#[derive(Debug, Clone)]
enum Loaded {
    Tile(Arc<Tile>),
    Chunk(Arc<ChunkRows>),
}

impl Loaded {
    fn bytes(&self) -> usize {
        match self {
            Loaded::Tile(t) => t.occupancy.len() * 6,
            Loaded::Chunk(c) => c.len() * 30,
        }
    }
}

#[derive(Debug, Default)]
struct Store {
    pieces: HashMap<Piece, (Loaded, u64)>,
    pending: HashSet<Piece>,
    bytes: usize,
    clock: u64,
    errors: Vec<String>,
    /// Pieces read so far (a count for the status line and tests).
    loads: u64,
    repaint: Option<egui::Context>,
}

/// One large trace of a bundle.
#[derive(Debug, Clone)]
pub struct LoadedTrace {
    pub name: String,
    pub index: Arc<PyramidIndex>,
    /// The trace's directory (desktop) or URL (browser), without a trailing slash.
    pub base: String,
    store: Arc<Mutex<Store>>,
}

impl LoadedTrace {
    pub fn new(name: &str, index: PyramidIndex, base: &str) -> Self {
        LoadedTrace {
            name: name.to_owned(),
            index: Arc::new(index),
            base: base.trim_end_matches('/').to_owned(),
            store: Arc::new(Mutex::new(Store::default())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn file(&self, piece: Piece) -> String {
        match piece {
            Piece::Tile(l, t) => PyramidIndex::tile_file(l, t),
            Piece::Chunk(c) => self
                .index
                .chunks
                .get(c)
                .map(|ch| ch.file.clone())
                .unwrap_or_default(),
        }
    }

    /// Asks for the pieces, if not held or on their way (through `platform::read`: the desktop
    /// reads them now, the browser when they arrive).
    pub fn request(&self, pieces: &[Piece], ctx: &egui::Context) {
        let wanted: Vec<Piece> = {
            let mut s = self.lock();
            s.repaint = Some(ctx.clone());
            pieces
                .iter()
                .copied()
                .filter(|p| !s.pieces.contains_key(p) && !s.pending.contains(p))
                .collect()
        };
        for piece in wanted {
            self.lock().pending.insert(piece);
            let location = format!("{}/{}", self.base, self.file(piece));
            let (this, at) = (self.clone(), location.clone());
            crate::platform::read(&location, move |result| this.deliver(piece, &at, result));
        }
    }

    /// A piece's bytes arrived (or failed): decode and keep it.
    fn deliver(&self, piece: Piece, url: &str, bytes: Result<Vec<u8>, String>) {
        let lanes = self.index.lanes.len();
        let tile_bins = self.index.tile_bins as usize;
        let decoded = bytes.and_then(|b| match piece {
            Piece::Tile(..) => Tile::decode(&b, lanes, tile_bins)
                .map(|t| Loaded::Tile(Arc::new(t)))
                .map_err(|e| format!("{url}: {e}")),
            Piece::Chunk(_) => ChunkRows::decode(&b)
                .map(|c| Loaded::Chunk(Arc::new(c)))
                .map_err(|e| format!("{url}: {e}")),
        });
        let mut s = self.lock();
        s.pending.remove(&piece);
        match decoded {
            Ok(loaded) => {
                s.clock += 1;
                s.bytes += loaded.bytes();
                s.loads += 1;
                let now = s.clock;
                s.pieces.insert(piece, (loaded, now));
                evict(&mut s);
            }
            Err(e) => {
                if s.errors.len() < 8 {
                    s.errors.push(e);
                }
            }
        }
        if let Some(ctx) = &s.repaint {
            ctx.request_repaint();
        }
    }

    pub fn tile(&self, level: u32, tile: usize) -> Option<Arc<Tile>> {
        let mut s = self.lock();
        s.clock += 1;
        let now = s.clock;
        match s.pieces.get_mut(&Piece::Tile(level, tile)) {
            Some((Loaded::Tile(t), used)) => {
                *used = now;
                Some(t.clone())
            }
            _ => None,
        }
    }

    pub fn chunk(&self, chunk: usize) -> Option<Arc<ChunkRows>> {
        let mut s = self.lock();
        s.clock += 1;
        let now = s.clock;
        match s.pieces.get_mut(&Piece::Chunk(chunk)) {
            Some((Loaded::Chunk(c), used)) => {
                *used = now;
                Some(c.clone())
            }
            _ => None,
        }
    }

    /// Bytes held, pieces read so far, pieces on their way, errors.
    pub fn stats(&self) -> (usize, u64, usize, Vec<String>) {
        let s = self.lock();
        (s.bytes, s.loads, s.pending.len(), s.errors.clone())
    }
}

/// Drops the least recently used pieces (never level 0, the overview) past the budget.
fn evict(s: &mut Store) {
    while s.bytes > MEMORY_BUDGET_BYTES {
        let Some((&oldest, _)) = s
            .pieces
            .iter()
            .filter(|(p, _)| !matches!(p, Piece::Tile(0, _)))
            .min_by_key(|(_, (_, used))| *used)
        else {
            return;
        };
        if let Some((l, _)) = s.pieces.remove(&oldest) {
            s.bytes -= l.bytes();
        }
    }
}
