//! Naming of CSX600 operations, shared by the plugin that reads them and the models that use them.

/// The key of one CSX600 operation: unit, vector or not, operand type, operation, cast target.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpKey {
    pub exec_unit: String,
    pub vector: bool,
    pub dtype: String,
    pub op: String,
    pub dtype_to: Option<String>,
}

impl OpKey {
    /// A readable, unique label: `poly vector double mul`, `poly scalar int->double cast`.
    pub fn label(&self) -> String {
        let width = if self.vector { "vector" } else { "scalar" };
        match &self.dtype_to {
            Some(to) => format!(
                "{} {width} {}->{to} {}",
                self.exec_unit, self.dtype, self.op
            ),
            None => format!("{} {width} {} {}", self.exec_unit, self.dtype, self.op),
        }
    }
}

impl std::fmt::Display for OpKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_like_the_paper() {
        let cast = OpKey {
            exec_unit: "poly".into(),
            vector: false,
            dtype: "int".into(),
            op: "cast".into(),
            dtype_to: Some("double".into()),
        };
        assert_eq!(cast.label(), "poly scalar int->double cast");
        let mul = OpKey {
            vector: true,
            dtype: "double".into(),
            op: "mul".into(),
            dtype_to: None,
            ..cast
        };
        assert_eq!(mul.to_string(), "poly vector double mul");
    }
}
