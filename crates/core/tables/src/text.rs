//! Text columns that may be dictionary-encoded, for writing and for reading.
//!
//! A canonical `Utf8` column may be stored either as a plain `Utf8` array or as a
//! `Dictionary(Int8 | Int16 | Int32, Utf8)` array (each distinct text once, a key per row). The
//! large tables whose texts repeat on every row (`predictions` of a cross-validation, the
//! `mpi_blocks` of a full MPI run) are built dictionary-encoded with [`DictTextBuilder`], whose
//! keys are the narrowest that hold the column's distinct texts (a byte a row for a column of a
//! few dozen texts: `mpi_blocks` of 1 GB of logs is a third smaller than with 32-bit keys);
//! readers go through [`Text`], which reads every encoding.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int16Type, Int32Type};
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int8Array, Int16Array, Int32Array, PrimitiveArray,
    RecordBatch, StringArray,
};
use arrow_schema::DataType;

/// The widest type of a dictionary-encoded text column (32-bit keys): the type text columns of
/// different key widths are brought to before they are joined ([`unify`]).
pub fn dictionary_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// Whether `ty` is one of the encodings of a text column: `Utf8`, or a dictionary of `Utf8`
/// values with 8-, 16- or 32-bit signed keys.
pub fn is_text_type(ty: &DataType) -> bool {
    match ty {
        DataType::Utf8 => true,
        DataType::Dictionary(key, value) => {
            matches!(
                key.as_ref(),
                DataType::Int8 | DataType::Int16 | DataType::Int32
            ) && value.as_ref() == &DataType::Utf8
        }
        _ => false,
    }
}

/// The keys of a [`DictTextBuilder`], in the narrowest width that holds the keys given so far:
/// widened (copied once) when the 129th or the 32,769th distinct text arrives.
#[derive(Debug)]
enum KeyVec {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
}

impl Default for KeyVec {
    fn default() -> Self {
        KeyVec::I8(Vec::new())
    }
}

impl KeyVec {
    #[inline]
    fn push(&mut self, key: i32) {
        // `key` fits: `widen_for` ran when it was made.
        match self {
            KeyVec::I8(v) => v.push(key as i8),
            KeyVec::I16(v) => v.push(key as i16),
            KeyVec::I32(v) => v.push(key),
        }
    }

    fn len(&self) -> usize {
        match self {
            KeyVec::I8(v) => v.len(),
            KeyVec::I16(v) => v.len(),
            KeyVec::I32(v) => v.len(),
        }
    }

    /// Widens the keys so that `key` fits.
    fn widen_for(&mut self, key: i32) {
        fn copy<T: Copy, U: From<T>>(v: &[T], capacity: usize) -> Vec<U> {
            let mut out = Vec::with_capacity(capacity.max(v.len()));
            out.extend(v.iter().map(|&k| U::from(k)));
            out
        }
        let wider = match self {
            KeyVec::I8(v) if key > i32::from(i8::MAX) => {
                if key > i32::from(i16::MAX) {
                    KeyVec::I32(copy(v, v.capacity()))
                } else {
                    KeyVec::I16(copy(v, v.capacity()))
                }
            }
            KeyVec::I16(v) if key > i32::from(i16::MAX) => KeyVec::I32(copy(v, v.capacity())),
            _ => return,
        };
        *self = wider;
    }

