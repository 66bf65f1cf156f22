//! Kernels declared in a file, with no Rust: a TOML file names an OpenCL C source and a kernel,
//! the sizes to sweep, each argument (buffers with their element type, length, initial contents
//! and access; scalars; local-memory arguments), the NDRange, the work formulas that become the
//! computed counters, and how the output is checked (README.md, "Your own kernel").
//!
//! [`KernelFile::load`] reads and checks the whole file before anything runs: every expression
//! at every size of every variant is evaluated, the NDRange's local size must divide the global
//! one, lengths must be positive, and the source must declare the kernel (and the reference)
//! with the arguments the file gives. Errors name the file, line and column.

pub mod expr;
pub mod signature;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;
use yosoku_plugin_sdk::PluginError;

use crate::suite::{Plan, Work, pseudo_random};
use expr::Expr;
use signature::{ParamKind, Signature};

/// The variant name of a file without `[[variants]]`.
pub const DEFAULT_VARIANT: &str = "default";

/// What `kernel_timings.check` says of a configuration checked by nothing.
pub const UNCHECKED: &str = "unchecked";

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ExprText {
    Text(String),
    Integer(i64),
    Float(f64),
}

type SpannedExpr = Spanned<ExprText>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    source: Spanned<String>,
    kernel: Spanned<String>,
    program: Option<String>,
    size_meaning: Option<String>,
    #[serde(default)]
    build_options: String,
    sizes: Spanned<BTreeMap<String, Spanned<Vec<u64>>>>,
    #[serde(default)]
    variants: Vec<Spanned<VariantSpec>>,
    args: Vec<Spanned<ArgSpec>>,
    ndrange: Spanned<NdRangeSpec>,
    #[serde(default)]
    work: BTreeMap<String, SpannedExpr>,
    check: Option<Spanned<CheckSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    name: String,
    kernel: Option<Spanned<String>>,
    build_options: Option<String>,
    #[serde(default)]
    values: BTreeMap<String, f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgSpec {
    name: Option<String>,
    buffer: Option<Spanned<String>>,
    scalar: Option<Spanned<String>>,
    local_bytes: Option<SpannedExpr>,
    length: Option<SpannedExpr>,
    value: Option<SpannedExpr>,
    init: Option<Spanned<String>>,
    seed: Option<u64>,
    range: Option<Spanned<[f64; 2]>>,
    start: Option<SpannedExpr>,
    step: Option<SpannedExpr>,
    access: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NdRangeSpec {
    global: Spanned<Vec<SpannedExpr>>,
    local: Spanned<Vec<SpannedExpr>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckSpec {
    reference: Spanned<String>,
    tolerance: Option<f64>,
    global: Option<Spanned<Vec<SpannedExpr>>>,
    local: Option<Spanned<Vec<SpannedExpr>>>,
}

/// An element type of a buffer or scalar, as OpenCL C spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Float,
    Double,
}

const ELEMS: &[(&str, Elem)] = &[
    ("char", Elem::Char),
    ("uchar", Elem::UChar),
    ("short", Elem::Short),
    ("ushort", Elem::UShort),
    ("int", Elem::Int),
    ("uint", Elem::UInt),
    ("long", Elem::Long),
    ("ulong", Elem::ULong),
    ("float", Elem::Float),
    ("double", Elem::Double),
];

impl Elem {
    fn parse(text: &str) -> Option<Self> {
        ELEMS.iter().find(|(n, _)| *n == text).map(|(_, e)| *e)
    }

    pub fn name(self) -> &'static str {
        ELEMS
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("?", |(n, _)| *n)
    }

    pub fn bytes(self) -> usize {
        match self {
            Self::Char | Self::UChar => 1,
            Self::Short | Self::UShort => 2,
            Self::Int | Self::UInt | Self::Float => 4,
            Self::Long | Self::ULong | Self::Double => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Self::Float | Self::Double)
    }

    /// The range an integer type holds.
    fn limits(self) -> (f64, f64) {
        match self {
            Self::Char => (f64::from(i8::MIN), f64::from(i8::MAX)),
            Self::UChar => (0.0, f64::from(u8::MAX)),
            Self::Short => (f64::from(i16::MIN), f64::from(i16::MAX)),
            Self::UShort => (0.0, f64::from(u16::MAX)),
            Self::Int => (f64::from(i32::MIN), f64::from(i32::MAX)),
            Self::UInt => (0.0, f64::from(u32::MAX)),
            Self::Long => (i64::MIN as f64, i64::MAX as f64),
            Self::ULong => (0.0, u64::MAX as f64),
            Self::Float => (f64::from(f32::MIN), f64::from(f32::MAX)),
            Self::Double => (f64::MIN, f64::MAX),
        }
    }

    /// `value` in this type's bytes (native order, as the device reads them); integers are
    /// truncated toward zero, which callers have checked is exact where it matters.
    pub fn push(self, value: f64, out: &mut Vec<u8>) {
        match self {
            Self::Char => out.extend_from_slice(&(value as i8).to_ne_bytes()),
            Self::UChar => out.extend_from_slice(&(value as u8).to_ne_bytes()),
            Self::Short => out.extend_from_slice(&(value as i16).to_ne_bytes()),
            Self::UShort => out.extend_from_slice(&(value as u16).to_ne_bytes()),
            Self::Int => out.extend_from_slice(&(value as i32).to_ne_bytes()),
            Self::UInt => out.extend_from_slice(&(value as u32).to_ne_bytes()),
            Self::Long => out.extend_from_slice(&(value as i64).to_ne_bytes()),
            Self::ULong => out.extend_from_slice(&(value as u64).to_ne_bytes()),
            Self::Float => out.extend_from_slice(&(value as f32).to_ne_bytes()),
            Self::Double => out.extend_from_slice(&value.to_ne_bytes()),
        }
    }

    /// Element `i` of `bytes` as f64.
    pub fn read(self, bytes: &[u8], i: usize) -> f64 {
        let n = self.bytes();
        let b = &bytes[i * n..(i + 1) * n];
        let mut a8 = [0u8; 8];
        a8[..n].copy_from_slice(b);
        let a4 = [a8[0], a8[1], a8[2], a8[3]];
        let a2 = [a8[0], a8[1]];
        match self {
            Self::Char => f64::from(i8::from_ne_bytes([a8[0]])),
            Self::UChar => f64::from(a8[0]),
            Self::Short => f64::from(i16::from_ne_bytes(a2)),
            Self::UShort => f64::from(u16::from_ne_bytes(a2)),
            Self::Int => f64::from(i32::from_ne_bytes(a4)),
            Self::UInt => f64::from(u32::from_ne_bytes(a4)),
            Self::Long => i64::from_ne_bytes(a8) as f64,
            Self::ULong => u64::from_ne_bytes(a8) as f64,
            Self::Float => f64::from(f32::from_ne_bytes(a4)),
            Self::Double => f64::from_ne_bytes(a8),
        }
    }
}

