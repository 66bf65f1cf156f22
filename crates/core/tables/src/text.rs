//! Text columns that may be dictionary-encoded, for writing and for reading.
//!
//! A canonical `Utf8` column may be stored either as a plain `Utf8` array or as a
//! `Dictionary(Int32, Utf8)` array (each distinct text once, a key per row). The large tables
//! whose texts repeat on every row (`predictions` of a cross-validation, the `mpi_blocks` of a
//! full MPI run) are built dictionary-encoded with [`DictTextBuilder`]; readers go through
//! [`Text`], which reads either encoding.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, Int32Array, StringArray};
use arrow_schema::DataType;

/// The type of a dictionary-encoded text column.
pub fn dictionary_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// Whether `ty` is one of the two encodings of a text column.
pub fn is_text_type(ty: &DataType) -> bool {
    match ty {
        DataType::Utf8 => true,
        DataType::Dictionary(key, value) => {
            key.as_ref() == &DataType::Int32 && value.as_ref() == &DataType::Utf8
        }
        _ => false,
    }
}

/// `a == b`, short texts compared inline: the previous row's text is compared on every append,
/// and a call into libc's `memcmp` for a few bytes cost more than the comparison (a twentieth of
/// building a kernel trace's spans).
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len()
        && if a.len() <= 32 {
            a.iter().zip(b).all(|(x, y)| x == y)
        } else {
            a == b
        }
}

/// A text's key in one [`DictTextBuilder`]'s dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextKey(i32);

/// Builds a `Dictionary(Int32, Utf8)` column. A value equal to the one appended just before it
/// reuses its key without hashing (the texts of these tables come in runs: a model's rows, a
/// rank's blocks); any other is looked up once among the distinct values.
#[derive(Debug, Default)]
pub struct DictTextBuilder {
    keys: Vec<i32>,
    /// Validity per row, kept only once a null has been appended.
    valid: Option<Vec<bool>>,
    values: Vec<Box<str>>,
    index: HashMap<Box<str>, i32, foldhash::fast::FixedState>,
    last: Option<i32>,
    /// Keys of texts appended through [`DictTextBuilder::append_shared`] and
    /// [`DictTextBuilder::append_static`], by address: an address stands for its text as long as
    /// the text lives, which `kept` (shared texts) and `'static` guarantee.
    by_address: HashMap<(usize, usize), i32, foldhash::fast::FixedState>,
    kept: Vec<Arc<str>>,
}

impl DictTextBuilder {
    /// A builder with room for `rows` keys.
    pub fn with_capacity(rows: usize) -> Self {
        Self {
            keys: Vec::with_capacity(rows),
            ..Self::default()
        }
    }

    pub fn append_value(&mut self, value: &str) {
        let key = self.key_of(value);
        self.push_key(key);
    }

    /// The key of `value` in this column's dictionary (added if new), for
    /// [`DictTextBuilder::append_key`]: a text that many rows share is looked up once.
    pub fn key(&mut self, value: &str) -> TextKey {
        TextKey(self.key_of(value))
    }

    /// Appends the text of `key`, a key this builder gave since it was last finished.
    #[inline]
    pub fn append_key(&mut self, key: TextKey) {
        debug_assert!(
            (key.0 as usize) < self.values.len(),
            "a key of this builder"
        );
        self.push_key(key.0);
    }

    /// Appends a text shared by many rows (an interned `Arc<str>`): looked up by its address,
    /// without hashing or comparing its bytes.
    pub fn append_shared(&mut self, value: &Arc<str>) {
        let key = self.key_by_address(value, Some(value));
        self.push_key(key);
    }

    /// Appends a text of the program (a literal): looked up by its address.
    pub fn append_static(&mut self, value: &'static str) {
        let key = self.key_by_address(value, None);
        self.push_key(key);
    }

    /// The key of `value` by its address; a text seen the first time is looked up by content,
    /// and `keep` (its owner, unless it is `'static`) is kept alive so the address stays its.
    fn key_by_address(&mut self, value: &str, keep: Option<&Arc<str>>) -> i32 {
        let address = (value.as_ptr() as usize, value.len());
        if let Some(&key) = self.by_address.get(&address) {
            return key;
        }
        let key = self.key_of(value);
        self.by_address.insert(address, key);
        self.kept.extend(keep.cloned());
        key
    }

    #[inline]
    fn push_key(&mut self, key: i32) {
        self.keys.push(key);
        if let Some(valid) = &mut self.valid {
            valid.push(true);
        }
    }

    pub fn append_null(&mut self) {
        let valid = self
            .valid
            .get_or_insert_with(|| vec![true; self.keys.len()]);
        valid.push(false);
        self.keys.push(0);
    }

    pub fn append_option(&mut self, value: Option<&str>) {
        match value {
            Some(v) => self.append_value(v),
            None => self.append_null(),
        }
    }

