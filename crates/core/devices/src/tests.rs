use super::*;

#[test]
fn the_built_in_catalogue_reads_and_finds_devices_by_name_and_alias() {
    let c = Catalogue::built_in().unwrap();
    assert_eq!(c.devices().len(), BUILT_IN.len());
    let h100 = c.find("h100 sxm5").unwrap();
    assert_eq!(h100.name, "NVIDIA H100 80GB HBM3");
    assert_eq!(h100.spec("sm_count"), Some(132.0));
    assert_eq!(h100.spec["fp32_peak_gflops"].source, "datasheet");
    assert!(h100.sources["ncu"].contains("ncu_raw_copy_float4_h100.csv"));
    // Measured beside the datasheet: the copy reaches 89 % of the H100's bandwidth.
    let measured = h100.measured["dram_bandwidth_gb_per_sec"].value;
    assert!((measured / h100.spec("dram_bandwidth_gb_per_sec").unwrap() - 0.89).abs() < 0.01);
    // The Kineto trace's V100, by the short names users type.
    assert_eq!(c.find("Tesla V100").unwrap().name, "Tesla V100-DGXS-32GB");
    // The B200 of public ncu output, its datasheet peaks; the P100's variant is unknown.
    let b200 = c.find("B200").unwrap();
    assert_eq!(
        (b200.name.as_str(), b200.spec("sm_count")),
        ("NVIDIA B200", Some(148.0))
    );
    assert_eq!(b200.spec["dram_bandwidth_gb_per_sec"].source, "datasheet");
    assert!(b200.measured.is_empty() && b200.spec("l2_bytes").is_none());
    assert!(c.find("Tesla-P100").is_none());
    // The gpuperfpredict dataset's short names find the GPUs nvprof named in its files; the
    // GTX-750 files hold GTX 680 data, so there is no GTX 750 (and the P100's variant is unknown).
    for (short, name) in [
        ("Tesla-K40", "Tesla K40c"),
        ("TitanX", "GeForce GTX TITAN X"),
        ("Quadro", "Quadro K5200"),
        ("GTX-970", "GeForce GTX 970"),
    ] {
        assert_eq!(c.find(short).unwrap().name, name);
    }
    assert!(c.find("GTX-750").is_none());
    // The GTX 970 is 13 SMs (1,664 cores), not the CSV's 3,072 cores.
    assert_eq!(c.find("GTX-970").unwrap().spec("sm_count"), Some(13.0));
    assert_eq!(c.closest("H20", 1), ["NVIDIA H200"]);
}

fn error(text: &str) -> String {
    parse(text, "mine.toml").unwrap_err().to_string()
}

const HEAD: &str = "name = \"X\"\nvendor = \"V\"\nkind = \"gpu\"\narchitecture = \"A\"\n";

#[test]
fn bad_files_are_refused_with_file_line_column_and_key() {
    let sources = "[sources]\nds = \"a datasheet\"\n";
    // A field without a unit in its name is not a field.
    let e = error(&format!(
        "{HEAD}[spec]\nbandwidth = {{ value = 1, source = \"ds\" }}\n{sources}"
    ));
    assert!(
        e.starts_with("mine.toml:6:1: [spec] has no field `bandwidth`"),
        "{e}"
    );
    let e = error(&format!(
        "{HEAD}[spec]\ndram_bandwidth_gb_per_sec = {{ value = -900, source = \"ds\" }}\n{sources}"
    ));
    assert!(
        e.starts_with("mine.toml:6:29: spec.dram_bandwidth_gb_per_sec: expected a positive number"),
        "{e}"
    );
    let e = error(&format!(
        "{HEAD}[spec]\nsm_count = {{ value = 80, source = \"web\" }}\n{sources}"
    ));
    assert!(
        e.contains("source `web` is not in [sources] (it has: ds)"),
        "{e}"
    );
    let e = error(&format!("{HEAD}colour = \"green\"\n{sources}"));
    assert!(
        e.starts_with("mine.toml:5:1: unknown field `colour`"),
        "{e}"
    );
    let e = error(&format!(
        "{HEAD}[spec]\nsm_count = {{ value = 80 }}\n{sources}"
    ));
    assert!(e.contains("missing field `source`"), "{e}");
    let e = error(&format!("{}{sources}", HEAD.replace("\"gpu\"", "\"fpga\"")));
    assert!(e.contains("kind `fpga`: expected `gpu` or `cpu`"), "{e}");
}