/// A buffer's initial contents.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// Uniform in `[low, high)` from a seed (integers: truncated).
    Random {
        seed: u64,
        low: f64,
        high: f64,
    },
    Zeros,
    Constant(f64),
    /// `start + i * step`.
    Ramp {
        start: f64,
        step: f64,
    },
    /// NaN for float types, zeros for integers: an output never written shows (the default of a
    /// `write` buffer).
    Poison,
}

/// How the kernel uses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

/// One argument, resolved at one configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum Argument {
    Buffer {
        name: String,
        elem: Elem,
        length: usize,
        init: Init,
        access: Access,
    },
    Scalar {
        name: String,
        elem: Elem,
        value: f64,
    },
    /// A `__local` pointer of this many bytes per work-group.
    Local { name: String, bytes: usize },
}

impl Argument {
    pub fn name(&self) -> &str {
        match self {
            Self::Buffer { name, .. } | Self::Scalar { name, .. } | Self::Local { name, .. } => {
                name
            }
        }
    }
}

/// The buffer's bytes at the start of a launch sequence.
pub fn initial_bytes(elem: Elem, length: usize, init: &Init) -> Vec<u8> {
    let mut out = Vec::with_capacity(length * elem.bytes());
    match init {
        Init::Random { seed, low, high } => {
            for u in pseudo_random(length, *seed) {
                // pseudo_random is uniform in [-1, 1).
                let x = low + (f64::from(u) + 1.0) / 2.0 * (high - low);
                elem.push(if elem.is_float() { x } else { x.floor() }, &mut out);
            }
        }
        Init::Zeros => (0..length).for_each(|_| elem.push(0.0, &mut out)),
        Init::Constant(v) => (0..length).for_each(|_| elem.push(*v, &mut out)),
        Init::Ramp { start, step } => {
            (0..length).for_each(|i| elem.push(start + i as f64 * step, &mut out));
        }
        Init::Poison => {
            let v = if elem.is_float() { f64::NAN } else { 0.0 };
            (0..length).for_each(|_| elem.push(v, &mut out));
        }
    }
    out
}

/// How a configuration's output is checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub kernel: String,
    pub global: Vec<usize>,
    /// None: the driver picks the work-group size.
    pub local: Option<Vec<usize>>,
    pub tolerance: f64,
}

/// One configuration of a kernel file: a variant at one point of the size sweep.
#[derive(Debug, Clone)]
pub struct Configuration {
    pub file: Arc<SourceFile>,
    pub program: String,
    pub variant: String,
    pub size_meaning: String,
    pub kernel: String,
    pub build_options: String,
    /// The sizes, in the file's (alphabetical) order.
    pub sizes: Vec<(String, u64)>,
    pub args: Vec<Argument>,
    pub global: Vec<usize>,
    pub local: Vec<usize>,
    pub vector_width: usize,
    pub work: Work,
    pub reference: Option<Reference>,
}

