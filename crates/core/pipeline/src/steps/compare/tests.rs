use super::super::testing::parse_error;

#[test]
fn the_label_column_is_known_when_the_file_is_parsed() {
    let e = parse_error(
        "validate",
        "step = \"compare_reference\"\nid = \"r\"\ncomputed = \"fit.model_summary\"\nreference = \"src.reference_values\"",
    );
    assert_eq!(
        e,
        "p.toml:7:12: key `computed`: name the column that labels the rows of `model_summary` with `label_column`"
    );
    let e = parse_error(
        "validate",
        "step = \"compare_reference\"\nid = \"r\"\ncomputed = \"fit.runs\"\nreference = \"src.reference_values\"\nlabel_column = \"phaze\"",
    );
    assert!(
        e.starts_with(
            "p.toml:9:16: key `label_column`: `runs` has no column `phaze`; its columns: "
        ),
        "{e}"
    );
    let e = parse_error(
        "validate",
        "step = \"compare_reference\"\nid = \"r\"\ncomputed = \"fit.totals\"\nreference = \"src.reference_values\"",
    );
    assert_eq!(
        e,
        "p.toml:7:12: key `computed`: `computed` must be a canonical table, `totals` is not one"
    );
}
