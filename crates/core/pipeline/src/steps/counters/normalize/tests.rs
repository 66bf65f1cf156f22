use crate::steps::testing::{observations, parse_error, run_steps};

#[test]
fn merged_and_standardised_features_come_out_as_observations() {
    let obs = observations(
        &["gpu", "gpu", "gpu", "gpu"],
        &[1.0, 2.0, 3.0, 4.0],
        &[
            ("gst32b", &[1.0, 0.0, 3.0, 0.0]),
            ("gst64b", &[0.0, 2.0, 0.0, 4.0]),
            ("inst", &[10.0, 20.0, 30.0, 40.0]),
        ],
    );
    let set = run_steps(
            "[[normalize]]\nstep = \"merge_counters\"\nid = \"m\"\ninput = \"src.observations\"\nmerges = [{ into = \"gst\", from = [\"gst32b\", \"gst64b\"] }]\n\
             [[normalize]]\nstep = \"zscore\"\nid = \"z\"\ninput = \"m.observations\"",
            vec![("observations", obs)],
        )
        .unwrap();
    let z = set.get("z.observations").unwrap();
    let gst = yosoku_tables::access::float64(z, "gst").unwrap();
    let mean: f64 = gst.values().iter().sum::<f64>() / 4.0;
    assert!(mean.abs() < 1e-12, "{mean}");
    assert!(z.column_by_name("gst32b").is_none());
}

#[test]
fn cross_device_with_an_empty_metrics_list_fails_when_parsed() {
    let e = parse_error(
        "normalize",
        "step = \"cross_device\"\nid = \"x\"\nfeatures = \"src.observations\"\ntarget = \"src.observations\"\nmetrics = []",
    );
    assert!(
        e.contains("key `metrics`") && e.contains("`metrics` is empty"),
        "{e}"
    );
}

#[test]
fn a_derived_ratio_of_an_unknown_kind_fails_when_parsed() {
    let e = parse_error(
        "normalize",
        "step = \"derive\"\nid = \"d\"\ninput = \"src.observations\"\nratios = [{ name = \"r\", numerator = \"a\", denominator = \"b\", kind = \"speed\" }]",
    );
    assert!(
        e.starts_with("p.toml:8:10: key `ratios`: ratio `r`: kind `speed` is not one of: count,"),
        "{e}"
    );
}