/// The OpenCL C source a kernel file names.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

impl Configuration {
    /// `n=...;m=...`
    pub fn size_text(&self) -> String {
        self.sizes
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The computed work counters of one launch, by the same names as the suite's.
    pub fn counters(&self) -> BTreeMap<&'static str, (f64, &'static str)> {
        Plan {
            inputs: Vec::new(),
            outputs: Vec::new(),
            args: Vec::new(),
            global: self.global.clone(),
            local: self.local.clone(),
            vector_width: self.vector_width,
            work: self.work,
        }
        .counters()
    }

    /// What `kernel_timings.check` says.
    pub fn check_text(&self) -> String {
        self.reference.as_ref().map_or_else(
            || UNCHECKED.to_owned(),
            |r| format!("reference kernel {}", r.kernel),
        )
    }
}

/// A kernel file, read and checked: its configurations, in sweep order (variant, then sizes).
#[derive(Debug, Clone)]
pub struct KernelFile {
    pub path: PathBuf,
    pub configurations: Vec<Configuration>,
}

/// The work formulas a file may give, beside `vector_width`.
const WORK_KEYS: &[&str] = &[
    "global_load_bytes",
    "global_store_bytes",
    "local_load_bytes",
    "local_store_bytes",
    "flops",
    "local_memory_per_group_bytes",
    "vector_width",
];

/// Turns byte offsets of the TOML text into file:line:column errors.
struct Located<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Located<'_> {
    fn at(&self, offset: usize, message: impl Into<String>) -> PluginError {
        PluginError::at_offset(self.path, self.text, offset, message.into())
    }

    fn span(&self, span: &Range<usize>, message: impl Into<String>) -> PluginError {
        self.at(span.start, message)
    }

    /// Parses an expression; its errors point into the string.
    fn expr(&self, e: &SpannedExpr, what: &str) -> Result<(Expr, usize), PluginError> {
        let span = e.span();
        match e.get_ref() {
            ExprText::Integer(v) => Ok((Expr::number(*v as f64), span.start)),
            ExprText::Float(v) => Ok((Expr::number(*v), span.start)),
            ExprText::Text(t) => {
                // The expression starts after the opening quote.
                let base = span.start + 1;
                Expr::parse(t)
                    .map(|x| (x, base))
                    .map_err(|err| self.at(base + err.at, format!("{what}: {}", err.message)))
            }
        }
    }
}

/// An expression with the offset its error positions count from.
struct Formula {
    expr: Expr,
    base: usize,
    what: String,
}

impl Formula {
    fn new(
        loc: &Located<'_>,
        e: &SpannedExpr,
        what: impl Into<String>,
    ) -> Result<Self, PluginError> {
        let what = what.into();
        let (expr, base) = loc.expr(e, &what)?;
        Ok(Self { expr, base, what })
    }

    fn value(&self, loc: &Located<'_>, env: &Env) -> Result<f64, PluginError> {
        self.expr.eval(&|n| env.get(n)).map_err(|e| {
            loc.at(
                self.base + e.at,
                format!("{} at {}: {}", self.what, env.point, e.message),
            )
        })
    }

    /// A whole number > 0 (or >= 0 when `zero_ok`).
    fn count(&self, loc: &Located<'_>, env: &Env, zero_ok: bool) -> Result<usize, PluginError> {
        let v = self.value(loc, env)?;
        let fail = |why: &str| {
            loc.at(
                self.base,
                format!("{} at {}: {why}, found {v}", self.what, env.point),
            )
        };
        if v < 0.0 {
            return Err(fail("a count cannot be negative"));
        }
        if v.fract() != 0.0 {
            return Err(fail("expected a whole number"));
        }
        if v == 0.0 && !zero_ok {
            return Err(fail("expected a number above 0"));
        }
        if v > usize::MAX as f64 / 2.0 {
            return Err(fail("too large"));
        }
        Ok(v as usize)
    }
}

/// A variant as resolved: the file's kernel and options unless it gives its own.
struct Variant {
    name: String,
    kernel: Spanned<String>,
    options: String,
    values: BTreeMap<String, f64>,
}

/// The names an expression can read at one configuration.
struct Env {
    values: BTreeMap<String, f64>,
    /// `n=1024, variant float4`, for errors.
    point: String,
}

impl Env {
    fn get(&self, name: &str) -> Option<f64> {
        self.values.get(name).copied()
    }
}

enum ArgFormula {
    Buffer {
        name: String,
        elem: Elem,
        length: Formula,
        init: InitFormula,
        access: Access,
    },
    Scalar {
        name: String,
        elem: Elem,
        value: Formula,
        at: usize,
    },
    Local {
        name: String,
        bytes: Formula,
    },
}

enum InitFormula {
    Random { seed: u64, low: f64, high: f64 },
    Zeros,
    Constant(Formula),
    Ramp { start: Formula, step: Formula },
    Poison,
}

