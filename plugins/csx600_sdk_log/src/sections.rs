//! The sections of a `csx600-sdk-log`, read into canonical tables. Every value is checked, and
//! every error names the file, line, column and what was expected.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_sdk::PluginError;
use yosoku_tables::csx600::OpKey;
use yosoku_tables::{
    BANDWIDTH_CURVES, COUNT_BASES, CSX600_OP_COUNTS, CSX600_OP_THROUGHPUTS, CSX600_TRANSFER_COUNTS,
    DTYPES, EXEC_UNITS, OPS, PHASES, PROVENANCES, REFERENCE_VALUES, RUNS, TRANSFER_PATHS,
};

use crate::log::{Field, Log, Row, Section};

/// Written for "no value" in optional columns.
const NONE: &str = "-";

/// Typed access to the rows of one section, by column name.
struct Reader<'a> {
    log: &'a Log,
    section: &'a Section,
    index: BTreeMap<&'a str, usize>,
}

#[derive(Clone, Copy)]
enum Sign {
    Positive,
    NonNegative,
}

impl<'a> Reader<'a> {
    fn new(
        log: &'a Log,
        section: &'a Section,
        required: &[&str],
        optional: &[&str],
    ) -> Result<Self, PluginError> {
        let mut index = BTreeMap::new();
        for (i, column) in section.columns.iter().enumerate() {
            let name = column.text.as_str();
            if !required.contains(&name) && !optional.contains(&name) {
                let mut known: Vec<&str> = required.to_vec();
                known.extend(optional);
                return Err(PluginError::at(
                    &log.path,
                    section.header_line,
                    column.column,
                    format!(
                        "unknown column `{name}` in [{}]; expected columns: {}",
                        section.name,
                        known.join(", ")
                    ),
                ));
            }
            if index.insert(name, i).is_some() {
                return Err(PluginError::at(
                    &log.path,
                    section.header_line,
                    column.column,
                    format!(
                        "column `{name}` appears twice in the header of [{}]",
                        section.name
                    ),
                ));
            }
        }
        let missing: Vec<&str> = required
            .iter()
            .copied()
            .filter(|r| !index.contains_key(r))
            .collect();
        if !missing.is_empty() {
            return Err(PluginError::at_line(
                &log.path,
                section.header_line,
                format!(
                    "[{}] lacks column(s) {}; it needs: {}",
                    section.name,
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    required.join(", ")
                ),
            ));
        }
        Ok(Self {
            log,
            section,
            index,
        })
    }

