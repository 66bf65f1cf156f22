//! How the viewer writes numbers, one set of rules for every view: times scaled to s, ms, µs or
//! ns with four significant digits; percentages with one decimal; counts with thousands
//! separators; other quantities with four significant digits; dates in ISO 8601, local time;
//! hashes shortened, the full value on hover and a click to copy it.

/// Significant digits of a time (`3.684 ms`, `741.9 s`): the papers print up to four (`3.775 s`).
const TIME_DIGITS: usize = 4;
/// Significant digits of a plain quantity (a coefficient, a ratio, an op rate).
const NUMBER_DIGITS: usize = 4;
/// How many hex digits of a hash are shown (as `git log --oneline` shows commits).
const HASH_CHARS: usize = 12;

/// `v` with `digits` significant digits (an integer part is never cut: `1,234,567`), trailing
/// zeros after the point dropped; plain notation
/// from 1e-3 to 1e9 (with thousands separators from 10,000), scientific outside.
pub fn significant(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "–".to_owned()
        } else if v > 0.0 {
            "∞".to_owned()
        } else {
            "−∞".to_owned()
        };
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let digits = digits.max(1);
    let magnitude = v.abs();
    if !(1e-3..1e9).contains(&magnitude) {
        let text = format!("{:.*e}", digits - 1, v);
        // `1.230e-5` → `1.23e-5`
        return match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => format!(
                "{}e{exponent}",
                mantissa.trim_end_matches('0').trim_end_matches('.')
            ),
            _ => text,
        };
    }
    let exponent = magnitude.log10().floor() as i32;
    let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
    // Rounding can carry into a new digit (9.996 → 10.00): the decimals come from the rounded value.
    let rounded: f64 = format!("{v:.decimals$}").parse().unwrap_or(v);
    let exponent = rounded.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
    let mut text = format!("{rounded:.decimals$}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    group_thousands(&text, 5)
}

/// `12345.6` → `12,345.6`: the integer part grouped when it has `min_digits` digits or more
/// (quantities from 5, so that `2024` reads as it is written; counts from 4).
fn group_thousands(text: &str, min_digits: usize) -> String {
    let (sign, rest) = text.strip_prefix('-').map_or(("", text), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    if int.len() < min_digits || !int.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_owned();
    }
    let mut grouped = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A plain quantity: four significant digits.
pub fn number(v: f64) -> String {
    significant(v, NUMBER_DIGITS)
}

/// A time in seconds, in the unit that suits it: `1.23 s`, `45.6 ms`, `789 µs`, `12 ns`.
pub fn secs(v: f64) -> String {
    // The unit is chosen after rounding, so 0.9999 s is `1 s`, not `1000 ms`.
    let m = format!("{:.*e}", TIME_DIGITS - 1, v.abs())
        .parse::<f64>()
        .unwrap_or(v.abs());
    if !v.is_finite() || m == 0.0 || m >= 1.0 {
        format!("{} s", significant(v, TIME_DIGITS))
    } else if m >= 1e-3 {
        format!("{} ms", significant(v * 1e3, TIME_DIGITS))
    } else if m >= 1e-6 {
        format!("{} µs", significant(v * 1e6, TIME_DIGITS))
    } else {
        format!("{} ns", significant(v * 1e9, TIME_DIGITS))
    }
}

/// A percentage (given in percent): one decimal, `22.0 %`.
pub fn percent(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1} %")
    } else {
        format!("{} %", significant(v, 1))
    }
}

/// A count: every digit, thousands separated, `378,576`.
pub fn count(n: u64) -> String {
    group_thousands(&n.to_string(), 4)
}

/// A value with the unit a table column or a figure names: times (`s`) and percentages (`%`)
/// by their rules, anything else as a number followed by its unit.
pub fn with_unit(v: f64, unit: &str) -> String {
    match unit {
        "s" | "secs" => secs(v),
        "%" => percent(v),
        "" => number(v),
        other => format!("{} {other}", number(v)),
    }
}

/// A difference in the unit of its figure, with its sign (`+1.2 %`, `−3.40 ms`).
pub fn signed_with_unit(v: f64, unit: &str) -> String {
    let text = with_unit(v.abs(), unit);
    if v > 0.0 {
        format!("+{text}")
    } else if v < 0.0 {
        format!("−{text}")
    } else {
        text
    }
}