fn elem(loc: &Located<'_>, text: &Spanned<String>) -> Result<Elem, PluginError> {
    Elem::parse(text.get_ref().trim()).ok_or_else(|| {
        let known: Vec<&str> = ELEMS.iter().map(|(n, _)| *n).collect();
        loc.span(
            &text.span(),
            format!(
                "element type `{}`: expected one of {}",
                text.get_ref(),
                known.join(", ")
            ),
        )
    })
}

/// A buffer's initial contents (`init` and the keys it reads), by its element type and access.
fn init_formula(
    loc: &Located<'_>,
    index: usize,
    a: &ArgSpec,
    elem: Elem,
    access: Access,
    what: &dyn Fn(&str) -> String,
) -> Result<InitFormula, PluginError> {
    let init_name = a.init.as_ref().map(|s| (s.get_ref().as_str(), s.span()));
    match init_name {
        None if access == Access::Write => Ok(InitFormula::Poison),
        None | Some(("zeros", _)) => Ok(InitFormula::Zeros),
        Some(("random", _)) => {
            let (low, high) = match &a.range {
                Some(r) => {
                    let [low, high] = *r.get_ref();
                    if !(low < high && low.is_finite() && high.is_finite()) {
                        return Err(loc.span(
                            &r.span(),
                            format!("{}: expected [low, high] with low < high", what("range")),
                        ));
                    }
                    (low, high)
                }
                None if elem.is_float() => (-1.0, 1.0),
                None => (0.0, 100.0),
            };
            Ok(InitFormula::Random {
                seed: a.seed.unwrap_or(index as u64 + 1),
                low,
                high,
            })
        }
        Some(("constant", span)) => {
            let v = a.value.as_ref().ok_or_else(|| {
                loc.span(
                    &span,
                    format!(
                        "{}: `constant` needs `value` (an expression of the sizes)",
                        what("init")
                    ),
                )
            })?;
            Ok(InitFormula::Constant(Formula::new(loc, v, what("value"))?))
        }
        Some(("ramp", span)) => {
            let start = match &a.start {
                Some(s) => Formula::new(loc, s, what("start"))?,
                None => Formula {
                    expr: Expr::number(0.0),
                    base: span.start,
                    what: what("start"),
                },
            };
            let step = match &a.step {
                Some(s) => Formula::new(loc, s, what("step"))?,
                None => Formula {
                    expr: Expr::number(1.0),
                    base: span.start,
                    what: what("step"),
                },
            };
            Ok(InitFormula::Ramp { start, step })
        }
        Some((other, span)) => Err(loc.span(
            &span,
            format!(
                "{}: `{other}`, expected random, zeros, constant or ramp",
                what("init")
            ),
        )),
    }
}

fn arg_formula(
    loc: &Located<'_>,
    index: usize,
    spec: &Spanned<ArgSpec>,
) -> Result<ArgFormula, PluginError> {
    let a = spec.get_ref();
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("argument {index}"));
    let what = |key: &str| format!("args[{index}] ({name}).{key}");
    let kinds = [
        a.buffer.is_some(),
        a.scalar.is_some(),
        a.local_bytes.is_some(),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(loc.span(
            &spec.span(),
            format!(
                "args[{index}] ({name}): give exactly one of `buffer = \"<type>\"`, `scalar = \"<type>\"` or `local_bytes = \"<expression>\"`"
            ),
        ));
    }
    let refuse = |present: bool, key: &str, kind: &str| -> Result<(), PluginError> {
        if present {
            Err(loc.span(
                &spec.span(),
                format!("args[{index}] ({name}): `{key}` does not apply to a {kind} argument"),
            ))
        } else {
            Ok(())
        }
    };
    if let Some(t) = &a.buffer {
        let elem = elem(loc, t)?;
        let constant = a.init.as_ref().is_some_and(|i| i.get_ref() == "constant");
        refuse(
            a.value.is_some() && !constant,
            "value",
            "buffer (other than `init = \"constant\"`)",
        )?;
        let length = a.length.as_ref().ok_or_else(|| {
            loc.span(
                &spec.span(),
                format!("args[{index}] ({name}): a buffer needs `length` (elements, an expression of the sizes)"),
            )
        })?;
        let access = match &a.access {
            None => Access::Read,
            Some(s) => match s.get_ref().as_str() {
                "read" => Access::Read,
                "write" => Access::Write,
                "read_write" => Access::ReadWrite,
                other => {
                    return Err(loc.span(
                        &s.span(),
                        format!(
                            "{}: `{other}`, expected read, write or read_write",
                            what("access")
                        ),
                    ));
                }
            },
        };
        let init = init_formula(loc, index, a, elem, access, &what)?;
        return Ok(ArgFormula::Buffer {
            length: Formula::new(loc, length, what("length"))?,
            name,
            elem,
            init,
            access,
        });
    }
    for (present, key) in [
        (a.length.is_some(), "length"),
        (a.init.is_some(), "init"),
        (a.access.is_some(), "access"),
        (a.seed.is_some(), "seed"),
        (a.range.is_some(), "range"),
        (a.start.is_some(), "start"),
        (a.step.is_some(), "step"),
    ] {
        refuse(
            present,
            key,
            if a.scalar.is_some() {
                "scalar"
            } else {
                "local-memory"
            },
        )?;
    }
    if let Some(t) = &a.scalar {
        let elem = elem(loc, t)?;
        let value = a.value.as_ref().ok_or_else(|| {
            loc.span(
                &spec.span(),
                format!(
                    "args[{index}] ({name}): a scalar needs `value` (an expression of the sizes)"
                ),
            )
        })?;
        return Ok(ArgFormula::Scalar {
            value: Formula::new(loc, value, what("value"))?,
            at: value.span().start,
            name,
            elem,
        });
    }
    refuse(a.value.is_some(), "value", "local-memory")?;
    let bytes = a
        .local_bytes
        .as_ref()
        .map(|b| Formula::new(loc, b, what("local_bytes")));
    match bytes {
        Some(bytes) => Ok(ArgFormula::Local {
            name,
            bytes: bytes?,
        }),
        None => Err(loc.span(&spec.span(), format!("args[{index}] ({name}): no kind"))),
    }
}