    fn rows(&self) -> &'a [Row] {
        &self.section.rows
    }

    fn error(&self, row: &Row, field: &Field, message: impl std::fmt::Display) -> PluginError {
        PluginError::at(&self.log.path, row.line, field.column, message)
    }

    /// The field of `name`, or `None` when the column is absent or the field is `-`.
    fn optional<'r>(&self, row: &'r Row, name: &str) -> Option<&'r Field> {
        self.index
            .get(name)
            .map(|&i| &row.fields[i])
            .filter(|f| f.text != NONE)
    }

    fn required<'r>(&self, row: &'r Row, name: &str) -> Result<&'r Field, PluginError> {
        let field = &row.fields[self.index[name]];
        if field.text == NONE {
            return Err(self.error(
                row,
                field,
                format!("column `{name}`: expected a value, found `-`"),
            ));
        }
        Ok(field)
    }

    fn text(&self, row: &Row, name: &str) -> Result<String, PluginError> {
        Ok(self.required(row, name)?.text.clone())
    }

    fn one_of(
        &self,
        row: &Row,
        field: &Field,
        name: &str,
        allowed: &[&str],
    ) -> Result<String, PluginError> {
        if allowed.contains(&field.text.as_str()) {
            Ok(field.text.clone())
        } else {
            Err(self.error(
                row,
                field,
                format!(
                    "column `{name}`: expected one of {}, found `{}`",
                    allowed.join(", "),
                    field.text
                ),
            ))
        }
    }

    fn choice(&self, row: &Row, name: &str, allowed: &[&str]) -> Result<String, PluginError> {
        let field = self.required(row, name)?;
        self.one_of(row, field, name, allowed)
    }

    fn yes_no(&self, row: &Row, name: &str) -> Result<bool, PluginError> {
        Ok(self.choice(row, name, &["yes", "no"])? == "yes")
    }

    fn float_field(
        &self,
        row: &Row,
        field: &Field,
        name: &str,
        sign: Option<Sign>,
    ) -> Result<f64, PluginError> {
        let value: f64 = field.text.parse().map_err(|_| {
            self.error(
                row,
                field,
                format!("column `{name}`: expected a number, found `{}`", field.text),
            )
        })?;
        let ok = value.is_finite()
            && match sign {
                Some(Sign::Positive) => value > 0.0,
                Some(Sign::NonNegative) => value >= 0.0,
                None => true,
            };
        if !ok {
            let expected = match sign {
                Some(Sign::Positive) => "a finite number > 0",
                Some(Sign::NonNegative) => "a finite number >= 0",
                None => "a finite number",
            };
            return Err(self.error(
                row,
                field,
                format!("column `{name}`: expected {expected}, found {}", field.text),
            ));
        }
        Ok(value)
    }

    fn float(&self, row: &Row, name: &str, sign: Option<Sign>) -> Result<f64, PluginError> {
        let field = self.required(row, name)?;
        self.float_field(row, field, name, sign)
    }

    /// A number in a decimal multiple of the unit (`gops`: x 10^9), converted exactly: `8.351`
    /// becomes the float nearest 8.351e9, not 8.351 x 1e9 with its extra rounding.
    fn scaled_float(
        &self,
        row: &Row,
        name: &str,
        exponent: i32,
        sign: Option<Sign>,
    ) -> Result<f64, PluginError> {
        let value = self.float(row, name, sign)?;
        let text = &self.required(row, name)?.text;
        if text.contains(['e', 'E']) {
            return Ok(value * 10f64.powi(exponent));
        }
        Ok(format!("{text}e{exponent}")
            .parse()
            .unwrap_or(value * 10f64.powi(exponent)))
    }

    fn integer_field(
        &self,
        row: &Row,
        field: &Field,
        name: &str,
        sign: Sign,
    ) -> Result<i64, PluginError> {
        let value: i64 = field.text.parse().map_err(|_| {
            self.error(
                row,
                field,
                format!(
                    "column `{name}`: expected an integer, found `{}`",
                    field.text
                ),
            )
        })?;
        let (ok, expected) = match sign {
            Sign::Positive => (value > 0, "an integer > 0"),
            Sign::NonNegative => (value >= 0, "an integer >= 0"),
        };
        if !ok {
            return Err(self.error(
                row,
                field,
                format!("column `{name}`: expected {expected}, found {value}"),
            ));
        }
        Ok(value)
    }

    fn integer(&self, row: &Row, name: &str, sign: Sign) -> Result<i64, PluginError> {
        let field = self.required(row, name)?;
        self.integer_field(row, field, name, sign)
    }

    fn optional_integer(
        &self,
        row: &Row,
        name: &str,
        sign: Sign,
    ) -> Result<Option<i64>, PluginError> {
        self.optional(row, name)
            .map(|field| self.integer_field(row, field, name, sign))
            .transpose()
    }

    /// Reads the operation key columns and checks they describe an operation the CSX600 has.
    fn op_key(&self, row: &Row) -> Result<OpKey, PluginError> {
        let key = OpKey {
            exec_unit: self.choice(row, "exec_unit", EXEC_UNITS)?,
            vector: self.yes_no(row, "vector")?,
            dtype: self.choice(row, "dtype", DTYPES)?,
            op: self.choice(row, "op", OPS)?,
            dtype_to: self
                .optional(row, "dtype_to")
                .map(|f| self.one_of(row, f, "dtype_to", DTYPES))
                .transpose()?,
        };
        let field = |name: &str| &row.fields[self.index[name]];
        if key.op == "cast" && key.dtype_to.is_none() {
            return Err(self.error(
                row,
                field("op"),
                "a cast needs its target type in column `dtype_to`",
            ));
        }
        if key.op != "cast" && key.dtype_to.is_some() {
            let f = self.optional(row, "dtype_to").unwrap_or(field("op"));
            return Err(self.error(
                row,
                f,
                format!(
                    "column `dtype_to`: only casts have a target type; expected `-` for `{}`",
                    key.op
                ),
            ));
        }
        if key.exec_unit == "mono" && key.vector {
            return Err(self.error(
                row,
                field("vector"),
                "the mono unit has no vector unit: expected `no`",
            ));
        }
        if key.vector && key.dtype == "int" {
            return Err(self.error(
                row,
                field("dtype"),
                "the vector unit is floating point: expected float or double",
            ));
        }
        Ok(key)
    }

    /// Fails when `key` was already seen on an earlier row.
    fn unique<K: Ord + std::fmt::Display>(
        &self,
        seen: &mut BTreeMap<K, usize>,
        key: K,
        row: &Row,
    ) -> Result<(), PluginError> {
        if let Some(first) = seen.get(&key) {
            return Err(PluginError::at_line(
                &self.log.path,
                row.line,
                format!(
                    "duplicate row in [{}]: {key} is already given on line {first}",
                    self.section.name
                ),
            ));
        }
        seen.insert(key, row.line);
        Ok(())
    }
}

