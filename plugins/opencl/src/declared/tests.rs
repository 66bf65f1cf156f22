use std::path::{Path, PathBuf};

use super::*;
use crate::suite::{Preset, find};

fn kernel_files() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernel-files")
}

/// A kernel file in a temporary directory beside a copy of saxpy.cl; its error, or its result.
fn load(text: &str) -> Result<KernelFile, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(kernel_files().join("saxpy.cl"), dir.path().join("saxpy.cl")).unwrap();
    let path = dir.path().join("k.toml");
    std::fs::write(&path, text).unwrap();
    KernelFile::load(&path).map_err(|e| {
        e.to_string()
            .replace(&format!("{}", dir.path().display()), "DIR")
    })
}

const SAXPY: &str = r#"source = "saxpy.cl"
kernel = "saxpy_vec4"
[sizes]
n = [1024, 4096]
[[args]]
scalar = "float"
value = "2"
[[args]]
name = "x"
buffer = "float"
length = "n"
init = "random"
[[args]]
name = "y"
buffer = "float"
length = "n"
access = "read_write"
[ndrange]
global = ["n / 4"]
local = ["64"]
[work]
flops = "2 * n"
"#;

#[test]
fn the_readme_example_resolves_every_size() {
    let file = KernelFile::load(&kernel_files().join("saxpy.toml")).unwrap();
    let c = &file.configurations;
    assert_eq!(c.len(), 3);
    assert_eq!(c[2].size_text(), "n=1048576");
    assert_eq!(
        (c[2].global.clone(), c[2].local.clone()),
        (vec![262144], vec![64])
    );
    assert_eq!(c[2].program, "saxpy");
    assert_eq!(c[2].variant, DEFAULT_VARIANT);
    let counters = c[2].counters();
    assert_eq!(counters["global_load_bytes"].0, 8.0 * 1048576.0);
    assert_eq!(counters["flops"].0, 2.0 * 1048576.0);
    assert_eq!(counters["vector_width"].0, 4.0);
    assert_eq!(counters["work_groups"].0, 4096.0);
    assert_eq!(c[2].check_text(), "reference kernel saxpy_ref");
    assert_eq!(c[2].reference.as_ref().unwrap().local, None);
    assert_eq!(
        c[0].args[2],
        Argument::Buffer {
            name: "y".into(),
            elem: Elem::Float,
            length: 65536,
            init: Init::Ramp {
                start: 0.0,
                step: 0.5
            },
            access: Access::ReadWrite,
        }
    );
    assert_eq!(
        load(SAXPY).unwrap().configurations[0].check_text(),
        UNCHECKED
    );
}

/// The suite's `copy`, converted: the same counters at every variant and size.
#[test]
fn the_suites_copy_as_a_kernel_file_has_identical_counters() {
    let file = KernelFile::load(&kernel_files().join("copy.toml")).unwrap();
    let copy = find("copy").unwrap();
    assert_eq!(file.configurations.len(), 6);
    for c in &file.configurations {
        let size = c.sizes[0].1;
        assert!(copy.sizes(Preset::Quick).contains(&size));
        let plan = copy.plan(&c.variant, size, 256);
        assert_eq!(c.counters(), plan.counters(), "{} n={size}", c.variant);
        assert_eq!((&c.global, &c.local), (&plan.global, &plan.local));
        assert_eq!(c.build_options, copy.build_options(&c.variant, 256));
        assert_eq!(c.kernel, copy.kernel_name(&c.variant));
        assert_eq!(c.file.text, copy.source().1);
    }
}

#[test]
fn a_sweep_over_two_sizes_is_their_product() {
    let text = SAXPY.replace("n = [1024, 4096]", "n = [1024, 4096]\nm = [1, 2, 3]");
    let file = load(&text).unwrap();
    let points: Vec<String> = file
        .configurations
        .iter()
        .map(Configuration::size_text)
        .collect();
    assert_eq!(points.len(), 6);
    assert_eq!(points[0], "m=1;n=1024");
    assert_eq!(points[5], "m=3;n=4096");
}

