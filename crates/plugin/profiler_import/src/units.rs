//! Values and units as the profilers write them, normalised: times to seconds, sizes to bytes,
//! bandwidths to bytes/s, percentages to ratios, frequencies to hertz.
//!
//! Prefixes differ by tool, and the real files show which: nvprof writes binary multiples (a
//! 262,144-byte copy is `256.000000 KB` and its bandwidth, 262,144 B / 28,321 ns, is printed as
//! `8.620480 GB/s`, i.e. GiB/s), Nsight Compute decimal ones (`Kbyte` = 1,000 bytes).

/// How a tool scales `K`, `M`, `G` and `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefixes {
    /// 1024-based (nvprof).
    Binary,
    /// 1000-based (Nsight Compute, frequencies everywhere).
    Decimal,
}

/// A number in a canonical unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    pub value: f64,
    pub unit: String,
}

/// Room for a number's text without its separators, on the stack: every number a profiler
/// prints fits (a longer one takes the allocating path, with the same result).
const NUMBER_ROOM: usize = 64;

/// A number's text rewritten on the stack: what [`parse_scaled`] hands to the float parser.
struct NumberText {
    bytes: [u8; NUMBER_ROOM],
    len: usize,
}

impl NumberText {
    fn new() -> Self {
        Self {
            bytes: [0; NUMBER_ROOM],
            len: 0,
        }
    }

    /// Appends `s`; false (and nothing appended) when it does not fit.
    fn push(&mut self, s: &[u8]) -> bool {
        let Some(room) = self.bytes.get_mut(self.len..self.len + s.len()) else {
            return false;
        };
        room.copy_from_slice(s);
        self.len += s.len();
        true
    }

    /// Appends `n` in decimal; false when it does not fit.
    fn push_int(&mut self, n: i32) -> bool {
        let mut digits = [0u8; 11];
        let mut i = digits.len();
        let mut m = n.unsigned_abs();
        loop {
            i -= 1;
            digits[i] = b'0' + (m % 10) as u8;
            m /= 10;
            if m == 0 {
                break;
            }
        }
        (n >= 0 || self.push(b"-")) && self.push(&digits[i..])
    }

    fn parse(&self) -> Option<f64> {
        // Only ASCII digits, signs, points and exponents are ever appended.
        std::str::from_utf8(&self.bytes[..self.len])
            .ok()?
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
    }
}

/// Whether `t` (trimmed, containing a `,`) has thousands separators only: digits in groups of
/// three after the first group, before the decimal point.
fn separators_are_thousands(t: &str) -> bool {
    let int = t.split_once('.').map_or(t, |(int, _)| int);
    let digits = int.trim_start_matches(['-', '+']);
    let mut groups = digits.split(',');
    let Some(first) = groups.next() else {
        return false;
    };
    !first.is_empty()
        && first.len() <= 3
        && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()))
}

/// A number's text as profilers print it, without thousands separators (`4,963,609,951.19`) and
/// surrounding spaces, appended to `out`; false for text that is not written like a number (or
/// does not fit).
fn clean_number_into(text: &str, out: &mut NumberText) -> bool {
    let t = text.trim();
    if t.is_empty() {
        return false;
    }
    if !t.contains(',') {
        return out.push(t.as_bytes());
    }
    if !separators_are_thousands(t) {
        return false;
    }
    t.split(',').all(|part| out.push(part.as_bytes()))
}

/// [`clean_number_into`] on the heap, for text longer than [`NUMBER_ROOM`].
fn clean_number(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() || (t.contains(',') && !separators_are_thousands(t)) {
        return None;
    }
    Some(t.chars().filter(|&c| c != ',').collect())
}

/// Parses a number as profilers print it: optional thousands separators (`4,963,609,951.19`),
/// exponents, surrounding spaces. `None` for text that is not a number.
pub fn parse_number(text: &str) -> Option<f64> {
    parse_scaled(text, 0)
}