fn utf8(values: Vec<String>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn utf8_opt(values: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn repeat(value: &str, n: usize) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(std::iter::repeat_n(value, n)))
}

/// The five columns that name an operation (`exec_unit` to `dtype_to`), in table order.
fn op_key_columns(keys: &[OpKey]) -> [ArrayRef; 5] {
    [
        utf8(keys.iter().map(|k| k.exec_unit.clone()).collect()),
        Arc::new(BooleanArray::from(
            keys.iter().map(|k| k.vector).collect::<Vec<_>>(),
        )),
        utf8(keys.iter().map(|k| k.dtype.clone()).collect()),
        utf8(keys.iter().map(|k| k.op.clone()).collect()),
        utf8_opt(keys.iter().map(|k| k.dtype_to.clone()).collect()),
    ]
}

/// `[op_throughput]`: operation throughputs (Tables 1 and 2).
pub fn op_throughputs(
    log: &Log,
    section: &Section,
    device: &str,
) -> Result<RecordBatch, PluginError> {
    let r = Reader::new(
        log,
        section,
        &["exec_unit", "vector", "dtype", "op", "gops"],
        &["dtype_to", "executions"],
    )?;
    let mut keys = Vec::new();
    let mut rates = Vec::new();
    let mut executions = Vec::new();
    let mut seen = BTreeMap::new();
    for row in r.rows() {
        let key = r.op_key(row)?;
        r.unique(&mut seen, key.clone(), row)?;
        rates.push(r.scaled_float(row, "gops", 9, Some(Sign::Positive))?);
        executions.push(r.optional_integer(row, "executions", Sign::Positive)?);
        keys.push(key);
    }
    let mut columns = vec![repeat(device, keys.len())];
    columns.extend(op_key_columns(&keys));
    columns.push(Arc::new(Float64Array::from(rates)));
    columns.push(Arc::new(Int64Array::from(executions)));
    Ok(CSX600_OP_THROUGHPUTS.batch(columns)?)
}