#[test]
fn a_device_twice_is_an_error_unless_a_users_file_replaces_it() {
    let mut c = Catalogue::built_in().unwrap();
    let mine = parse(
        &format!(
            "{}aliases = [\"H200\"]\n[sources]\n",
            HEAD.replace("\"X\"", "\"My H200\"")
        ),
        "mine.toml",
    )
    .unwrap();
    let e = c.add(mine.clone(), false).unwrap_err().to_string();
    assert!(
        e.contains("device `My H200` is already in the catalogue as `NVIDIA H200`"),
        "{e}"
    );
    let replacement = parse(
        &format!("{}[sources]\n", HEAD.replace("\"X\"", "\"NVIDIA H200\"")),
        "mine.toml",
    )
    .unwrap();
    c.add(replacement, true).unwrap();
    assert_eq!(c.find("NVIDIA H200").unwrap().file, "mine.toml");
}

#[test]
#[allow(clippy::disallowed_methods)] // the test keeps BUILT_IN in step with the directory
fn every_catalogue_file_is_built_in_and_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    on_disk.sort();
    let built_in: Vec<String> = BUILT_IN.iter().map(|(f, _)| (*f).to_owned()).collect();
    assert_eq!(built_in, on_disk, "BUILT_IN must list catalogue/*.toml");
    let catalogue = Catalogue::built_in().unwrap();
    // NeuSight's GPUs, by the names its files give them.
    for name in [
        "Tesla P4",
        "Tesla P100-PCIE-16GB",
        "Tesla T4",
        "Tesla V100-PCIE-32GB",
        "NVIDIA A100-PCIE-40GB",
        "NVIDIA A100 80GB PCIe",
        "NVIDIA L4",
        "NVIDIA H100 80GB HBM3",
    ] {
        assert!(catalogue.find(name).is_some(), "{name}");
    }
}

/// A user's GPU file: the H100's values, with `extra` spec lines.
fn user_gpu(architecture: &str, kind: &str, spec: &str) -> String {
    format!(
        "name = \"My GPU\"\nvendor = \"NVIDIA\"\nkind = \"{kind}\"\narchitecture = \"{architecture}\"\n[spec]\n{spec}\n[sources]\nme = \"my own notes\"\n"
    )
}

#[test]
fn no_built_in_device_draws_a_warning() {
    let all = Catalogue::built_in().unwrap();
    for d in all.devices() {
        let mut others = Catalogue::default();
        for o in all.devices().iter().filter(|o| o.name != d.name) {
            others.add(o.clone(), false).unwrap();
        }
        assert_eq!(
            checks::warnings(d, &others),
            Vec::<String>::new(),
            "{}",
            d.name
        );
    }
}

#[test]
fn a_users_values_outside_the_architecture_are_warned_about() {
    let mut c = Catalogue::built_in().unwrap();
    // 132 SMs x 128 lanes x 2 x 1,980 MHz is 66.9 TFLOP/s, not 6.7; 33,520 GB/s is 10x an H200's.
    let spec = "sm_count = { value = 132, source = \"me\" }\nboost_clock_mhz = { value = 1980, source = \"me\" }\nfp32_peak_gflops = { value = 6700, source = \"me\" }\ndram_bandwidth_gb_per_sec = { value = 52000, source = \"me\" }";
    let d = parse(&user_gpu("hopper", "gpu", spec), "mine.toml").unwrap();
    // The architecture in another case is the known one.
    assert_eq!(d.architecture, "Hopper");
    c.add_checked(d, false).unwrap();
    let w = c.warnings().join("\n");
    assert!(
        w.contains("mine.toml: spec.fp32_peak_gflops = 6700 disagrees with sm_count x FP32 lanes per SM x 2 x clock: Hopper SMs have 128 lanes, so expected about 66908 GFLOP/s"),
        "{w}"
    );
    assert!(
        w.contains("mine.toml: spec.dram_bandwidth_gb_per_sec = 52000 is over 3x outside the catalogue's Hopper GPUs (3352.3 to 4800 GB/s) and its bytes per FLOP unlike any GPU's"),
        "{w}"
    );
    // A 5x typo (16,760 for 3,352) is caught too; an H100 PCIe's 2,000 GB/s is not questioned.
    for (bandwidth, warned) in [("16760", true), ("2000", false)] {
        let mut c = Catalogue::built_in().unwrap();
        let one = spec.replace("6700", "67000").replace("52000", bandwidth);
        c.add_checked(
            parse(&user_gpu("Hopper", "gpu", &one), "mine.toml").unwrap(),
            false,
        )
        .unwrap();
        assert_eq!(
            c.warnings().len(),
            usize::from(warned),
            "{bandwidth}: {:?}",
            c.warnings()
        );
    }
    // Right values draw none.
    let mut c = Catalogue::built_in().unwrap();
    let good = spec.replace("6700", "67000").replace("52000", "3350");
    c.add_checked(
        parse(&user_gpu("Hopper", "gpu", &good), "mine.toml").unwrap(),
        false,
    )
    .unwrap();
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn impossible_values_are_errors() {
    let e = parse(&user_gpu("Ampere", "cpu", ""), "mine.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("mine.toml:3:8: kind `cpu`, but architecture `Ampere` is a GPU architecture"),
        "{e}"
    );
    let spec = "base_clock_mhz = { value = 1800, source = \"me\" }\nboost_clock_mhz = { value = 1410, source = \"me\" }";
    let e = parse(&user_gpu("Ampere", "gpu", spec), "mine.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "mine.toml:6:18: spec.base_clock_mhz = 1800 is above spec.boost_clock_mhz = 1410"
        ),
        "{e}"
    );
}