/// A text of 1 to 15 decimal digits, with at most one decimal point among them (`188536`,
/// `2.728162`, `.5`), as the number it is: the digits as an integer `m` below 2^53 and `k` digits
/// after the point give `m / 10^k`, two exact doubles divided in one correctly rounded step, so
/// exactly the double the float parser gives (Clinger's fast path). Most counter values are such
/// numbers, read here at a few instructions a digit instead of through the general parser.
fn small_integer(text: &str) -> Option<f64> {
    /// 10^k, exact as doubles.
    const POWERS: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let bytes = text.as_bytes();
    if !(1..=16).contains(&bytes.len()) {
        return None;
    }
    let mut value = 0u64;
    let mut digits = 0usize;
    let mut point: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            value = value * 10 + u64::from(d);
            digits += 1;
        } else if b == b'.' && point.is_none() {
            point = Some(i);
        } else {
            return None;
        }
    }
    if digits == 0 || digits > 15 {
        return None;
    }
    let after_point = point.map_or(0, |p| bytes.len() - p - 1);
    Some(value as f64 / POWERS[after_point])
}

/// Parses a number and multiplies it by 10^`exp10` in one correctly rounded step: the decimal
/// exponent is moved in the text before it is parsed, so `1.028854` ms is the double nearest
/// 0.001028854 s, not that of 1.028854 rounded and then divided by 1000 (which is one unit in the
/// last place off for about one value in five). Allocates nothing for text of up to
/// [`NUMBER_ROOM`] bytes (every value is parsed through here: an allocation per value was a
/// third of an import's time).
pub fn parse_scaled(text: &str, exp10: i32) -> Option<f64> {
    // (A byte loop: for values of a few bytes it beats the general substring search.)
    if exp10 == 0
        && let Some(v) = small_integer(text)
    {
        return Some(v);
    }
    if exp10 == 0 && !text.bytes().any(|b| b == b',') {
        // Nothing to rewrite: the text (trimmed) is what the float parser reads. Most values
        // start and end with a digit: no Unicode whitespace to look for.
        let bytes = text.as_bytes();
        let ends_graphic = |b: Option<&u8>| b.is_some_and(u8::is_ascii_graphic);
        let trimmed = if ends_graphic(bytes.first()) && ends_graphic(bytes.last()) {
            text
        } else {
            text.trim()
        };
        return trimmed.parse().ok().filter(|v: &f64| v.is_finite());
    }
    let mut cleaned = NumberText::new();
    if !clean_number_into(text, &mut cleaned) {
        // Not a number, or longer than the room on the stack.
        return parse_scaled_on_heap(&clean_number(text)?, exp10);
    }
    if exp10 == 0 {
        return cleaned.parse();
    }
    let written = &cleaned.bytes[..cleaned.len];
    let (mantissa_len, exponent) = match written.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (
            i,
            std::str::from_utf8(&written[i + 1..])
                .ok()?
                .parse::<i32>()
                .ok()?,
        ),
        None => (written.len(), 0),
    };
    // Only a plain decimal mantissa: `inf` or `nan` with an exponent added would not parse.
    let mut mantissa = NumberText::new();
    mantissa.push(&written[..mantissa_len]);
    mantissa.parse()?;
    let exponent = exponent.checked_add(exp10)?;
    if mantissa.push(b"e") && mantissa.push_int(exponent) {
        mantissa.parse()
    } else {
        parse_scaled_on_heap(&cleaned_text(&cleaned)?, exp10)
    }
}

fn cleaned_text(t: &NumberText) -> Option<String> {
    std::str::from_utf8(&t.bytes[..t.len])
        .ok()
        .map(str::to_owned)
}

/// [`parse_scaled`] of a cleaned text, through heap strings.
fn parse_scaled_on_heap(cleaned: &str, exp10: i32) -> Option<f64> {
    if exp10 == 0 {
        return cleaned.parse().ok().filter(|v: &f64| v.is_finite());
    }
    let (mantissa, exponent) = match cleaned.find(['e', 'E']) {
        Some(i) => (&cleaned[..i], cleaned[i + 1..].parse::<i32>().ok()?),
        None => (cleaned, 0),
    };
    mantissa.parse::<f64>().ok().filter(|v| v.is_finite())?;
    format!("{mantissa}e{}", exponent.checked_add(exp10)?)
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
}

fn scale(prefix: char, prefixes: Prefixes) -> Option<f64> {
    let base: f64 = match prefixes {
        Prefixes::Binary => 1024.0,
        Prefixes::Decimal => 1000.0,
    };
    Some(match prefix {
        'K' | 'k' => base,
        'M' => base * base,
        'G' => base * base * base,
        'T' => base * base * base * base,
        _ => return None,
    })
}