#[test]
fn expression_errors_point_into_the_file() {
    let e = load(&SAXPY.replace("\"2 * n\"", "\"2 * n / (n - 1024)\"")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:22:16: work.flops at n=1024: division by zero (2048 / 0)"
    );
    let e = load(&SAXPY.replace("\"2 * n\"", "\"2 * n +\"")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:22:17: work.flops: the expression ends where a value is expected"
    );
    let e =
        load(&SAXPY.replace("length = \"n\"\ninit", "length = \"n - 2048\"\ninit")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:11:11: args[1] (x).length at n=1024: a count cannot be negative, found -1024"
    );
    let e = load(&SAXPY.replace("\"64\"", "\"96\"")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:20:11: ndrange: at n=1024, the local size 96 does not divide the global size 256 in dimension 0"
    );
    let e = load(&SAXPY.replace("\"2 * n\"", "\"2 * q\"")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:22:14: work.flops at n=1024: no size or value `q`"
    );
    let e = load(&SAXPY.replace("flops = ", "flop = ")).unwrap_err();
    assert!(
        e.starts_with("DIR/k.toml:22:8: work: no counter `flop` (there are global_load_bytes, "),
        "{e}"
    );
    let e = load(&SAXPY.replace(
        "scalar = \"float\"\nvalue = \"2\"",
        "scalar = \"int\"\nvalue = \"n / 3\"",
    ))
    .unwrap_err();
    assert!(
        e.contains(
            "args[0] (argument 0).value at n=1024: 341.3333333333333 is not a value of type int"
        ),
        "{e}"
    );
}

#[test]
fn the_kernel_and_its_arguments_are_checked_against_the_source() {
    let e = load(&SAXPY.replace("kernel = \"saxpy_vec4\"", "kernel = \"saxpy4\"")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:2:10: no kernel `saxpy4` in DIR/saxpy.cl (it declares saxpy_vec4, saxpy_ref)"
    );
    let two_args = SAXPY.replace("[[args]]\nscalar = \"float\"\nvalue = \"2\"\n", "");
    let e = load(&two_args).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:2:10: kernel `saxpy_vec4` of DIR/saxpy.cl takes 3 argument(s) (const float a, __global const float4 *x, __global float4 *y), the file gives 2"
    );
    let swapped = SAXPY.replace(
        "scalar = \"float\"\nvalue = \"2\"",
        "buffer = \"float\"\nlength = \"n\"",
    );
    let e = load(&swapped).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:2:10: kernel `saxpy_vec4` of DIR/saxpy.cl: argument 0 is `const float a`, but the file gives a buffer"
    );
    let e = load(&format!("{SAXPY}[check]\nreference = \"saxpy_cpu\"\n")).unwrap_err();
    assert!(e.contains("no kernel `saxpy_cpu`"), "{e}");
    assert!(load(&format!("{SAXPY}[check]\nreference = \"none\"\n")).is_ok());
    let e = load(&SAXPY.replace("saxpy.cl", "nothere.cl")).unwrap_err();
    assert!(e.starts_with("DIR/k.toml:1:10: source: "), "{e}");
}

#[test]
fn malformed_files_say_what_was_expected() {
    let e = load(&SAXPY.replace(
        "buffer = \"float\"\nlength = \"n\"\ninit",
        "buffer = \"float3x\"\nlength = \"n\"\ninit",
    ))
    .unwrap_err();
    assert!(
        e.starts_with("DIR/k.toml:10:10: element type `float3x`: expected one of char,"),
        "{e}"
    );
    let e = load(&SAXPY.replace("access = \"read_write\"", "access = \"rw\"")).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:17:10: args[2] (y).access: `rw`, expected read, write or read_write"
    );
    let e = load(&SAXPY.replace("init = \"random\"", "init = \"gauss\"")).unwrap_err();
    assert!(
        e.contains("`gauss`, expected random, zeros, constant or ramp"),
        "{e}"
    );
    let e = load(&SAXPY.replace(
        "kernel = \"saxpy_vec4\"",
        "kernel = \"saxpy_vec4\"\ncolour = 1",
    ))
    .unwrap_err();
    assert!(
        e.starts_with("DIR/k.toml:3:1: not a kernel file: unknown field `colour`"),
        "{e}"
    );
    let e =
        load(&SAXPY.replace("global = [\"n / 4\"]", "global = [\"n / 4\", \"1\"]")).unwrap_err();
    assert!(e.contains("global has 2 dimension(s), local 1"), "{e}");
    let e = load(&SAXPY.replace("value = \"2\"", "value = \"2\"\nlength = \"n\"")).unwrap_err();
    assert!(
        e.contains("`length` does not apply to a scalar argument"),
        "{e}"
    );
}