/// `seconds since the epoch` → ISO 8601 in local time with its offset, to the second:
/// `2026-11-25T23:18:39+09:00` (`Z` for UTC).
pub fn date_time(unix_secs: u64, utc_offset_secs: i32) -> String {
    let offset = chrono::FixedOffset::east_opt(utc_offset_secs)
        .unwrap_or_else(|| chrono::FixedOffset::east_opt(0).expect("UTC is an offset"));
    match i64::try_from(unix_secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
    {
        Some(t) => t
            .with_timezone(&offset)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        None => format!("{unix_secs} s after 1970-01-01T00:00:00Z"),
    }
}

/// A hash as people read it: its first twelve characters and an ellipsis.
pub fn short_hash(hash: &str) -> String {
    match hash.char_indices().nth(HASH_CHARS) {
        Some((end, _)) => format!("{}…", &hash[..end]),
        None => hash.to_owned(),
    }
}

/// A shortened hash in monospace; hovering shows the whole, a click copies it.
pub fn hash_label(ui: &mut egui::Ui, hash: &str) -> egui::Response {
    let response = ui
        .add(
            egui::Label::new(egui::RichText::new(short_hash(hash)).monospace())
                .sense(egui::Sense::click()),
        )
        .on_hover_text(format!("{hash}\n(click to copy)"));
    if response.clicked() {
        ui.ctx().copy_text(hash.to_owned());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_the_unit_that_suits_them_with_four_digits() {
        assert_eq!(secs(3.6), "3.6 s");
        assert_eq!(secs(3.775), "3.775 s");
        assert_eq!(secs(123.01), "123 s");
        assert_eq!(secs(741.912), "741.9 s");
        assert_eq!(secs(12_345.6), "12,346 s");
        assert_eq!(secs(0.003_684_2), "3.684 ms");
        assert_eq!(secs(0.000_789_44), "789.4 µs");
        assert_eq!(secs(1.2e-8), "12 ns");
        assert_eq!(secs(0.0), "0 s");
        assert_eq!(secs(-0.5), "-500 ms");
        // Rounding that carries into the next digit keeps four digits and the right unit.
        assert_eq!(secs(9.999_6), "10 s");
        assert_eq!(secs(0.999_96), "1 s");
        assert_eq!(secs(0.000_999_96), "1 ms");
    }

    #[test]
    fn percentages_have_one_decimal_and_counts_separators() {
        assert_eq!(percent(22.0), "22.0 %");
        assert_eq!(percent(8.418_89), "8.4 %");
        assert_eq!(percent(-0.04), "-0.0 %");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(378_576), "378,576");
        assert_eq!(count(12_345_678), "12,345,678");
    }

    #[test]
    fn numbers_keep_four_significant_digits_and_switch_to_scientific_far_out() {
        assert_eq!(number(8.418_89), "8.419");
        assert_eq!(number(123.01), "123");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(2024.0), "2024");
        assert_eq!(number(1_234_567.0), "1,234,567");
        assert_eq!(number(1.234_5e-5), "1.234e-5");
        assert_eq!(number(3e12), "3e12");
        assert_eq!(number(f64::NAN), "–");
        assert_eq!(number(f64::INFINITY), "∞");
    }

    #[test]
    fn units_pick_the_rule_and_differences_carry_their_sign() {
        assert_eq!(with_unit(0.012_34, "s"), "12.34 ms");
        assert_eq!(with_unit(27.53, "%"), "27.5 %");
        assert_eq!(with_unit(1.5e9, "ops"), "1.5e9 ops");
        assert_eq!(with_unit(0.25, ""), "0.25");
        assert_eq!(signed_with_unit(-5.47, "%"), "−5.5 %");
        assert_eq!(signed_with_unit(0.002, "s"), "+2 ms");
        assert_eq!(signed_with_unit(0.0, "%"), "0.0 %");
    }

    #[test]
    fn dates_are_iso_8601_with_their_offset() {
        assert_eq!(date_time(0, 0), "1970-01-01T00:00:00Z");
        // `date -u -d @1795396358 +%FT%T` → 2026-11-23T01:12:38
        assert_eq!(date_time(1_795_396_358, 0), "2026-11-23T01:12:38Z");
        assert_eq!(
            date_time(1_795_396_358, 9 * 3600),
            "2026-11-23T10:12:38+09:00"
        );
        assert_eq!(
            date_time(1_795_396_358, -(3 * 3600 + 1800)),
            "2026-11-22T21:42:38-03:30"
        );
        // A leap day.
        assert_eq!(date_time(951_782_400, 0), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn hashes_are_shortened_to_twelve_characters() {
        let h = "0123456789abcdef0123456789abcdef";
        assert_eq!(short_hash(h), "0123456789ab…");
        assert_eq!(short_hash("abc"), "abc");
    }
}