/// `[bandwidth]`: points of bandwidth curves (Figures 2-4).
pub fn bandwidth_curves(
    log: &Log,
    section: &Section,
    device: &str,
    provenance: Option<&str>,
) -> Result<RecordBatch, PluginError> {
    let r = Reader::new(
        log,
        section,
        &["path", "size_bytes", "mbytes_per_sec"],
        &["transfers", "provenance"],
    )?;
    let (mut paths, mut sizes, mut rates, mut samples, mut provenances) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut seen = BTreeMap::new();
    for row in r.rows() {
        let path = r.choice(row, "path", TRANSFER_PATHS)?;
        let size = r.integer(row, "size_bytes", Sign::Positive)?;
        r.unique(&mut seen, format!("{path} at {size} bytes"), row)?;
        rates.push(r.scaled_float(row, "mbytes_per_sec", 6, Some(Sign::Positive))?);
        samples.push(r.optional_integer(row, "transfers", Sign::Positive)?);
        let row_provenance = match r.optional(row, "provenance") {
            Some(f) => r.one_of(row, f, "provenance", PROVENANCES)?,
            None => provenance.map(str::to_owned).ok_or_else(|| {
                PluginError::at_line(
                    &log.path,
                    row.line,
                    "no provenance: give `@provenance measured` or `@provenance illustrative`, or a `provenance` column",
                )
            })?,
        };
        provenances.push(row_provenance);
        paths.push(path);
        sizes.push(size);
    }
    Ok(BANDWIDTH_CURVES.batch(vec![
        repeat(device, paths.len()),
        utf8(paths),
        Arc::new(Int64Array::from(sizes)),
        Arc::new(Float64Array::from(rates)),
        Arc::new(Int64Array::from(samples)),
        utf8(provenances),
    ])?)
}

/// `[op_count]`: how often the program executes each operation (Table 3).
pub fn op_counts(log: &Log, section: &Section, program: &str) -> Result<RecordBatch, PluginError> {
    let r = Reader::new(
        log,
        section,
        &[
            "variant",
            "exec_unit",
            "vector",
            "dtype",
            "op",
            "count",
            "basis",
        ],
        &["dtype_to"],
    )?;
    let (mut variants, mut keys, mut counts, mut bases) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut seen = BTreeMap::new();
    for row in r.rows() {
        let variant = r.text(row, "variant")?;
        let key = r.op_key(row)?;
        r.unique(&mut seen, format!("variant {variant}: {key}"), row)?;
        counts.push(r.float(row, "count", Some(Sign::NonNegative))?);
        bases.push(r.choice(row, "basis", COUNT_BASES)?);
        variants.push(variant);
        keys.push(key);
    }
    let mut columns = vec![repeat(program, keys.len()), utf8(variants)];
    columns.extend(op_key_columns(&keys));
    columns.push(Arc::new(Float64Array::from(counts)));
    columns.push(utf8(bases));
    Ok(CSX600_OP_COUNTS.batch(columns)?)
}