#[test]
fn buffers_start_as_declared_and_differences_are_found() {
    let ramp = initial_bytes(
        Elem::Int,
        4,
        &Init::Ramp {
            start: 1.0,
            step: 2.0,
        },
    );
    assert_eq!(
        (0..4).map(|i| Elem::Int.read(&ramp, i)).collect::<Vec<_>>(),
        [1.0, 3.0, 5.0, 7.0]
    );
    let random = initial_bytes(
        Elem::UChar,
        1000,
        &Init::Random {
            seed: 3,
            low: 10.0,
            high: 20.0,
        },
    );
    assert!((0..1000).all(|i| (10.0..20.0).contains(&Elem::UChar.read(&random, i))));
    let poison = initial_bytes(Elem::Double, 2, &Init::Poison);
    assert!(Elem::Double.read(&poison, 1).is_nan());
    let a = initial_bytes(Elem::Float, 3, &Init::Constant(1.0));
    let mut b = a.clone();
    assert_eq!(first_difference(Elem::Float, &a, &b, 0.0), None);
    b[8..12].copy_from_slice(&1.5f32.to_ne_bytes());
    assert_eq!(
        first_difference(Elem::Float, &b, &a, 0.1),
        Some(Difference {
            index: 2,
            got: 1.5,
            expected: 1.0
        })
    );
    assert_eq!(first_difference(Elem::Float, &b, &a, 0.5), None);
    assert!(first_difference(Elem::Float, &poison[..8], &a[..8], 1.0).is_some());
}

/// A sweep of more configurations than any measurement plan is refused at `[sizes]` before a
/// configuration is built: 300 values of each of three sizes are 27 million, which were all built
/// in memory before.
#[test]
fn a_sweep_beyond_max_configurations_is_refused_at_its_sizes() {
    let values: Vec<String> = (1..=300).map(|v| (v * 1024).to_string()).collect();
    let values = values.join(", ");
    let text = SAXPY.replace(
        "n = [1024, 4096]",
        &format!("n = [{values}]\nm = [{values}]\nk = [{values}]"),
    );
    let e = load(&text).unwrap_err();
    assert_eq!(
        e,
        "DIR/k.toml:3:1: sizes: 27000000 combinations of the values; a file sweeps at most 10000 (each is built, run and checked)"
    );
    // At the bound, every configuration is resolved.
    let values: Vec<String> = (1..=100).map(|v| (v * 1024).to_string()).collect();
    let values = values.join(", ");
    let text = SAXPY.replace(
        "n = [1024, 4096]",
        &format!("n = [{values}]\nm = [{values}]"),
    );
    assert_eq!(
        load(&text).unwrap().configurations.len(),
        MAX_CONFIGURATIONS
    );
}

/// A variant's kernel that the source lacks is named at the file's line and column, then the
/// variant (found by fuzzing: the variant came first, before the file's name).
#[test]
fn a_variants_missing_kernel_is_an_error_at_its_line_and_column() {
    let path = kernel_files().join("copy.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("kernel = \"copy\"", "kernel = \"Yopy\"");
    let e = KernelFile::parse(&path, &text).unwrap_err().to_string();
    let expected = format!(
        "{}:6:10: variant `float`: no kernel `Yopy` in ",
        path.display()
    );
    assert!(e.starts_with(&expected), "{e}");
    assert!(e.ends_with("copy.cl (it declares copy)"), "{e}");
}