fn formulas(
    loc: &Located<'_>,
    list: &Spanned<Vec<SpannedExpr>>,
    what: &str,
) -> Result<Vec<Formula>, PluginError> {
    let n = list.get_ref().len();
    if !(1..=3).contains(&n) {
        return Err(loc.span(
            &list.span(),
            format!("{what}: expected 1 to 3 dimensions, found {n}"),
        ));
    }
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(d, e)| Formula::new(loc, e, format!("{what}[{d}]")))
        .collect()
}

/// Global and local sizes at one configuration: local divides global in every dimension.
fn ndrange(
    loc: &Located<'_>,
    env: &Env,
    global: &[Formula],
    local: Option<&[Formula]>,
    at: &Range<usize>,
    what: &str,
) -> Result<(Vec<usize>, Option<Vec<usize>>), PluginError> {
    let g = global
        .iter()
        .map(|f| f.count(loc, env, false))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(local) = local else {
        return Ok((g, None));
    };
    let l = local
        .iter()
        .map(|f| f.count(loc, env, false))
        .collect::<Result<Vec<_>, _>>()?;
    if l.len() != g.len() {
        return Err(loc.span(
            at,
            format!(
                "{what}: global has {} dimension(s), local {}",
                g.len(),
                l.len()
            ),
        ));
    }
    for (d, (g, l)) in g.iter().zip(&l).enumerate() {
        if g % l != 0 {
            return Err(loc.at(
                local[d].base,
                format!(
                    "{what}: at {}, the local size {l} does not divide the global size {g} in dimension {d}",
                    env.point
                ),
            ));
        }
    }
    Ok((g, Some(l)))
}

