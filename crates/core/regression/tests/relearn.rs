//! RELeARN's runs at four more Barnes-Hut thetas (tests/data/relearn/SOURCES.md), as
//! `cargo xtask bench-intervals` reads them: every file whole, and the robust search's model of
//! each call path that carries the run's time.

// A test reads its data files; the crate's code takes text.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use yosoku_regression::pmnf::robust::fit_robust;
use yosoku_regression::pmnf::{PmnfOptions, extrap};

#[test]
fn each_theta_is_read_whole_and_its_main_call_path_modelled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/relearn");
    for theta in ["0.2", "0.3", "0.4", "0.5"] {
        let path = dir.join(format!("relearn_theta{theta}.txt"));
        let text = std::fs::read_to_string(&path).unwrap();
        let e = extrap::parse_text(&text).unwrap();
        assert_eq!(e.parameters, ["p", "n"], "{}", path.display());
        assert_eq!(e.series.len(), 14, "{}", path.display());
        assert!(e.notes.is_empty(), "{:?}", e.notes);
        for s in &e.series {
            assert_eq!(s.points.len(), 25, "{}", s.callpath);
            assert!(
                s.points.iter().all(|p| p.values.len() == 2),
                "{}",
                s.callpath
            );
        }
        let main = e.series.iter().find(|s| s.callpath == "main()").unwrap();
        let fit = fit_robust(&main.points, &PmnfOptions::default()).unwrap();
        // main() grows with both parameters; no file here moves them together.
        assert!(fit.moved_with_first.is_empty());
        assert!(fit.model.evaluate(&[512.0, 9000.0]) > fit.model.evaluate(&[32.0, 5000.0]));
    }
}