/// `[transfer]`: transfers per execution of the profiled unit (Table 5).
pub fn transfer_counts(
    log: &Log,
    section: &Section,
    program: &str,
) -> Result<RecordBatch, PluginError> {
    let r = Reader::new(
        log,
        section,
        &["variant", "path", "count", "size_bytes"],
        &[],
    )?;
    let (mut variants, mut paths, mut counts, mut sizes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut seen = BTreeMap::new();
    for row in r.rows() {
        let variant = r.text(row, "variant")?;
        let path = r.choice(row, "path", TRANSFER_PATHS)?;
        let size = r.integer(row, "size_bytes", Sign::Positive)?;
        r.unique(
            &mut seen,
            format!("variant {variant}: {path} of {size} bytes"),
            row,
        )?;
        counts.push(r.integer(row, "count", Sign::NonNegative)?);
        variants.push(variant);
        paths.push(path);
        sizes.push(size);
    }
    Ok(CSX600_TRANSFER_COUNTS.batch(vec![
        repeat(program, variants.len()),
        utf8(variants),
        utf8(paths),
        Arc::new(Int64Array::from(counts)),
        Arc::new(Int64Array::from(sizes)),
    ])?)
}

/// `[measured]`: measured run times.
pub fn measured_runs(
    log: &Log,
    section: &Section,
    program: &str,
    device: &str,
) -> Result<RecordBatch, PluginError> {
    let r = Reader::new(
        log,
        section,
        &["variant", "phase", "repetitions", "seconds"],
        &["parameters"],
    )?;
    let (mut ids, mut variants, mut parameters, mut phases, mut repetitions, mut seconds) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let mut seen = BTreeMap::new();
    for row in r.rows() {
        let variant = r.text(row, "variant")?;
        let phase = r.choice(row, "phase", PHASES)?;
        r.unique(&mut seen, format!("variant {variant}, phase {phase}"), row)?;
        ids.push(format!("{program}/{variant}/{phase}"));
        repetitions.push(r.integer(row, "repetitions", Sign::Positive)?);
        seconds.push(r.float(row, "seconds", Some(Sign::Positive))?);
        parameters.push(r.optional(row, "parameters").map(|f| f.text.clone()));
        variants.push(variant);
        phases.push(phase);
    }
    Ok(RUNS.batch(vec![
        utf8(ids),
        repeat(device, variants.len()),
        repeat(program, variants.len()),
        utf8(variants),
        utf8_opt(parameters),
        utf8(phases),
        Arc::new(Int64Array::from(repetitions)),
        Arc::new(Float64Array::from(seconds)),
    ])?)
}

/// `[reference]`: figures printed in a publication, each naming the canonical table and column it
/// compares with.
pub fn reference_values(
    log: &Log,
    section: &Section,
    program: &str,
    source: Option<&str>,
) -> Result<RecordBatch, PluginError> {
    let r = Reader::new(
        log,
        section,
        &["variant", "table", "column", "label", "value", "unit"],
        &["source"],
    )?;
    let mut out: [Vec<String>; 6] = Default::default();
    let mut values = Vec::new();
    let mut seen = BTreeMap::new();
    for row in r.rows() {
        let variant = r.text(row, "variant")?;
        let table_field = r.required(row, "table")?;
        let Some(table) = yosoku_tables::table(&table_field.text) else {
            let names: Vec<&str> = yosoku_tables::TABLES.iter().map(|t| t.name).collect();
            return Err(r.error(
                row,
                table_field,
                format!(
                    "column `table`: expected a canonical table ({}), found `{}`",
                    names.join(", "),
                    table_field.text
                ),
            ));
        };
        let column_field = r.required(row, "column")?;
        let Some(column) = table.column(&column_field.text) else {
            let names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
            return Err(r.error(
                row,
                column_field,
                format!(
                    "column `column`: table `{}` has no column `{}`; it has: {}",
                    table.name,
                    column_field.text,
                    names.join(", ")
                ),
            ));
        };
        let unit_field = r.required(row, "unit")?;
        if let Some(unit) = column.unit
            && unit != unit_field.text
        {
            return Err(r.error(
                row,
                unit_field,
                format!(
                    "column `unit`: `{}.{}` is in {unit}, found `{}`",
                    table.name, column.name, unit_field.text
                ),
            ));
        }
        let label = r.text(row, "label")?;
        r.unique(
            &mut seen,
            format!(
                "variant {variant}: {}.{} of `{label}`",
                table.name, column.name
            ),
            row,
        )?;
        values.push(r.float(row, "value", None)?);
        let row_source = r.optional(row, "source").map(|f| f.text.as_str());
        let full_source = match (source, row_source) {
            (Some(a), Some(b)) => format!("{a}, {b}"),
            (Some(a), None) => a.to_owned(),
            (None, Some(b)) => b.to_owned(),
            (None, None) => {
                return Err(PluginError::at_line(
                    &log.path,
                    row.line,
                    "no source: give `@source` or a `source` column",
                ));
            }
        };
        for (i, v) in [
            variant,
            table.name.to_owned(),
            column.name.to_owned(),
            label,
            unit_field.text.clone(),
            full_source,
        ]
        .into_iter()
        .enumerate()
        {
            out[i].push(v);
        }
    }
    let [variants, tables, columns, labels, units, sources] = out;
    Ok(REFERENCE_VALUES.batch(vec![
        repeat(program, variants.len()),
        utf8(variants),
        utf8(tables),
        utf8(columns),
        utf8(labels),
        Arc::new(Float64Array::from(values)),
        utf8(units),
        utf8(sources),
    ])?)
}
