//! The fast path for CSV as Nsight Compute writes it: every field quoted (a quote inside doubled),
//! or empty. Such a line is split by following its quotes, found eight bytes at a time; any
//! other line is left to a general CSV reader (the caller's fallback), so the fast path can only
//! be faster, never read a file differently.

use std::borrow::Cow;
use std::ops::Range;

/// Bit `i` of the first mask is set where byte `i` of `block` is a quote, of the second where
/// it is a line break.
fn masks(block: &[u8; 64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { masks_avx2(block) };
    }
    masks_swar(block)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn masks_avx2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };
    let ptr = block.as_ptr().cast::<__m256i>();
    // SAFETY: `block` is 64 bytes, two unaligned 32-byte loads.
    let (low, high) = unsafe { (_mm256_loadu_si256(ptr), _mm256_loadu_si256(ptr.add(1))) };
    let mask = |byte: u8| {
        let b = _mm256_set1_epi8(byte as i8);
        let low = u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, b)) as u32);
        let high = u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, b)) as u32);
        low | high << 32
    };
    (mask(b'"'), mask(b'\n'))
}

/// [`masks`] eight bytes at a time, where AVX2 is not available.
fn masks_swar(block: &[u8; 64]) -> (u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // Moves bit 8i of a word to bit 56 + i (no two products overlap: no carries).
    const GATHER: u64 =
        1 << 56 | 1 << 49 | 1 << 42 | 1 << 35 | 1 << 28 | 1 << 21 | 1 << 14 | 1 << 7;
    // Bit 7 of each byte set where the byte equals `byte`, exactly.
    let equal = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        !(((x & LOW7) + LOW7) | x | LOW7)
    };
    let (mut quotes, mut lines) = (0u64, 0u64);
    for (i, chunk) in block.chunks_exact(8).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        quotes |= ((equal(word, b'"') >> 7).wrapping_mul(GATHER) >> 56) << (8 * i);
        lines |= ((equal(word, b'\n') >> 7).wrapping_mul(GATHER) >> 56) << (8 * i);
    }
    (quotes, lines)
}

/// No position (for [`Quotes`]' `open` and `skip`).
const NONE: usize = usize::MAX;

/// Follows the quotes of one line.
struct Quotes<'t, 'f> {
    text: &'t [u8],
    /// Where the gap before the next opening quote starts: the line's start, or one past the
    /// last closing quote.
    gap_from: usize,
    first: bool,
    /// The opening quote of the field being read, or NONE.
    open: usize,
    /// The second quote of a doubled pair inside a field, or NONE.
    skip: usize,
    ok: bool,
    fields: &'f mut Vec<Range<usize>>,
}

impl Quotes<'_, '_> {
    #[inline(always)]
    fn quote(&mut self, at: usize) {
        if at == self.skip {
            return;
        }
        if self.open != NONE {
            // Inside a field a quote is doubled or closes the field.
            if self.text.get(at + 1) == Some(&b'"') {
                self.skip = at + 1;
                return;
            }
            self.fields.push(self.open + 1..at);
            self.gap_from = at + 1;
            self.open = NONE;
        } else {
            // The usual gap: the one comma after the field before.
            if !(at == self.gap_from + 1 && !self.first && self.text[self.gap_from] == b',') {
                self.empty_fields_before(at);
            }
            self.open = at;
        }
    }

    /// The bytes from the last field to `to` must be commas: one ends the field before, each
    /// other one is an empty field.
    fn empty_fields_before(&mut self, to: usize) {
        let gap = &self.text[self.gap_from..to];
        if !gap.iter().all(|&b| b == b',') || (!self.first && gap.is_empty()) {
            self.ok = false;
            return;
        }
        let empty = gap.len() - usize::from(!self.first);
        self.fields.extend(std::iter::repeat_n(to..to, empty));
        self.first = false;
    }

