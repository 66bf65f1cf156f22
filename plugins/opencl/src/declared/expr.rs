//! The arithmetic of a kernel file: lengths, NDRanges, scalar arguments and work counters as
//! expressions of the sizes (`4 * n * n`, `min(256, n / w)`).
//!
//! Grammar, loosest first: `+ -`, then `* / %`, then unary `-`, then `^` (right-associative),
//! then numbers, names, `( ... )` and calls of `min max pow log2 sqrt ceil floor abs`. Values
//! are f64; errors carry the byte offset in the expression text, which the caller turns into a
//! file:line:column.

/// An error at byte `at` of the expression.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    pub at: usize,
    pub message: String,
}

fn error(at: usize, message: impl Into<String>) -> ExprError {
    ExprError {
        at,
        message: message.into(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Number(f64),
    Name(String),
    Neg(Box<Expr>),
    Binary(char, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

/// A parsed expression; every node keeps where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    at: usize,
    node: Node,
}

const FUNCTIONS: &[(&str, usize)] = &[
    ("min", 2),
    ("max", 2),
    ("pow", 2),
    ("log2", 1),
    ("sqrt", 1),
    ("ceil", 1),
    ("floor", 1),
    ("abs", 1),
];

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Op(char),
}

fn tokens(text: &str) -> Result<Vec<(usize, Token)>, ExprError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_digit() || bytes[i] == b'.' || bytes[i] == b'_')
            {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                let mut j = i + 1;
                if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal = text[start..i].replace('_', "");
            let value = literal
                .parse::<f64>()
                .map_err(|_| error(start, format!("`{}` is not a number", &text[start..i])))?;
            out.push((start, Token::Number(value)));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((start, Token::Name(text[start..i].to_owned())));
        } else if "+-*/%^(),".contains(c) {
            out.push((i, Token::Op(c)));
            i += 1;
        } else {
            let ch = text[i..].chars().next().unwrap_or(c);
            return Err(error(
                i,
                format!(
                    "unexpected `{ch}` (expressions use numbers, names, + - * / % ^, parentheses and min max pow log2 sqrt ceil floor abs)"
                ),
            ));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    pos: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|(_, t)| t)
    }

    fn here(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.end, |(at, _)| *at)
    }

    fn eat(&mut self, op: char) -> bool {
        if self.peek() == Some(&Token::Op(op)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.product()?;
        loop {
            let at = self.here();
            let op = match self.peek() {
                Some(Token::Op(c @ ('+' | '-'))) => *c,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.product()?;
            left = Expr {
                at,
                node: Node::Binary(op, Box::new(left), Box::new(right)),
            };
        }
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.unary()?;
        loop {
            let at = self.here();
            let op = match self.peek() {
                Some(Token::Op(c @ ('*' | '/' | '%'))) => *c,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary()?;
            left = Expr {
                at,
                node: Node::Binary(op, Box::new(left), Box::new(right)),
            };
        }
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        let at = self.here();
        if self.eat('-') {
            let inner = self.unary()?;
            return Ok(Expr {
                at,
                node: Node::Neg(Box::new(inner)),
            });
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, ExprError> {
        let base = self.atom()?;
        let at = self.here();
        if self.eat('^') {
            let exponent = self.unary()?;
            return Ok(Expr {
                at,
                node: Node::Binary('^', Box::new(base), Box::new(exponent)),
            });
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        let at = self.here();
        match self.tokens.get(self.pos).map(|(_, t)| t.clone()) {
            None => Err(error(at, "the expression ends where a value is expected")),
            Some(Token::Number(v)) => {
                self.pos += 1;
                Ok(Expr {
                    at,
                    node: Node::Number(v),
                })
            }
            Some(Token::Name(name)) => {
                self.pos += 1;
                if !self.eat('(') {
                    return Ok(Expr {
                        at,
                        node: Node::Name(name),
                    });
                }
                let Some((_, arity)) = FUNCTIONS.iter().find(|(f, _)| *f == name) else {
                    let known: Vec<&str> = FUNCTIONS.iter().map(|(f, _)| *f).collect();
                    return Err(error(
                        at,
                        format!("no function `{name}` (there are {})", known.join(", ")),
                    ));
                };
                let mut args = Vec::new();
                if !self.eat(')') {
                    loop {
                        args.push(self.sum()?);
                        if self.eat(')') {
                            break;
                        }
                        if !self.eat(',') {
                            return Err(error(self.here(), "expected `,` or `)`"));
                        }
                    }
                }
                if args.len() != *arity {
                    return Err(error(
                        at,
                        format!("`{name}` takes {arity} argument(s), not {}", args.len()),
                    ));
                }
                Ok(Expr {
                    at,
                    node: Node::Call(name, args),
                })
            }
            Some(Token::Op('(')) => {
                self.pos += 1;
                let inner = self.sum()?;
                if !self.eat(')') {
                    return Err(error(self.here(), "expected `)`"));
                }
                Ok(inner)
            }
            Some(Token::Op(c)) => Err(error(at, format!("expected a value, found `{c}`"))),
        }
    }
}

/// The most tokens (numbers, names, operators, parentheses) of one expression. A kernel file's
/// formulas have a few dozen; the bound keeps the parser's recursion and the tree's depth (every
/// token adds at most one level) far from the stack's end.
pub const MAX_TOKENS: usize = 1_000;

impl Expr {
    pub fn parse(text: &str) -> Result<Self, ExprError> {
        let tokens = tokens(text)?;
        if let Some((at, _)) = tokens.get(MAX_TOKENS) {
            return Err(error(
                *at,
                format!(
                    "more than {MAX_TOKENS} numbers, names and operators in one expression: a formula here has a few dozen"
                ),
            ));
        }
        let mut p = Parser {
            tokens,
            pos: 0,
            end: text.len(),
        };
        let e = p.sum()?;
        if let Some((at, t)) = p.tokens.get(p.pos) {
            let shown = match t {
                Token::Number(v) => v.to_string(),
                Token::Name(n) => n.clone(),
                Token::Op(c) => c.to_string(),
            };
            return Err(error(
                *at,
                format!("unexpected `{shown}` after a complete expression"),
            ));
        }
        Ok(e)
    }

    /// A number as an expression (a TOML integer or float where an expression may stand).
    pub fn number(value: f64) -> Self {
        Self {
            at: 0,
            node: Node::Number(value),
        }
    }

    /// The names the expression reads, with where each is.
    pub fn names(&self) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<(usize, &'a str)>) {
        match &self.node {
            Node::Number(_) => {}
            Node::Name(n) => out.push((self.at, n)),
            Node::Neg(e) => e.collect_names(out),
            Node::Binary(_, a, b) => {
                a.collect_names(out);
                b.collect_names(out);
            }
            Node::Call(_, args) => args.iter().for_each(|a| a.collect_names(out)),
        }
    }

    /// The value with the names bound by `value_of`.
    pub fn eval(&self, value_of: &dyn Fn(&str) -> Option<f64>) -> Result<f64, ExprError> {
        let v = match &self.node {
            Node::Number(v) => *v,
            Node::Name(n) => {
                value_of(n).ok_or_else(|| error(self.at, format!("no size or value `{n}`")))?
            }
            Node::Neg(e) => -e.eval(value_of)?,
            Node::Binary(op, a, b) => {
                let (x, y) = (a.eval(value_of)?, b.eval(value_of)?);
                match op {
                    '+' => x + y,
                    '-' => x - y,
                    '*' => x * y,
                    '/' | '%' if y == 0.0 => {
                        return Err(error(self.at, format!("division by zero ({x} {op} 0)")));
                    }
                    '/' => x / y,
                    '%' => x % y,
                    _ => x.powf(y),
                }
            }
            Node::Call(f, args) => {
                let values = args
                    .iter()
                    .map(|a| a.eval(value_of))
                    .collect::<Result<Vec<f64>, _>>()?;
                let x = values[0];
                match f.as_str() {
                    "min" => x.min(values[1]),
                    "max" => x.max(values[1]),
                    "pow" => x.powf(values[1]),
                    "log2" | "sqrt" if x < 0.0 || (f == "log2" && x == 0.0) => {
                        return Err(error(self.at, format!("{f}({x}) is undefined")));
                    }
                    "log2" => x.log2(),
                    "sqrt" => x.sqrt(),
                    "ceil" => x.ceil(),
                    "floor" => x.floor(),
                    _ => x.abs(),
                }
            }
        };
        if !v.is_finite() {
            return Err(error(self.at, format!("the value is not finite ({v})")));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> Result<f64, ExprError> {
        Expr::parse(text)?.eval(&|n| match n {
            "n" => Some(1024.0),
            "w" => Some(4.0),
            "zero" => Some(0.0),
            _ => None,
        })
    }

    #[test]
    fn precedence_calls_and_names() {
        assert_eq!(eval("4 * n * n").unwrap(), 4.0 * 1024.0 * 1024.0);
        assert_eq!(eval("1 + 2 * 3").unwrap(), 7.0);
        assert_eq!(eval("(1 + 2) * 3").unwrap(), 9.0);
        assert_eq!(eval("2 ^ 3 ^ 2").unwrap(), 512.0, "right-associative");
        assert_eq!(eval("-2 ^ 2").unwrap(), -4.0);
        assert_eq!(eval("min(256, n / w)").unwrap(), 256.0);
        assert_eq!(eval("max(1, n % 1000)").unwrap(), 24.0);
        assert_eq!(
            eval("log2(n) + sqrt(16) + ceil(0.5) + floor(1.5) + abs(-1)").unwrap(),
            17.0
        );
        assert_eq!(eval("1e3 + 1_000 + .5").unwrap(), 2000.5);
        assert_eq!(eval("pow(2, 10)").unwrap(), 1024.0);
    }

    #[test]
    fn errors_say_where() {
        let e = eval("n / zero").unwrap_err();
        assert_eq!(
            (e.at, e.message.as_str()),
            (2, "division by zero (1024 / 0)")
        );
        let e = eval("n % (w - 4)").unwrap_err();
        assert_eq!(e.at, 2);
        let e = eval("4 * m").unwrap_err();
        assert_eq!((e.at, e.message.as_str()), (4, "no size or value `m`"));
        let e = Expr::parse("4 * (n").unwrap_err();
        assert_eq!((e.at, e.message.as_str()), (6, "expected `)`"));
        let e = Expr::parse("4 n").unwrap_err();
        assert_eq!(e.at, 2);
        let e = Expr::parse("4 $ n").unwrap_err();
        assert_eq!(e.at, 2);
        let e = Expr::parse("cube(n)").unwrap_err();
        assert!(e.message.starts_with("no function `cube`"), "{e:?}");
        let e = Expr::parse("min(n)").unwrap_err();
        assert_eq!(e.message, "`min` takes 2 argument(s), not 1");
        let e = Expr::parse("").unwrap_err();
        assert_eq!(e.at, 0);
        let e = eval("log2(zero)").unwrap_err();
        assert_eq!(e.message, "log2(0) is undefined");
        assert_eq!(
            Expr::parse("n * w + q").unwrap().names(),
            vec![(0, "n"), (4, "w"), (8, "q")]
        );
    }

    /// An expression nested or chained past any formula's needs is refused where it passes the
    /// bound, not parsed until the stack overflows (100,000 parentheses did, aborting the run).
    #[test]
    fn an_expression_of_more_than_max_tokens_is_refused_at_the_first_beyond() {
        let deep = format!("{}n{}", "(".repeat(100_000), ")".repeat(100_000));
        let e = Expr::parse(&deep).unwrap_err();
        assert_eq!(e.at, MAX_TOKENS);
        assert!(e.message.starts_with("more than 1000 numbers"), "{e:?}");
        let chain = vec!["1"; 60_000].join("+");
        assert_eq!(Expr::parse(&chain).unwrap_err().at, MAX_TOKENS);
        assert_eq!(
            Expr::parse(&"-".repeat(200_000)).unwrap_err().at,
            MAX_TOKENS
        );
        // At the bound, the deepest nesting it allows parses and evaluates.
        let half = (MAX_TOKENS - 1) / 2;
        let nested = format!("{}n{}", "(".repeat(half), ")".repeat(half));
        assert_eq!(eval(&nested).unwrap(), 1024.0);
        let chain = vec!["w"; MAX_TOKENS.div_ceil(2)].join("+");
        assert_eq!(eval(&chain).unwrap(), 4.0 * MAX_TOKENS.div_ceil(2) as f64);
    }
}
