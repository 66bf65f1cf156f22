//! The kernels an OpenCL C source declares and their parameters, read from the text before any
//! device is touched: a kernel file naming a kernel the source lacks, or giving it the wrong
//! number or kind of arguments, is refused before anything is built or launched. (The device's
//! own count, `CL_KERNEL_NUM_ARGS`, is checked again after the build: a macro can hide a
//! parameter from this reading.)

/// Where a parameter's pointer points, or that it is a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Global,
    Constant,
    Local,
    Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub text: String,
    pub kind: ParamKind,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    pub name: String,
    pub params: Vec<Param>,
}

/// The source with comments blanked out (offsets kept).
fn without_comments(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(' ');
                i += 1;
            }
        } else if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            out.push_str("  ");
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                out.push(if bytes[i] == b'\n' { '\n' } else { ' ' });
                i += 1;
            }
            if i < bytes.len() {
                out.push_str("  ");
                i += 2;
            }
        } else {
            let ch = source[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn kind(param: &str) -> ParamKind {
    let words: Vec<&str> = param
        .split(|c: char| !is_word(c))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |a: &str, b: &str| words.iter().any(|w| *w == a || *w == b);
    if !param.contains('*') && !param.contains('[') {
        ParamKind::Value
    } else if has("__local", "local") {
        ParamKind::Local
    } else if has("__constant", "constant") {
        ParamKind::Constant
    } else {
        ParamKind::Global
    }
}

/// Every `__kernel`/`kernel` function of `source`, in order.
pub fn kernels(source: &str) -> Vec<Signature> {
    let text = without_comments(source);
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(found) = text[search..].find("kernel").map(|i| search + i) {
        search = found + "kernel".len();
        let before = text[..found].chars().next_back();
        let after = text[search..].chars().next();
        let word_start = match before {
            Some('_') => text[..found].ends_with("__") && !text[..found - 2].ends_with(is_word),
            Some(c) => !is_word(c),
            None => true,
        };
        if !word_start || after.is_some_and(is_word) {
            continue;
        }
        // `kernel [__attribute__((...))] void name (` ... `)`
        let mut at = search;
        loop {
            let rest = &text[at..];
            let trimmed = rest.trim_start();
            if !trimmed.starts_with("__attribute__") {
                break;
            }
            let attribute = at + (rest.len() - trimmed.len());
            let Some(paren) = text[attribute..].find('(').map(|i| attribute + i) else {
                break;
            };
            let Some(close) = matching(&text, paren) else {
                break;
            };
            at = close;
        }
        let Some(open) = text[at..].find('(').map(|i| at + i) else {
            break;
        };
        let head_words: Vec<&str> = text[at..open]
            .split(|c: char| !is_word(c))
            .filter(|w| !w.is_empty())
            .collect();
        if head_words.first() != Some(&"void") || head_words.len() != 2 {
            continue;
        }
        let name = head_words[1].to_owned();
        let Some(close) = matching(&text, open) else {
            break;
        };
        let inside = &text[open + 1..close - 1];
        let mut params = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inside.char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    params.push(inside[start..i].trim().to_owned());
                    start = i + 1;
                }
                _ => {}
            }
        }
        let last = inside[start..].trim();
        if !last.is_empty() && last != "void" {
            params.push(last.to_owned());
        }
        out.push(Signature {
            name,
            params: params
                .into_iter()
                .map(|text| Param {
                    kind: kind(&text),
                    text: text.split_whitespace().collect::<Vec<_>>().join(" "),
                })
                .collect(),
        });
        search = close;
    }
    out
}

/// The offset just past the `)` matching the `(` at `open`.
fn matching(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_and_their_parameters() {
        let source = r"
// not a kernel: void helper(int a)
float helper(float a) { return a; }
/* __kernel void commented(int x) */
__kernel void saxpy(const float a, __global const float *x,
                    __global float *y, const int n)
{ y[0] = a; }
kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void tiled(global const float4 *in, __local float tile[256], __constant float *c, uint m) {}
__kernel void none(void) {}
";
        let found = kernels(source);
        let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["saxpy", "tiled", "none"]);
        let kinds = |i: usize| found[i].params.iter().map(|p| p.kind).collect::<Vec<_>>();
        use ParamKind::*;
        assert_eq!(kinds(0), [Value, Global, Global, Value]);
        assert_eq!(found[0].params[1].text, "__global const float *x");
        assert_eq!(kinds(1), [Global, Local, Constant, Value]);
        assert!(found[2].params.is_empty());
    }

    #[test]
    fn the_suites_kernels_are_all_found() {
        for k in crate::suite::SUITE {
            let (file, text) = k.source();
            let found = kernels(text);
            for v in k.variants() {
                let name = k.kernel_name(v);
                assert!(
                    found.iter().any(|s| s.name == name),
                    "{file}: {name} not found in {found:?}"
                );
            }
        }
    }
}