/// How to convert a value to its canonical unit: multiply or divide by `factor` (dividing by an
/// exact power of ten, as for ns -> s, rounds once; multiplying by 1e-9 would round twice).
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    pub factor: f64,
    pub divide: bool,
    pub unit: String,
}

impl Conversion {
    pub fn apply(&self, value: f64) -> f64 {
        if self.divide {
            value / self.factor
        } else {
            value * self.factor
        }
    }

    /// The power of ten the conversion multiplies by, when it is one (ms -> s: -3).
    fn power_of_ten(&self) -> Option<i32> {
        let k = self.factor.log10().round();
        (self.factor == 10f64.powi(k as i32)).then_some(if self.divide { -k } else { k } as i32)
    }

    /// Parses `text` and converts it, in one correctly rounded step when the conversion is a
    /// power of ten ([`parse_scaled`]). `None` when the text is not a number.
    pub fn apply_text(&self, text: &str) -> Option<f64> {
        match self.power_of_ten() {
            Some(k) => parse_scaled(text, k),
            None => parse_number(text).map(|v| self.apply(v)),
        }
    }
}

/// The numeric part of a [`Conversion`], with its power of ten worked out once: what importers
/// apply to every value (copied, never allocated; `resolve_unit` in the builder handed out a
/// cloned `Conversion`, unit string and all, per value, and that clone and the string compare
/// beside it were most of an import's time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub factor: f64,
    pub divide: bool,
    power_of_ten: Option<i32>,
}

impl Scale {
    pub fn apply(self, value: f64) -> f64 {
        if self.divide {
            value / self.factor
        } else {
            value * self.factor
        }
    }

    /// [`Conversion::apply_text`].
    pub fn apply_text(self, text: &str) -> Option<f64> {
        match self.power_of_ten {
            Some(k) => parse_scaled(text, k),
            None => parse_number(text).map(|v| self.apply(v)),
        }
    }

    /// [`Scale::apply_text`] of a text already parsed: `parsed` is `parse_number(text)`. Only a
    /// conversion by a power of ten other than 1 parses the text again (in one rounding).
    pub fn apply_parsed(self, text: &str, parsed: f64) -> Option<f64> {
        match self.power_of_ten {
            Some(0) => Some(parsed),
            Some(k) => parse_scaled(text, k),
            None => Some(self.apply(parsed)),
        }
    }
}

impl Conversion {
    pub fn scale(&self) -> Scale {
        Scale {
            factor: self.factor,
            divide: self.divide,
            power_of_ten: self.power_of_ten(),
        }
    }
}

/// The conversion of values in `unit` to the canonical unit. Units yosoku does not know are kept
/// as they are (lowercase), unscaled.
pub fn conversion(unit: &str, prefixes: Prefixes) -> Conversion {
    let unit = unit.trim();
    let c = |factor: f64, divide: bool, u: &str| Conversion {
        factor,
        divide,
        unit: u.to_owned(),
    };
    match unit {
        "" => return c(1.0, false, "count"),
        "%" => return c(100.0, true, "ratio"),
        // Threads per warp instruction (ncu's `smsp__thread_inst_executed_per_inst_executed
        // .ratio`, 0-32): over the warp size, the ratio nvprof's `warp_execution_efficiency`
        // gives (0-1).
        "thread/warp" => return c(32.0, true, "ratio"),
        "ns" | "nsecond" => return c(1e9, true, "s"),
        "us" | "usecond" | "µs" => return c(1e6, true, "s"),
        "ms" | "msecond" => return c(1e3, true, "s"),
        "s" | "second" => return c(1.0, false, "s"),
        "B" | "byte" => return c(1.0, false, "bytes"),
        "B/s" | "byte/second" => return c(1.0, false, "bytes/s"),
        "hz" | "Hz" => return c(1.0, false, "hz"),
        "cycle" => return c(1.0, false, "cycles"),
        _ => {}
    }
    // A prefixed unit: KB, Mbyte, GB/s, Gbyte/second, Mhz, Kcycle, ...
    let mut chars = unit.chars();
    if let Some(first) = chars.next() {
        let (base_unit, prefixes) = match chars.as_str() {
            "B" | "byte" => ("bytes", prefixes),
            "B/s" | "byte/second" => ("bytes/s", prefixes),
            "hz" | "Hz" => ("hz", Prefixes::Decimal),
            "cycle" => ("cycles", Prefixes::Decimal),
            "inst" => ("inst", Prefixes::Decimal),
            _ => ("", prefixes),
        };
        if !base_unit.is_empty()
            && let Some(factor) = scale(first, prefixes)
        {
            return c(factor, false, base_unit);
        }
    }
    c(1.0, false, &unit.to_lowercase())
}

