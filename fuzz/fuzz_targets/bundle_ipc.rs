#![no_main]

use libfuzzer_sys::fuzz_target;
use yosoku_bundle::ipc;

// A bundle table file as the viewer and `yosoku report` decode it: no panic, and a batch that
// decodes encodes to a file that decodes to the same batch.
fuzz_target!(|data: &[u8]| {
    if let Ok(batch) = ipc::decode(data) {
        let bytes = ipc::encode(&batch).expect("a decoded batch encodes");
        let again = ipc::decode(&bytes).expect("an encoded batch decodes");
        assert_eq!(batch, again, "the batch changed in an encode-decode round trip");
    }
});