    /// The dictionary array of these keys over `values`.
    fn finish(self, valid: Option<Vec<bool>>, values: ArrayRef) -> ArrayRef {
        fn dict<K: arrow_array::types::ArrowDictionaryKeyType>(
            keys: Vec<K::Native>,
            valid: Option<Vec<bool>>,
            values: ArrayRef,
        ) -> ArrayRef {
            let keys = PrimitiveArray::<K>::new(keys.into(), valid.map(Into::into));
            Arc::new(
                DictionaryArray::<K>::try_new(keys, values).expect("every key indexes a value"),
            )
        }
        match self {
            KeyVec::I8(k) => dict::<Int8Type>(k, valid, values),
            KeyVec::I16(k) => dict::<Int16Type>(k, valid, values),
            KeyVec::I32(k) => dict::<Int32Type>(k, valid, values),
        }
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

/// Builds a dictionary-encoded text column, its keys 8, 16 or 32 bits wide as its distinct texts
/// need. A value equal to the one appended just before it reuses its key without hashing (the
/// texts of these tables come in runs: a model's rows, a rank's blocks); any other is looked up
/// once among the distinct values.
#[derive(Debug, Default)]
pub struct DictTextBuilder {
    keys: KeyVec,
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
            keys: KeyVec::I8(Vec::with_capacity(rows)),
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
        self.keys.len() == 0
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
                self.keys.widen_for(key);
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
        let valid = self.valid.take();
        let bytes: usize = self.values.iter().map(|v| v.len()).sum();
        let mut values = StringBuilder::with_capacity(self.values.len(), bytes);
        for v in self.values.drain(..) {
            values.append_value(&*v);
        }
        self.index.clear();
        self.last = None;
        self.by_address.clear();
        self.kept.clear();
        keys.finish(valid, Arc::new(values.finish()))
    }
}

/// `value` on each of `rows` rows, dictionary-encoded (one text, a byte-wide key per row).
pub fn repeated(value: &str, rows: usize) -> ArrayRef {
    let keys = Int8Array::from(vec![0; rows]);
    let values = StringArray::from_iter_values([value]);
    Arc::new(DictionaryArray::<Int8Type>::try_new(keys, Arc::new(values)).expect("key 0 indexes"))
}

/// The values of a dictionary array of any key type, and the index among them of `row`'s
/// value (from that row's key alone: normalising the whole column's keys for every cell made a
/// table's text quadratic in its rows).
pub fn dictionary_row(array: &dyn Array, row: usize) -> Option<(ArrayRef, usize)> {
    let one = array.slice(row, 1);
    let dict = one.as_any_dictionary_opt()?;
    Some((Arc::clone(dict.values()), dict.normalized_keys()[0]))
}

/// The keys of a dictionary-encoded text column, in their width.
#[derive(Debug, Clone, Copy)]
pub enum Keys<'a> {
    I8(&'a Int8Array),
    I16(&'a Int16Array),
    I32(&'a Int32Array),
}

/// `$body` with `$k` bound to the keys array of whichever width `$keys` holds.
macro_rules! with_keys {
    ($keys:expr, $k:ident => $body:expr) => {
        match $keys {
            Keys::I8($k) => $body,
            Keys::I16($k) => $body,
            Keys::I32($k) => $body,
        }
    };
}

impl<'a> Keys<'a> {
    /// The keys of `array`, `None` unless it is a dictionary with 8-, 16- or 32-bit keys.
    fn of(array: &'a dyn Array) -> Option<(Keys<'a>, &'a ArrayRef)> {
        Some(match array.data_type() {
            DataType::Dictionary(key, _) => match key.as_ref() {
                DataType::Int8 => {
                    let d = array.as_dictionary_opt::<Int8Type>()?;
                    (Keys::I8(d.keys()), d.values())
                }
                DataType::Int16 => {
                    let d = array.as_dictionary_opt::<Int16Type>()?;
                    (Keys::I16(d.keys()), d.values())
                }
                DataType::Int32 => {
                    let d = array.as_dictionary_opt::<Int32Type>()?;
                    (Keys::I32(d.keys()), d.values())
                }
                _ => return None,
            },
            _ => return None,
        })
    }

    #[inline]
    pub fn len(&self) -> usize {
        with_keys!(self, k => k.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn is_null(&self, row: usize) -> bool {
        with_keys!(self, k => k.is_null(row))
    }

    pub fn null_count(&self) -> usize {
        with_keys!(self, k => k.null_count())
    }

    /// The key of `row` as an index into the values (that of a null row is meaningless).
    #[inline]
    pub fn value(&self, row: usize) -> usize {
        with_keys!(self, k => k.value(row) as usize)
    }

    /// Every row's key as an index, `None` for nulls.
    pub fn indices(&self) -> Vec<Option<usize>> {
        with_keys!(self, k => k.iter().map(|v| v.map(|v| v as usize)).collect())
    }
}

/// A text column in any of its encodings, read row by row.
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    Plain(&'a StringArray),
    Dictionary {
        keys: Keys<'a>,
        values: &'a StringArray,
    },
}

impl<'a> Text<'a> {
    /// `array` as text, `None` when it is no encoding of text.
    pub fn new(array: &'a dyn Array) -> Option<Self> {
        match array.data_type() {
            DataType::Utf8 => Some(Text::Plain(array.as_string::<i32>())),
            ty if is_text_type(ty) => {
                let (keys, values) = Keys::of(array)?;
                Some(Text::Dictionary {
                    keys,
                    values: values.as_string::<i32>(),
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
                    values.value(keys.value(row))
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
            && !keys.is_null(a)
            && !keys.is_null(b)
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
                    with_keys!(keys, k => k
                        .values()
                        .iter()
                        .map(|&key| of_value[key as usize].clone())
                        .collect())
                } else {
                    let of_null = f("");
                    keys.indices()
                        .into_iter()
                        .map(|k| k.map_or_else(|| of_null.clone(), |k| of_value[k].clone()))
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
                keys: *keys,
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
        keys: Keys<'a>,
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
                    &of_value[keys.value(row)]
                }
            }
        }
    }
}

/// `batches` with each text column in one encoding across them, so that they can be joined:
/// where the batches store a text column differently (plain in one, dictionary-encoded in
/// another, or keys of different widths) it becomes plain `Utf8` if any batch has it plain,
/// else `Dictionary(Int32, Utf8)`; a column all batches store as 8- or 16-bit dictionaries is
/// widened to 32-bit keys too, as the joined dictionary may hold more texts than each part's.
/// Other columns are left as they are (a mismatch there is the caller's to report).
pub fn unify(batches: &[RecordBatch]) -> Result<Vec<RecordBatch>, arrow_schema::ArrowError> {
    let Some(first) = batches.first() else {
        return Ok(Vec::new());
    };
    if batches.len() == 1 {
        return Ok(batches.to_vec());
    }
    let columns = first.num_columns();
    let mut target: Vec<Option<DataType>> = vec![None; columns];
    for (i, slot) in target.iter_mut().enumerate() {
        let types: Vec<&DataType> = batches
            .iter()
            .filter(|b| b.num_columns() == columns)
            .map(|b| b.column(i).data_type())
            .collect();
        if types.len() != batches.len() || !types.iter().all(|t| is_text_type(t)) {
            continue;
        }
        if types.iter().any(|t| **t == DataType::Utf8) {
            if types.iter().any(|t| **t != DataType::Utf8) {
                *slot = Some(DataType::Utf8);
            }
        } else if types.iter().any(|t| **t != dictionary_type()) {
            *slot = Some(dictionary_type());
        }
    }
    if target.iter().all(Option::is_none) {
        return Ok(batches.to_vec());
    }
    batches
        .iter()
        .map(|batch| {
            let mut fields: Vec<arrow_schema::Field> = batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.as_ref().clone())
                .collect();
            let mut arrays = batch.columns().to_vec();
            for (i, to) in target.iter().enumerate() {
                let Some(to) = to else { continue };
                arrays[i] = convert(arrays[i].as_ref(), to);
                fields[i] = fields[i].clone().with_data_type(to.clone());
            }
            let schema =
                arrow_schema::Schema::new_with_metadata(fields, batch.schema().metadata().clone());
            RecordBatch::try_new(Arc::new(schema), arrays)
        })
        .collect()
}

/// A text column as plain `Utf8` or as `Dictionary(Int32, Utf8)` (`to`), the same texts.
/// [`unify`] asks for a dictionary only when every part is one.
fn convert(array: &dyn Array, to: &DataType) -> ArrayRef {
    match Text::new(array).expect("unify converts text columns only") {
        Text::Dictionary { keys, values } if *to != DataType::Utf8 => {
            let keys: Int32Array = keys
                .indices()
                .into_iter()
                .map(|k| k.map(|k| k as i32))
                .collect();
            Arc::new(
                DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values.clone()))
                    .expect("the same keys index the same values"),
            )
        }
        text => Arc::new(text.iter().collect::<StringArray>()),
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
        assert_eq!(
            array.data_type(),
            &DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            "three texts take byte-wide keys"
        );
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
        let dict = array.as_dictionary::<Int8Type>();
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
        let dict = array.as_dictionary::<Int8Type>();
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
        let dict =
            |key: DataType, value: DataType| DataType::Dictionary(Box::new(key), Box::new(value));
        assert!(is_text_type(&dict(DataType::Int8, DataType::Utf8)));
        assert!(is_text_type(&dict(DataType::Int16, DataType::Utf8)));
        assert!(!is_text_type(&dict(DataType::Int64, DataType::Utf8)));
        assert!(!is_text_type(&dict(DataType::UInt8, DataType::Utf8)));
        assert!(!is_text_type(&dict(DataType::Int8, DataType::LargeUtf8)));
    }

    /// Texts `0..n` on one row each, then the first again, with a null after the first.
    fn numbered(n: usize) -> ArrayRef {
        let mut b = DictTextBuilder::with_capacity(n + 2);
        b.append_value("0");
        b.append_null();
        for i in 1..n {
            b.append_value(&i.to_string());
        }
        b.append_value("0");
        b.finish()
    }

    #[test]
    fn keys_widen_as_distinct_texts_outgrow_them() {
        for (n, key) in [
            (128, DataType::Int8),
            (129, DataType::Int16),
            (32_768, DataType::Int16),
            (32_769, DataType::Int32),
        ] {
            let array = numbered(n);
            assert_eq!(
                array.data_type(),
                &DataType::Dictionary(Box::new(key), Box::new(DataType::Utf8)),
                "{n} texts"
            );
            let text = Text::new(array.as_ref()).unwrap();
            assert_eq!(text.len(), n + 2);
            assert_eq!(text.get(0), Some("0"));
            assert_eq!(text.get(1), None);
            assert_eq!(text.get(n), Some((n - 1).to_string().as_str()));
            assert!(text.same(0, n + 1) && !text.same(0, 2));
            assert_eq!(text.per_row(|t| t.len())[n], (n - 1).to_string().len());
            assert!(*text.lookup(|t| t == "0").get(n + 1));
        }
    }

    #[test]
    fn unify_brings_a_column_to_one_encoding_across_batches() {
        let batch = |texts: ArrayRef| {
            let rows = texts.len();
            RecordBatch::try_from_iter([
                ("name", texts),
                ("n", Arc::new(Int32Array::from(vec![1; rows])) as ArrayRef),
            ])
            .unwrap()
        };
        let narrow = batch(numbered(1));
        let wide = batch(numbered(200));
        let wide = wide.slice(wide.num_rows() - 3, 3);
        let joined = unify(&[narrow.clone(), wide.clone()]).unwrap();
        for b in &joined {
            assert_eq!(b.column(0).data_type(), &dictionary_type());
            assert_eq!(b.column(1).data_type(), &DataType::Int32);
        }
        let texts = |b: &RecordBatch| -> Vec<Option<String>> {
            Text::new(b.column(0).as_ref())
                .unwrap()
                .iter()
                .map(|t| t.map(str::to_owned))
                .collect()
        };
        assert_eq!(texts(&joined[0]), texts(&narrow));
        assert_eq!(texts(&joined[1]), texts(&wide));
        let plain = batch(Arc::new(StringArray::from(vec![
            Some("x"),
            None,
            Some("0"),
        ])));
        let joined = unify(&[narrow.clone(), plain.clone()]).unwrap();
        assert_eq!(joined[0].column(0).data_type(), &DataType::Utf8);
        assert_eq!(texts(&joined[0]), texts(&narrow));
        assert_eq!(texts(&joined[1]), texts(&plain));
        let same = unify(&[plain.clone(), plain.clone()]).unwrap();
        assert_eq!(same[1].column(0).data_type(), &DataType::Utf8);
    }
}