/// Converts `value` in `unit` to the canonical unit.
pub fn normalise(value: f64, unit: &str, prefixes: Prefixes) -> Quantity {
    let conv = conversion(unit, prefixes);
    Quantity {
        value: conv.apply(value),
        unit: conv.unit,
    }
}

/// [`normalise`] from the value's text, in one correctly rounded step; `None` for text that is
/// not a number.
pub fn normalise_text(text: &str, unit: &str, prefixes: Prefixes) -> Option<Quantity> {
    let conv = conversion(unit, prefixes);
    Some(Quantity {
        value: conv.apply_text(text)?,
        unit: conv.unit,
    })
}

/// Splits a value that carries its unit (nvprof summaries: `100.000000%`, `190.706924GB/s`,
/// `12.5KB`) into the number and the unit. Utilisation levels (`Low (1)`, `Idle (0)`) are the
/// number in parentheses with the unit `level`.
pub fn split_inline_unit(text: &str) -> Option<(f64, String)> {
    let t = text.trim();
    if let (Some(open), true) = (t.rfind('('), t.ends_with(')')) {
        let level = parse_number(&t[open + 1..t.len() - 1])?;
        return Some((level, "level".to_owned()));
    }
    if let Some(v) = parse_number(t) {
        return Some((v, String::new()));
    }
    let end = t
        .char_indices()
        .rfind(|(_, c)| c.is_ascii_digit() || *c == '.')
        .map(|(i, c)| i + c.len_utf8())?;
    let value = parse_number(&t[..end])?;
    Some((value, t[end..].trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_integers_are_the_doubles_the_float_parser_gives() {
        for text in [
            "0",
            "7",
            "007",
            "188536",
            "999999999999999",
            "9007199254740991",
            "123456789012345",
            "1e5",
            "12.5",
            "-3",
            "+3",
            " 4",
            "",
            ".",
            ".5",
            "5.",
            "1.2.3",
            "0.1",
            "2.728162",
            "0.000146209",
            "99999999.9999999",
            "9.99999999999999",
            "1234567890.1234567",
        ] {
            assert_eq!(
                parse_number(text).map(f64::to_bits),
                text.trim().parse::<f64>().ok().map(f64::to_bits),
                "{text:?}"
            );
        }
        // Decimals of every length and point position (a fixed splitmix sequence): the fast
        // path's quotient is the double the float parser gives, bit for bit.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for _ in 0..200_000 {
            let digits = 1 + (next() % 16) as usize;
            let mut text: String = (0..digits)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            let point = (next() % (digits as u64 + 1)) as usize;
            text.insert(point, '.');
            assert_eq!(
                parse_number(&text).map(f64::to_bits),
                text.parse::<f64>().ok().map(f64::to_bits),
                "{text:?}"
            );
        }
    }

    #[test]
    fn numbers_with_thousands_separators() {
        assert_eq!(parse_number("4,963,609,951.19"), Some(4_963_609_951.19));
        assert_eq!(parse_number("546,553"), Some(546_553.0));
        assert_eq!(parse_number("-1,024"), Some(-1024.0));
        assert_eq!(parse_number("1.5e-3"), Some(0.0015));
        assert_eq!(parse_number("(256, 1, 1)"), None);
        assert_eq!(parse_number("1,2345"), None);
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("PolicySpread"), None);
    }

    #[test]
    fn units_normalise_with_the_tools_prefixes() {
        let n = |v, u, p| {
            let q = normalise(v, u, p);
            (q.value, q.unit)
        };
        assert_eq!(n(7744.0, "ns", Prefixes::Decimal), (7.744e-6, "s".into()));
        assert_eq!(n(12.5, "usecond", Prefixes::Decimal), (12.5e-6, "s".into()));
        assert_eq!(
            n(256.0, "KB", Prefixes::Binary),
            (262_144.0, "bytes".into())
        );
        assert_eq!(n(2.0, "Kbyte", Prefixes::Decimal), (2000.0, "bytes".into()));
        assert_eq!(n(8.620480, "GB/s", Prefixes::Binary).1, "bytes/s");
        assert!((n(8.620480, "GB/s", Prefixes::Binary).0 - 262_144.0 / 28_321e-9).abs() < 1e4);
        assert_eq!(n(89.33, "%", Prefixes::Decimal), (0.8933, "ratio".into()));
        assert_eq!(
            n(32.0, "thread/warp", Prefixes::Decimal),
            (1.0, "ratio".into())
        );
        assert_eq!(
            n(24.0, "thread/warp", Prefixes::Decimal),
            (0.75, "ratio".into())
        );
        assert_eq!(n(1.5, "Ghz", Prefixes::Binary), (1.5e9, "hz".into()));
        assert_eq!(
            n(3.0, "register/thread", Prefixes::Decimal),
            (3.0, "register/thread".into())
        );
    }

    #[test]
    fn inline_units_and_levels() {
        assert_eq!(split_inline_unit("100.000000%"), Some((100.0, "%".into())));
        assert_eq!(
            split_inline_unit("190.706924GB/s"),
            Some((190.706924, "GB/s".into()))
        );
        assert_eq!(split_inline_unit("Low (1)"), Some((1.0, "level".into())));
        assert_eq!(split_inline_unit("Idle (0)"), Some((0.0, "level".into())));
        assert_eq!(
            split_inline_unit("0.850643"),
            Some((0.850643, String::new()))
        );
        assert_eq!(split_inline_unit("n/a"), None);
    }

    /// Scaling by a power of ten happens in the decimal text, so the result is the double
    /// nearest the exact value: parse-then-divide is one ulp off for values like these.
    #[test]
    fn the_stack_path_parses_as_the_heap_path() {
        // Every shape of number text, with the exponents importers use, against the allocating
        // path it replaces; the long ones do not fit on the stack and take that path themselves.
        let long = format!("{}.5", "9".repeat(70));
        let texts = [
            "0",
            "1",
            "-1",
            "+7",
            " 12.5 ",
            "1,024",
            "-1,234,567.891",
            "4,963,609,951.19",
            "1.5e-3",
            "2.5E2",
            "1e308",
            "1e309",
            "-0",
            "0.000001",
            "1,2345",
            "12,34",
            ",123",
            "inf",
            "NaN",
            "",
            " ",
            "fast",
            "(16, 16, 1)",
            "1.028854",
            "343,840",
            &long,
            "123456789012345678901234567890123456789012345678901234567890.125",
        ];
        for text in texts {
            for exp10 in [0, -3, -6, -9, 2, 300, -400] {
                let heap = clean_number(text).and_then(|c| parse_scaled_on_heap(&c, exp10));
                assert_eq!(
                    parse_scaled(text, exp10).map(f64::to_bits),
                    heap.map(f64::to_bits),
                    "{text:?} x 1e{exp10}"
                );
            }
        }
    }

    #[test]
    fn scaled_values_are_correctly_rounded() {
        assert_eq!(parse_scaled("1.028854", -3), Some(0.001028854));
        assert_ne!(
            1.028854f64 / 1e3,
            0.001028854,
            "the two-step result this avoids"
        );
        assert_eq!(parse_scaled("1,028.854", -6), Some(0.001028854));
        assert_eq!(parse_scaled("2.5e2", -3), Some(0.25));
        assert_eq!(parse_scaled("inf", -3), None);
        assert_eq!(parse_scaled("fast", -3), None);
        let q = normalise_text("10.5", "ms", Prefixes::Binary).unwrap();
        assert_eq!((q.value, q.unit.as_str()), (0.0105, "s"));
        // Not a power of ten: multiplied as before (exact for 1024).
        assert_eq!(
            normalise_text("2", "KB", Prefixes::Binary).unwrap().value,
            2048.0
        );
    }
}