    fn quotes_in(&mut self, base: usize, mut mask: u64) {
        while mask != 0 && self.ok {
            self.quote(base + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
    }

    /// Whether the line, ending at `line_end`, was whole: every field closed, and only commas
    /// (trailing empty fields) after the last.
    fn finish(self, line_end: usize) -> bool {
        if !self.ok || self.open != NONE || self.first {
            return false;
        }
        let tail = &self.text[self.gap_from..line_end];
        if !tail.iter().all(|&b| b == b',') {
            return false;
        }
        self.fields
            .extend(std::iter::repeat_n(line_end..line_end, tail.len()));
        true
    }
}

/// Reads the line of `text` that starts at `start`: returns where it ends (the index of its
/// `\n`, or `text.len()`) and whether it is on the fast path — every field quoted or empty, at
/// least one quoted, no line break inside a field — in which case `fields` holds each field's
/// byte range in `text`, quotes excluded, doubled quotes inside left doubled ([`unescape`]). A
/// `\r` before the `\n` is not part of the line. `fields` is unspecified when the answer is
/// false.
pub fn split_line(text: &[u8], start: usize, fields: &mut Vec<Range<usize>>) -> (usize, bool) {
    fields.clear();
    let mut quotes = Quotes {
        text,
        gap_from: start,
        first: true,
        open: NONE,
        skip: NONE,
        ok: true,
        fields,
    };
    let mut base = start;
    let end = loop {
        let (quote_mask, newline_mask, len) = match text.get(base..base + 64) {
            Some(block) => {
                let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
                let (q, n) = masks(block);
                (q, n, 64)
            }
            None => {
                let mut block = [0u8; 64];
                let rest = &text[base.min(text.len())..];
                block[..rest.len()].copy_from_slice(rest);
                let (q, n) = masks(&block);
                let valid = (1u64 << rest.len()) - 1;
                (q & valid, n & valid, rest.len())
            }
        };
        if newline_mask != 0 {
            // Only the quotes below the first line break belong to this line.
            let below = (newline_mask & newline_mask.wrapping_neg()) - 1;
            quotes.quotes_in(base, quote_mask & below);
            break base + newline_mask.trailing_zeros() as usize;
        }
        quotes.quotes_in(base, quote_mask);
        if len < 64 {
            break text.len();
        }
        base += 64;
    };
    let line_end = if end > start && text[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    (end, quotes.finish(line_end))
}

/// A field of [`split_line`] unescaped: doubled quotes made single.
pub fn unescape(field: &[u8]) -> Cow<'_, [u8]> {
    if !field.contains(&b'"') {
        return Cow::Borrowed(field);
    }
    let mut out = Vec::with_capacity(field.len());
    let mut skip = false;
    for &b in field {
        if b == b'"' && std::mem::take(&mut skip) {
            continue;
        }
        skip = b == b'"';
        out.push(b);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields of the first line of `text`, unescaped, if it is on the fast path.
    fn split(text: &str) -> Option<Vec<String>> {
        let mut fields = Vec::new();
        let (_, ok) = split_line(text.as_bytes(), 0, &mut fields);
        ok.then(|| {
            fields
                .iter()
                .map(|f| String::from_utf8(unescape(&text.as_bytes()[f.clone()]).into()).unwrap())
                .collect()
        })
    }

    #[test]
    fn quoted_lines_split_at_their_commas() {
        let fast =
            |text: &str, expected: &[&str]| assert_eq!(split(text).unwrap(), expected, "{text:?}");
        fast(r#""a","","b c""#, &["a", "", "b c"]);
        fast("\"1,234\",\"x\"\r\n\"next\"", &["1,234", "x"]);
        fast("\"one\"\n", &["one"]);
        // Empty fields unquoted, as ncu writes a metric row's rule columns.
        fast(r#""a",,"b",,"#, &["a", "", "b", "", ""]);
        fast(r#",,"a""#, &["", "", "a"]);
        // Doubled quotes inside a field.
        fast(r#""say ""hi""","""","b""#, &["say \"hi\"", "\"", "b"]);
        fast(r#""a"",""b""#, &["a\",\"b"]);
        // Lines of every length around the eight-byte words, the line break in each place.
        for len in 0..40 {
            let field = "y".repeat(len);
            let text = format!("\"{field}\",\"{field}\"\n\"z\"");
            fast(&text, &[field.as_str(), field.as_str()]);
        }
    }

    #[test]
    fn where_the_line_ends() {
        let text = b"\"a\",\"b\"\r\n\"c\"";
        let mut fields = Vec::new();
        assert_eq!(split_line(text, 0, &mut fields), (8, true));
        assert_eq!(split_line(text, 9, &mut fields), (text.len(), true));
        assert_eq!(fields, vec![10..11]);
    }

    #[test]
    fn other_lines_are_left_to_a_csv_reader() {
        for line in [
            "",
            "\r",
            ",,",
            "a,b",
            r#""a",b"#,
            r#"a,"b""#,
            r#""a" ,"b""#,
            r#""a""b"#,
            "\"open,\n\"rest\"",
            "\"a\"\"\n\"",
            r#""a"x"#,
            r#""a"#,
        ] {
            assert_eq!(split(line), None, "{line:?}");
        }
    }

    #[test]
    fn the_fast_path_reads_as_a_csv_reader_does() {
        // Every line made of these pieces that the fast path takes, compared with the csv crate.
        let parts = ["\"", ",", "a", "\"\"", "\r"];
        let mut lines = vec![String::new()];
        let mut compared = 0;
        for _ in 0..6 {
            lines = lines
                .iter()
                .flat_map(|l| parts.iter().map(move |p| format!("{l}{p}")))
                .collect();
            for line in &lines {
                let Some(fast) = split(line) else { continue };
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .flexible(true)
                    .from_reader(line.as_bytes());
                let record = reader.records().next().unwrap().unwrap();
                let general: Vec<&str> = record.iter().collect();
                assert_eq!(fast, general, "{line:?}");
                compared += 1;
            }
        }
        assert!(compared > 500, "{compared}");
    }

    #[test]
    fn both_ways_of_finding_quotes_and_line_breaks_agree() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..2000 {
            let mut block = [0u8; 64];
            for b in &mut block {
                // xorshift; a third of the bytes quotes or line breaks, some with the high bit.
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = match state % 6 {
                    0 => b'"',
                    1 => b'\n',
                    2 => b'"' | 0x80,
                    _ => (state >> 8) as u8,
                };
            }
            let expected = |byte: u8| {
                (0..64)
                    .filter(|&i| block[i] == byte)
                    .map(|i| 1u64 << i)
                    .sum::<u64>()
            };
            let expected = (expected(b'"'), expected(b'\n'));
            assert_eq!(masks_swar(&block), expected, "{round}");
            assert_eq!(masks(&block), expected, "{round}");
        }
    }
}