#[test]
fn every_built_in_device_written_as_a_file_reads_back_the_same() {
    for (file, text) in BUILT_IN {
        let device = parse(text, file).unwrap();
        let written = device.to_toml("written back\nby a test");
        assert!(written.starts_with("# written back\n# by a test\n"));
        let again = parse(&written, file).unwrap_or_else(|e| panic!("{e}\n{written}"));
        assert_eq!(again, device, "{file}:\n{written}");
    }
    // Quotes, backslashes and keys that need quoting survive.
    let mut device = parse(BUILT_IN[0].1, BUILT_IN[0].0).unwrap();
    device.name = "a \"quoted\" \\ name".to_owned();
    device
        .sources
        .insert("a source with spaces".to_owned(), "x\ty".to_owned());
    device.measured.insert(
        "launch_latency_us".to_owned(),
        Sourced {
            value: 1.0 / 3.0,
            source: "a source with spaces".to_owned(),
        },
    );
    assert_eq!(parse(&device.to_toml(""), BUILT_IN[0].0).unwrap(), device);
    // So do measured curves.
    device.measured_curves.insert(
        "dram_copy_us_by_bytes".to_owned(),
        SourcedCurve {
            x: vec![4096.0, 1048576.0],
            y: vec![1.0 / 3.0, 2.5],
            source: "a source with spaces".to_owned(),
        },
    );
    assert_eq!(parse(&device.to_toml(""), BUILT_IN[0].0).unwrap(), device);
}

/// A measured curve the physics cannot read is refused where it is written: its key, its
/// points, its source.
#[test]
fn a_measured_curve_that_cannot_be_read_is_refused_naming_it() {
    let head = "name = \"X\"\nvendor = \"NVIDIA\"\nkind = \"gpu\"\narchitecture = \"Hopper\"\n[sources]\ncal = \"ours\"\n[measured_curves]\n";
    for (curve, expected) in [
        (
            "dram_copy_us_by_bytes = { x = [1.0, 2.0], y = [1.0], source = \"cal\" }",
            "measured_curves.dram_copy_us_by_bytes: 2 x values and 1 y values",
        ),
        (
            "dram_copy_us_by_bytes = { x = [1.0], y = [1.0], source = \"cal\" }",
            "expected at least two points",
        ),
        (
            "dram_copy_us_by_bytes = { x = [2.0, 1.0], y = [1.0, 2.0], source = \"cal\" }",
            "x must rise: x[1] = 1 is not above x[0] = 2",
        ),
        (
            "dram_copy_us_by_bytes = { x = [1.0, 2.0], y = [0.0, 2.0], source = \"cal\" }",
            "expected positive numbers, found 0",
        ),
        (
            "dram_copy_us_by_bytes = { x = [1.0, 2.0], y = [1.0, 2.0], source = \"other\" }",
            "source `other` is not in [sources]",
        ),
        (
            "copy_by_blocks = { x = [1.0, 2.0], y = [1.0, 2.0], source = \"cal\" }",
            "[measured_curves] has no field `copy_by_blocks`",
        ),
    ] {
        let e = parse(&format!("{head}{curve}\n"), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected) && e.contains("x.toml:8:"), "{e}");
    }
}
