#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_traces::pyramid::{ChunkRows, TILE_BINS, Tile};

// A trace pyramid's chunk or tile file as the viewer reads it from a bundle (the first byte
// picks which): no panic, no allocation beyond what the bytes can hold; a chunk that decodes
// encodes and decodes to the same rows, a tile that decodes has its bins.
fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    if pick % 2 == 0 {
        if let Ok(rows) = ChunkRows::decode(bytes) {
            let n = rows.len();
            let again = rows.encode_sorted().expect("decoded rows encode");
            let back = ChunkRows::decode(&again).expect("encoded rows decode");
            assert_eq!(back.len(), n, "a chunk's rows changed in a round trip");
        }
    } else {
        let lanes = usize::from(pick >> 1).max(1);
        if let Ok(tile) = Tile::decode(bytes, lanes, TILE_BINS) {
            assert_eq!(tile.occupancy.len(), lanes * TILE_BINS);
            assert_eq!(tile.kind.len(), lanes * TILE_BINS);
        }
    }
});