/// The kernel `name` of the source, with its parameters matched against the arguments; an error
/// names the `variant` that names the kernel, where the file has variants.
fn check_signature(
    loc: &Located<'_>,
    source: &SourceFile,
    found: &[Signature],
    variant: Option<&str>,
    name: &Spanned<String>,
    args: &[ArgFormula],
) -> Result<(), PluginError> {
    let file = source.path.display();
    let at_name = |message: String| {
        let prefix = variant.map_or(String::new(), |v| format!("variant `{v}`: "));
        loc.span(&name.span(), format!("{prefix}{message}"))
    };
    let Some(sig) = found.iter().find(|s| &s.name == name.get_ref()) else {
        let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
        return Err(at_name(format!(
            "no kernel `{}` in {file} (it declares {})",
            name.get_ref(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    if sig.params.len() != args.len() {
        return Err(at_name(format!(
            "kernel `{}` of {file} takes {} argument(s) ({}), the file gives {}",
            sig.name,
            sig.params.len(),
            sig.params
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        )));
    }
    for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
        let (given, fits) = match a {
            ArgFormula::Buffer { .. } => (
                "a buffer",
                matches!(p.kind, ParamKind::Global | ParamKind::Constant),
            ),
            ArgFormula::Scalar { .. } => ("a scalar", p.kind == ParamKind::Value),
            ArgFormula::Local { .. } => ("local memory", p.kind == ParamKind::Local),
        };
        if !fits {
            return Err(at_name(format!(
                "kernel `{}` of {file}: argument {i} is `{}`, but the file gives {given}",
                sig.name, p.text
            )));
        }
    }
    Ok(())
}

/// The variants of a kernel file: its `[[variants]]`, or one called [`DEFAULT_VARIANT`].
fn variants_of(spec: &FileSpec) -> Vec<Variant> {
    if spec.variants.is_empty() {
        return vec![Variant {
            name: DEFAULT_VARIANT.to_owned(),
            kernel: spec.kernel.clone(),
            options: spec.build_options.clone(),
            values: BTreeMap::new(),
        }];
    }
    spec.variants
        .iter()
        .map(|v| {
            let s = v.get_ref();
            Variant {
                name: s.name.clone(),
                kernel: s.kernel.clone().unwrap_or_else(|| spec.kernel.clone()),
                options: format!(
                    "{} {}",
                    spec.build_options,
                    s.build_options.clone().unwrap_or_default()
                )
                .trim()
                .to_owned(),
                values: s.values.clone(),
            }
        })
        .collect()
}

/// Every combination of the sizes' values, in the sizes' (alphabetical) order.
/// The most configurations (variants times combinations of sizes) one kernel file sweeps: each
/// is compiled, launched at least `min_launches` times and checked, so a sweep beyond this is a
/// mistake (a list where a range of a few values was meant), not a measurement plan.
pub const MAX_CONFIGURATIONS: usize = 10_000;

fn sweep(
    loc: &Located<'_>,
    sizes: &Spanned<BTreeMap<String, Spanned<Vec<u64>>>>,
) -> Result<Vec<Vec<(String, u64)>>, PluginError> {
    if sizes.get_ref().is_empty() {
        return Err(loc.span(
            &sizes.span(),
            "sizes: name at least one size and its values (`n = [1024, 4096]`)",
        ));
    }
    let mut count: usize = 1;
    for (name, values) in sizes.get_ref() {
        if values.get_ref().is_empty() {
            return Err(loc.span(&values.span(), format!("sizes.{name}: no values")));
        }
        count = count.saturating_mul(values.get_ref().len());
    }
    if count > MAX_CONFIGURATIONS {
        return Err(loc.span(
            &sizes.span(),
            format!(
                "sizes: {count} combinations of the values; a file sweeps at most {MAX_CONFIGURATIONS} (each is built, run and checked)"
            ),
        ));
    }
    let mut points: Vec<Vec<(String, u64)>> = vec![Vec::new()];
    for (name, values) in sizes.get_ref() {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.get_ref().iter().map(move |v| {
                    let mut q = p.clone();
                    q.push((name.clone(), *v));
                    q
                })
            })
            .collect();
    }
    Ok(points)
}

/// One argument at one configuration.
fn resolve_argument(loc: &Located<'_>, env: &Env, a: &ArgFormula) -> Result<Argument, PluginError> {
    Ok(match a {
        ArgFormula::Buffer {
            name,
            elem,
            length,
            init,
            access,
        } => Argument::Buffer {
            name: name.clone(),
            elem: *elem,
            length: length.count(loc, env, false)?,
            init: match init {
                InitFormula::Random { seed, low, high } => Init::Random {
                    seed: *seed,
                    low: *low,
                    high: *high,
                },
                InitFormula::Zeros => Init::Zeros,
                InitFormula::Poison => Init::Poison,
                InitFormula::Constant(v) => Init::Constant(v.value(loc, env)?),
                InitFormula::Ramp { start, step } => Init::Ramp {
                    start: start.value(loc, env)?,
                    step: step.value(loc, env)?,
                },
            },
            access: *access,
        },
        ArgFormula::Scalar {
            name,
            elem,
            value,
            at,
        } => {
            let v = value.value(loc, env)?;
            let (low, high) = elem.limits();
            if !elem.is_float() && (v.fract() != 0.0 || v < low || v > high) {
                return Err(loc.at(
                    *at,
                    format!(
                        "{} at {}: {v} is not a value of type {}",
                        value.what,
                        env.point,
                        elem.name()
                    ),
                ));
            }
            Argument::Scalar {
                name: name.clone(),
                elem: *elem,
                value: v,
            }
        }
        ArgFormula::Local { name, bytes } => Argument::Local {
            name: name.clone(),
            bytes: bytes.count(loc, env, false)?,
        },
    })
}

/// The work counters of one launch at one configuration, and its vector width.
fn resolve_work(
    loc: &Located<'_>,
    env: &Env,
    work: &BTreeMap<&str, Formula>,
) -> Result<(Work, usize), PluginError> {
    let mut w = BTreeMap::new();
    for (key, f) in work {
        let v = f.value(loc, env)?;
        if v < 0.0 {
            return Err(loc.at(
                f.base,
                format!(
                    "{} at {}: a counter cannot be negative, found {v}",
                    f.what, env.point
                ),
            ));
        }
        w.insert(*key, v);
    }
    let vector_width = match work.get("vector_width") {
        Some(f) => f.count(loc, env, false)?,
        None => 1,
    };
    let get = |k: &str| w.get(k).copied().unwrap_or(0.0);
    Ok((
        Work {
            global_load_bytes: get("global_load_bytes"),
            global_store_bytes: get("global_store_bytes"),
            local_load_bytes: get("local_load_bytes"),
            local_store_bytes: get("local_store_bytes"),
            flops: get("flops"),
            local_memory_per_group_bytes: get("local_memory_per_group_bytes"),
        },
        vector_width,
    ))
}

/// A `[check]`'s reference kernel: its name, global and local sizes, tolerance.
type ReferenceFormulas = (String, Option<Vec<Formula>>, Option<Vec<Formula>>, f64);

/// The reference kernel's launch at one configuration: its own NDRange, or the kernel's global
/// size and the driver's work-groups.
fn resolve_reference(
    loc: &Located<'_>,
    env: &Env,
    (name, rg, rl, tolerance): &ReferenceFormulas,
    (g, global): (&[usize], &[Formula]),
    span: &Range<usize>,
) -> Result<Reference, PluginError> {
    let (rg, rl) = match rg {
        None => (
            g.to_vec(),
            rl.as_ref().map_or(Ok(None), |rl| {
                ndrange(loc, env, global, Some(rl), span, "check").map(|x| x.1)
            })?,
        ),
        Some(rg) => ndrange(loc, env, rg, rl.as_deref(), span, "check")?,
    };
    Ok(Reference {
        kernel: name.clone(),
        global: rg,
        local: rl,
        tolerance: *tolerance,
    })
}

impl KernelFile {
    /// Reads `path` and the source it names; every configuration resolved and checked.
    pub fn load(path: &Path) -> Result<Self, PluginError> {
        let text = yosoku_plugin_sdk::read_input_to_string(path)?;
        Self::parse(path, &text)
    }

    /// As [`load`](Self::load), from the file's text (the source is read relative to `path`).
    pub fn parse(path: &Path, text: &str) -> Result<Self, PluginError> {
        Self::parse_with_source(path, text, &yosoku_plugin_sdk::read_input_to_string)
    }

    /// As [`parse`](Self::parse), the kernel source the file names (its path relative to
    /// `path`'s folder) read by `read_source`.
    pub fn parse_with_source(
        path: &Path,
        text: &str,
        read_source: &dyn Fn(&Path) -> Result<String, PluginError>,
    ) -> Result<Self, PluginError> {
        let loc = Located { path, text };
        let spec: FileSpec = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            loc.at(at, format!("not a kernel file: {}", e.message()))
        })?;
        let parsed = Parsed::read(&loc, path, &spec, read_source)?;
        let count = parsed.variants.len().saturating_mul(parsed.points.len());
        if count > MAX_CONFIGURATIONS {
            return Err(loc.span(
                &spec.sizes.span(),
                format!(
                    "{} variants at {} combinations of sizes: {count} configurations; a file sweeps at most {MAX_CONFIGURATIONS}",
                    parsed.variants.len(),
                    parsed.points.len()
                ),
            ));
        }
        let mut configurations = Vec::new();
        for variant in &parsed.variants {
            for point in &parsed.points {
                configurations.push(parsed.configuration(&loc, &spec, variant, point)?);
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            configurations,
        })
    }
}

