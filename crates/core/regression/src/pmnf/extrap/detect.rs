//! Which of Extra-P's formats a file holds, told by its bytes, not its name: Extra-P's own
//! command is told the format by a flag (`--text`, `--json`, `--talpas`, `--extra-p`, ...), so
//! users' files carry any name (`input_1.JSON`, `talpas_1.txt`, `experiment_3`). A Cube
//! profile alone is refused with what to give instead (the directory of the set, `cube`).

use super::Format;
use super::experiment::{InputError, error};

/// What every Extra-P 3 experiment holds near its start (after its byte-order mark and the
/// length of this text).
const EXTRAP3_MARK: &[u8] = b"EXTRAP_EXPERIMENT";

impl Format {
    /// The format of a file whose first bytes are `head` (the whole file, or at least its first
    /// line): a zip is an experiment Extra-P saved; `EXTRAP_EXPERIMENT` near the start an Extra-P
    /// 3 experiment (binary); text that opens with `{` is JSON (one
    /// document), JSON Lines (one measurement a line, its coordinate under `params`) or Talpas
    /// (one a line, under `parameters`, fields parted by `;`), told by its first line; any
    /// other text is the text format (whose reader names the line that is not).
    pub fn detect(head: &[u8]) -> Result<Format, InputError> {
        let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        if head.starts_with(b"PK\x03\x04") {
            return Ok(Format::Saved);
        }
        if head
            .get(..64.min(head.len()))
            .is_some_and(|start| start.windows(EXTRAP3_MARK.len()).any(|w| w == EXTRAP3_MARK))
        {
            return Ok(Format::Extrap3);
        }
        if head.get(257..262) == Some(b"ustar") {
            return Err(error(
                1,
                "a tar archive, as a Cube profile (`profile.cubex`) is: one run alone gives no \
                 model; give the directory of the set, one folder per run named by its \
                 parameters (`DIR/mm.p64n1000.r1/profile.cubex`), as Extra-P's `--cube` reads it",
            ));
        }
        let text = match std::str::from_utf8(head) {
            Ok(text) => text,
            // A head cut inside a character is still text.
            Err(e) if e.error_len().is_none() => {
                std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(e) => {
                let line = head[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                return Err(error(
                    line,
                    "not text (no UTF-8 here) and not an experiment Extra-P saved (a zip): \
                     yosoku reads Extra-P's text, JSON, JSON Lines and Talpas files and its \
                     saved experiments",
                ));
            }
        };
        if !text.trim_start().starts_with('{') {
            return Ok(Format::Text);
        }
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let keys_of = |line: &str| -> Option<serde_json::Map<String, serde_json::Value>> {
            match serde_json::from_str::<serde_json::Value>(line) {
                Ok(serde_json::Value::Object(map)) => Some(map),
                _ => None,
            }
        };
        Ok(match keys_of(first) {
            Some(map) if map.contains_key("measurements") || map.contains_key("callpaths") => {
                Format::Json
            }
            Some(map) if map.contains_key("parameters") && !map.contains_key("params") => {
                Format::Talpas
            }
            Some(_) => Format::JsonLines,
            None => match keys_of(&first.replace(';', ",")) {
                Some(map) if map.contains_key("parameters") => Format::Talpas,
                // A document over several lines (or a line that is no JSON at all, whose
                // error the JSON reader gives with its line).
                _ => Format::Json,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_s_format_is_told_by_what_it_holds() {
        let format = |text: &str| Format::detect(text.as_bytes()).unwrap();
        assert_eq!(format("PARAMETER p\nPOINTS 1 2\n"), Format::Text);
        assert_eq!(format("\n{\n  \"parameters\": [\"p\"],\n"), Format::Json);
        assert_eq!(
            format("{\"callpaths\": [], \"parameters\": []}\n"),
            Format::Json
        );
        assert_eq!(
            format("{\"params\": {\"p\": 1}, \"value\": 2}\n{\"params\""),
            Format::JsonLines
        );
        assert_eq!(
            format("{\"parameters\":{\"x\":20};\"metric\":\"time\";\"value\":82.0}\n"),
            Format::Talpas
        );
        assert_eq!(
            format("{\"parameters\":{\"x\":20},\"metric\":\"time\",\"value\":82.0}\n"),
            Format::Talpas
        );
        assert_eq!(format("PK\x03\x04rest of a zip"), Format::Saved);
        // Cut inside a character: still text.
        assert_eq!(
            Format::detect(&"REGION é".as_bytes()[..8]).unwrap(),
            Format::Text
        );
    }

    #[test]
    fn binary_formats_are_told_and_a_cube_profile_alone_refused_saying_what_to_give() {
        let mut extrap3 = vec![1, 0, 17, 0, 0, 0];
        extrap3.extend_from_slice(b"EXTRAP_EXPERIMENT\x03\x00\x00\x001.0");
        assert_eq!(Format::detect(&extrap3).unwrap(), Format::Extrap3);
        let mut tar = vec![0u8; 512];
        tar[..9].copy_from_slice(b"anchor.xm");
        tar[257..262].copy_from_slice(b"ustar");
        let e = Format::detect(&tar).unwrap_err().to_string();
        assert!(
            e.contains("Cube profile") && e.contains("give the directory of the set"),
            "{e}"
        );
        let e = Format::detect(b"PARAMETER p\n\xff\xfe")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 2: not text"), "{e}");
    }
}