    /// Rows appended so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn key_of(&mut self, value: &str) -> i32 {
        if let Some(last) = self.last
            && same_text(&self.values[last as usize], value)
        {
            return last;
        }
        let key = match self.index.get(value) {
            Some(&key) => key,
            None => {
                let key = i32::try_from(self.values.len())
                    .expect("fewer than 2^31 distinct texts in one column");
                self.values.push(value.into());
                self.index.insert(value.into(), key);
                key
            }
        };
        self.last = Some(key);
        key
    }

    /// The column; the builder is left empty.
    pub fn finish(&mut self) -> ArrayRef {
        let keys = std::mem::take(&mut self.keys);
        let keys = match self.valid.take() {
            None => Int32Array::from(keys),
            Some(valid) => Int32Array::new(keys.into(), Some(valid.into())),
        };
        let bytes: usize = self.values.iter().map(|v| v.len()).sum();
        let mut values = StringBuilder::with_capacity(self.values.len(), bytes);
        for v in self.values.drain(..) {
            values.append_value(&*v);
        }
        self.index.clear();
        self.last = None;
        self.by_address.clear();
        self.kept.clear();
        Arc::new(
            DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values.finish()))
                .expect("every key indexes a value"),
        )
    }
}

/// `value` on each of `rows` rows, dictionary-encoded (one text, a key per row).
pub fn repeated(value: &str, rows: usize) -> ArrayRef {
    let keys = Int32Array::from(vec![0; rows]);
    let values = StringArray::from_iter_values([value]);
    Arc::new(DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).expect("key 0 indexes"))
}

/// The values of a dictionary array of any key type, and the index among them of `row`'s
/// value (from that row's key alone: normalising the whole column's keys for every cell made a
/// table's text quadratic in its rows).
pub fn dictionary_row(array: &dyn Array, row: usize) -> Option<(ArrayRef, usize)> {
    let one = array.slice(row, 1);
    let dict = one.as_any_dictionary_opt()?;
    Some((Arc::clone(dict.values()), dict.normalized_keys()[0]))
}

/// A text column in either encoding, read row by row.
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    Plain(&'a StringArray),
    Dictionary {
        keys: &'a Int32Array,
        values: &'a StringArray,
    },
}

impl<'a> Text<'a> {
    /// `array` as text, `None` when it is neither encoding.
    pub fn new(array: &'a dyn Array) -> Option<Self> {
        match array.data_type() {
            DataType::Utf8 => Some(Text::Plain(array.as_string::<i32>())),
            ty if is_text_type(ty) => {
                let dict = array.as_dictionary::<Int32Type>();
                Some(Text::Dictionary {
                    keys: dict.keys(),
                    values: dict.values().as_string::<i32>(),
                })
            }
            _ => None,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Text::Plain(a) => a.len(),
            Text::Dictionary { keys, .. } => keys.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn is_null(&self, row: usize) -> bool {
        match self {
            Text::Plain(a) => a.is_null(row),
            Text::Dictionary { keys, .. } => keys.is_null(row),
        }
    }

    pub fn null_count(&self) -> usize {
        match self {
            Text::Plain(a) => a.null_count(),
            Text::Dictionary { keys, .. } => keys.null_count(),
        }
    }

    /// The text at `row` (the empty text for a null row; see [`Text::get`]).
    #[inline]
    pub fn value(&self, row: usize) -> &'a str {
        match self {
            Text::Plain(a) => a.value(row),
            Text::Dictionary { keys, values } => {
                if keys.is_null(row) {
                    ""
                } else {
                    values.value(keys.value(row) as usize)
                }
            }
        }
    }

    /// The text at `row`, `None` when null.
    #[inline]
    pub fn get(&self, row: usize) -> Option<&'a str> {
        (!self.is_null(row)).then(|| self.value(row))
    }

    /// Whether rows `a` and `b` hold the same text (nulls read as the empty text): a
    /// dictionary column compares keys before texts.
    #[inline]
    pub fn same(&self, a: usize, b: usize) -> bool {
        if let Text::Dictionary { keys, .. } = self
            && keys.value(a) == keys.value(b)
            && keys.is_valid(a)
            && keys.is_valid(b)
        {
            return true;
        }
        self.value(a) == self.value(b)
    }

    /// `f` of every row's text (nulls read as the empty text), `f` called once per distinct
    /// text of a dictionary column instead of once per row.
    pub fn per_row<T: Clone>(&self, f: impl Fn(&str) -> T) -> Vec<T> {
        match self {
            Text::Plain(a) => (0..a.len()).map(|row| f(a.value(row))).collect(),
            Text::Dictionary { keys, values } => {
                let of_value: Vec<T> = (0..values.len()).map(|v| f(values.value(v))).collect();
                if keys.null_count() == 0 {
                    keys.values()
                        .iter()
                        .map(|&k| of_value[k as usize].clone())
                        .collect()
                } else {
                    let of_null = f("");
                    keys.iter()
                        .map(|k| {
                            k.map_or_else(|| of_null.clone(), |k| of_value[k as usize].clone())
                        })
                        .collect()
                }
            }
        }
    }