/// A kernel file's source and formulas, read and checked once, before any configuration is
/// resolved: the arguments, the NDRange, the work counters, the reference check, the variants
/// (each checked against the kernel's signature) and the sizes swept.
struct Parsed<'s> {
    source: Arc<SourceFile>,
    args: Vec<ArgFormula>,
    global: Vec<Formula>,
    local: Vec<Formula>,
    work: BTreeMap<&'s str, Formula>,
    reference: Option<ReferenceFormulas>,
    variants: Vec<Variant>,
    points: Vec<Vec<(String, u64)>>,
}

impl<'s> Parsed<'s> {
    fn read(
        loc: &Located<'_>,
        path: &Path,
        spec: &'s FileSpec,
        read_source: &dyn Fn(&Path) -> Result<String, PluginError>,
    ) -> Result<Self, PluginError> {
        let source_path = path
            .parent()
            .unwrap_or(Path::new("."))
            .join(spec.source.get_ref());
        let source = Arc::new(SourceFile {
            text: read_source(&source_path)
                .map_err(|e| loc.span(&spec.source.span(), format!("source: {}", e.message())))?,
            path: source_path,
        });
        let found = signature::kernels(&source.text);
        let args = spec
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| arg_formula(loc, i, a))
            .collect::<Result<Vec<_>, _>>()?;
        let nd = spec.ndrange.get_ref();
        let reference = reference_formulas(loc, spec, &source, &found, &args)?;
        let variants = variants_of(spec);
        for Variant { name, kernel, .. } in &variants {
            let variant = (!spec.variants.is_empty()).then_some(name.as_str());
            check_signature(loc, &source, &found, variant, kernel, &args)?;
        }
        Ok(Self {
            global: formulas(loc, &nd.global, "ndrange.global")?,
            local: formulas(loc, &nd.local, "ndrange.local")?,
            work: work_formulas(loc, spec)?,
            points: sweep(loc, &spec.sizes)?,
            source,
            args,
            reference,
            variants,
        })
    }

    /// One configuration: `variant` at the sizes of `point`, every formula evaluated.
    fn configuration(
        &self,
        loc: &Located<'_>,
        spec: &FileSpec,
        variant: &Variant,
        point: &[(String, u64)],
    ) -> Result<Configuration, PluginError> {
        let mut values = variant.values.clone();
        for (k, v) in point {
            values.insert(k.clone(), *v as f64);
        }
        let mut shown: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !spec.variants.is_empty() {
            shown.push(format!("variant {}", variant.name));
        }
        let env = Env {
            values,
            point: shown.join(", "),
        };
        let args = self
            .args
            .iter()
            .map(|a| resolve_argument(loc, &env, a))
            .collect::<Result<Vec<_>, _>>()?;
        let nd = spec.ndrange.get_ref();
        let (global, local) = ndrange(
            loc,
            &env,
            &self.global,
            Some(&self.local),
            &nd.local.span(),
            "ndrange",
        )?;
        let (work, vector_width) = resolve_work(loc, &env, &self.work)?;
        let reference = self
            .reference
            .as_ref()
            .map(|r| {
                let span = spec.check.as_ref().map_or(0..0, |c| c.span());
                resolve_reference(loc, &env, r, (&global, &self.global), &span)
            })
            .transpose()?;
        Ok(Configuration {
            file: Arc::clone(&self.source),
            program: spec
                .program
                .clone()
                .unwrap_or_else(|| spec.kernel.get_ref().clone()),
            variant: variant.name.clone(),
            size_meaning: spec.size_meaning.clone().unwrap_or_else(|| {
                let sizes = spec.sizes.get_ref();
                sizes.keys().cloned().collect::<Vec<_>>().join(", ")
            }),
            kernel: variant.kernel.get_ref().clone(),
            build_options: variant.options.clone(),
            sizes: point.to_vec(),
            args,
            global,
            local: local.unwrap_or_default(),
            vector_width,
            work,
            reference,
        })
    }
}