    /// `f` of every distinct text, looked up by row without a value per row: a dictionary
    /// column of millions of rows and a few hundred texts holds only the few hundred (a plain
    /// column falls back to one value per row, as [`Text::per_row`]).
    pub fn lookup<T: Clone>(&self, f: impl Fn(&str) -> T) -> Lookup<'a, T> {
        match self {
            Text::Plain(_) => Lookup::PerRow(self.per_row(f)),
            Text::Dictionary { keys, values } => Lookup::PerKey {
                keys,
                of_value: (0..values.len()).map(|v| f(values.value(v))).collect(),
                of_null: f(""),
            },
        }
    }

    /// Every row's text, `None` for nulls.
    pub fn iter(&self) -> impl Iterator<Item = Option<&'a str>> + '_ {
        (0..self.len()).map(|row| self.get(row))
    }
}

/// What [`Text::lookup`] made: a value per distinct text of a dictionary column, or per row.
#[derive(Debug)]
pub enum Lookup<'a, T> {
    PerRow(Vec<T>),
    PerKey {
        keys: &'a Int32Array,
        of_value: Vec<T>,
        of_null: T,
    },
}

impl<T> Lookup<'_, T> {
    /// The value of `row`'s text.
    #[inline]
    pub fn get(&self, row: usize) -> &T {
        match self {
            Lookup::PerRow(v) => &v[row],
            Lookup::PerKey {
                keys,
                of_value,
                of_null,
            } => {
                if keys.is_null(row) {
                    of_null
                } else {
                    &of_value[keys.value(row) as usize]
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_gives_each_row_its_texts_value_without_a_value_per_row() {
        let mut b = DictTextBuilder::with_capacity(4);
        for v in [Some("a"), None, Some("b"), Some("a")] {
            b.append_option(v);
        }
        let dict = b.finish();
        let text = Text::new(dict.as_ref()).unwrap();
        let lookup = text.lookup(str::len);
        assert!(matches!(lookup, Lookup::PerKey { ref of_value, .. } if of_value.len() == 2));
        let got: Vec<usize> = (0..4).map(|r| *lookup.get(r)).collect();
        assert_eq!(got, [1, 0, 1, 1]);
        let plain = StringArray::from(vec!["xy", "z"]);
        let text = Text::new(&plain).unwrap();
        assert_eq!(*text.lookup(str::len).get(0), 2);
    }

    #[test]
    fn dictionary_column_reads_back_its_values_and_nulls() {
        let mut b = DictTextBuilder::with_capacity(6);
        for v in [Some("a"), Some("a"), Some("b"), None, Some("a"), Some("c")] {
            b.append_option(v);
        }
        let array = b.finish();
        assert_eq!(array.data_type(), &dictionary_type());
        let text = Text::new(array.as_ref()).unwrap();
        let read: Vec<Option<&str>> = text.iter().collect();
        assert_eq!(
            read,
            [Some("a"), Some("a"), Some("b"), None, Some("a"), Some("c")]
        );
        assert_eq!(text.null_count(), 1);
        assert!(text.same(0, 4) && !text.same(0, 2));
        assert_eq!(
            text.per_row(|t| t == "a"),
            [true, true, false, false, true, false]
        );
        let dict = array.as_dictionary::<Int32Type>();
        assert_eq!(dict.values().len(), 3, "each distinct text stored once");
        assert!(b.is_empty(), "finish leaves the builder empty");
        let same = repeated("run-1", 3);
        let text = Text::new(same.as_ref()).unwrap();
        assert_eq!(text.iter().collect::<Vec<_>>(), [Some("run-1"); 3]);
    }

    #[test]
    fn shared_and_static_texts_take_the_key_of_equal_texts() {
        let mut b = DictTextBuilder::default();
        let one: Arc<str> = Arc::from("block a");
        let same_text: Arc<str> = Arc::from("block a");
        b.append_shared(&one);
        b.append_value("block b");
        b.append_shared(&same_text);
        b.append_static("block b");
        b.append_shared(&one);
        let b_key = b.key("block b");
        b.append_key(b_key);
        let array = b.finish();
        let dict = array.as_dictionary::<Int32Type>();
        assert_eq!(dict.keys().values().to_vec(), [0, 1, 0, 1, 0, 1]);
        assert_eq!(dict.values().len(), 2);
    }

    #[test]
    fn plain_and_dictionary_read_alike() {
        let plain = StringArray::from(vec![Some("x"), None, Some("y")]);
        let text = Text::new(&plain).unwrap();
        assert_eq!(
            text.iter().collect::<Vec<_>>(),
            [Some("x"), None, Some("y")]
        );
        assert!(Text::new(&Int32Array::from(vec![1])).is_none());
        assert!(is_text_type(&DataType::Utf8) && is_text_type(&dictionary_type()));
        assert!(!is_text_type(&DataType::Dictionary(
            Box::new(DataType::Int8),
            Box::new(DataType::Utf8)
        )));
    }
}