/// The `work` formulas, each named by a counter the runner knows.
fn work_formulas<'s>(
    loc: &Located<'_>,
    spec: &'s FileSpec,
) -> Result<BTreeMap<&'s str, Formula>, PluginError> {
    let mut work = BTreeMap::new();
    for (key, e) in &spec.work {
        if !WORK_KEYS.contains(&key.as_str()) {
            return Err(loc.span(
                &e.span(),
                format!(
                    "work: no counter `{key}` (there are {})",
                    WORK_KEYS.join(", ")
                ),
            ));
        }
        work.insert(key.as_str(), Formula::new(loc, e, format!("work.{key}"))?);
    }
    Ok(work)
}

/// The reference kernel the outputs are checked against (`check`), its NDRange formulas and
/// tolerance; none without a `check` or with `reference = "none"`.
fn reference_formulas(
    loc: &Located<'_>,
    spec: &FileSpec,
    source: &SourceFile,
    found: &[signature::Signature],
    args: &[ArgFormula],
) -> Result<Option<ReferenceFormulas>, PluginError> {
    let Some(c) = spec.check.as_ref() else {
        return Ok(None);
    };
    let c = c.get_ref();
    if c.reference.get_ref() == "none" {
        return Ok(None);
    }
    check_signature(loc, source, found, None, &c.reference, args)?;
    let global = c
        .global
        .as_ref()
        .map(|g| formulas(loc, g, "check.global"))
        .transpose()?;
    let local = c
        .local
        .as_ref()
        .map(|l| formulas(loc, l, "check.local"))
        .transpose()?;
    let tolerance = c.tolerance.unwrap_or(1e-5);
    if !(tolerance >= 0.0 && tolerance.is_finite()) {
        return Err(loc.span(
            &c.reference.span(),
            "check.tolerance: expected a ratio >= 0",
        ));
    }
    Ok(Some((
        c.reference.get_ref().clone(),
        global,
        local,
        tolerance,
    )))
}

/// Where a written buffer differs from the reference kernel's.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub index: usize,
    pub got: f64,
    pub expected: f64,
}

/// The first element of `got` that differs from `expected` by more than `tolerance` relative to
/// `max(|expected|, 1)`; NaN matches only NaN.
pub fn first_difference(
    elem: Elem,
    got: &[u8],
    expected: &[u8],
    tolerance: f64,
) -> Option<Difference> {
    let n = got.len().min(expected.len()) / elem.bytes();
    (0..n).find_map(|i| {
        let (g, e) = (elem.read(got, i), elem.read(expected, i));
        let same = if g.is_nan() || e.is_nan() {
            g.is_nan() && e.is_nan()
        } else {
            g == e || (g - e).abs() <= tolerance * e.abs().max(1.0)
        };
        (!same).then_some(Difference {
            index: i,
            got: g,
            expected: e,
        })
    })
}

#[cfg(test)]
mod tests;
