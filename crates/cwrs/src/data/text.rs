//! Text hashing: documents to hashed rows exactly as scikit-learn's `HashingVectorizer` makes
//! them, so that the same text gives the same matrix in both libraries.
//!
//! A document is lowercased as Python's `str.lower` does it (the capital sigma's final form
//! included), cut into tokens as Python's `re` cuts it (words: maximal runs of at least two
//! `\w` characters, the default `token_pattern` `(?u)\b\w\w+\b`; characters: n-grams of the
//! text with runs of whitespace made one space), each token hashed (MurmurHash3, see
//! [`hashed_column`]) into a column with a sign; then a row sums its duplicates (keeping the
//! zeros that collisions leave, as SciPy's `sum_duplicates` does), is made binary if asked, and
//! normalized. The character classes come from Python's own tables (`unicode_tables`, made by
//! scripts/gen_unicode_tables.py), not Rust's, which differ from them.

use std::ops::Range;

use super::hashing::hashed_column;
use super::unicode_tables as tables;
use crate::error::CwError;

/// What the tokens of a document are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Analyzer {
    /// Words: maximal runs of at least two `\w` characters, and their n-grams joined by a space.
    Word,
    /// Character n-grams of the whole text.
    Char,
    /// Character n-grams inside each word padded with one space on each side.
    CharWb,
}

impl Analyzer {
    /// The analyzer of scikit-learn's name `name` ("word", "char" or "char_wb").
    pub fn from_name(name: &str) -> Result<Analyzer, CwError> {
        match name {
            "word" => Ok(Analyzer::Word),
            "char" => Ok(Analyzer::Char),
            "char_wb" => Ok(Analyzer::CharWb),
            _ => Err(CwError::InvalidParameter(format!(
                "analyzer must be 'word', 'char' or 'char_wb', got {name:?}"
            ))),
        }
    }
}

/// How a row is normalized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// Divided by the sum of absolute values.
    L1,
    /// Divided by the square root of the sum of squared values (Euclidean length).
    L2,
}

impl Norm {
    /// The norm of scikit-learn's name `name` ("l1" or "l2"; `None`: no normalization).
    pub fn from_name(name: Option<&str>) -> Result<Option<Norm>, CwError> {
        match name {
            None => Ok(None),
            Some("l1") => Ok(Some(Norm::L1)),
            Some("l2") => Ok(Some(Norm::L2)),
            Some(other) => Err(CwError::InvalidParameter(format!(
                "norm must be 'l1', 'l2' or None, got {other:?}"
            ))),
        }
    }
}

/// How documents become tokens.
#[derive(Clone, Copy, Debug)]
pub struct Analysis {
    /// Whether a document is lowercased (as Python's `str.lower`) before it is cut into tokens.
    pub lowercase: bool,
    /// What the tokens are: words or character n-grams.
    pub analyzer: Analyzer,
    /// The smallest and largest n of the n-grams (words or characters), 1 <= min <= max.
    pub ngram_range: (usize, usize),
}

impl Analysis {
    /// Refuses an `ngram_range` that is not 1 ≤ min ≤ max.
    pub fn check(&self) -> Result<(), CwError> {
        let (min_n, max_n) = self.ngram_range;
        if min_n < 1 || min_n > max_n {
            return Err(CwError::InvalidParameter(format!(
                "ngram_range must be (min_n, max_n) with 1 <= min_n <= max_n, got \
                 ({min_n}, {max_n})"
            )));
        }
        Ok(())
    }
}

/// How tokens become a row.
#[derive(Clone, Copy, Debug)]
pub struct Hashing {
    /// The number of columns, in [1, 2³¹).
    pub n_features: u32,
    /// Each token counts the sign of its hash instead of 1 (collisions cancel in expectation).
    pub alternate_sign: bool,
    /// Every stored value of a row becomes 1 (before the norm).
    pub binary: bool,
    /// The norm each row is divided by last (`None`: rows are not normalized).
    pub norm: Option<Norm>,
}

/// Rows in CSR arrays: row i's columns are `indices[indptr[i]..indptr[i + 1]]`, sorted, each
/// once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HashedRows {
    /// The stored values, row after row.
    pub data: Vec<f64>,
    /// The column of each value.
    pub indices: Vec<i32>,
    /// The row offsets: row i is entries `indptr[i]..indptr[i + 1]` (n_rows + 1 values from 0).
    pub indptr: Vec<i64>,
}

/// Checks that `n_features` columns have int32 indices, as SciPy and scikit-learn want them.
pub fn check_n_features(n_features: u32) -> Result<(), CwError> {
    if n_features == 0 || n_features > i32::MAX as u32 {
        return Err(CwError::InvalidParameter(format!(
            "n_features must be an integer in [1, 2**31), got {n_features}"
        )));
    }
    Ok(())
}

/// Hashed tokens gathered into rows (see the module's documentation).
pub struct RowBuilder {
    hashing: Hashing,
    rows: HashedRows,
    /// The current row's tokens, each as its column times 2 plus 1 if it counts -1: sorting
    /// these plain integers sorts by column, cheaper than sorting (column, value) pairs.
    row: Vec<u32>,
    /// Memory ran out while the current row was gathered (reported by `end_row`).
    out_of_memory: bool,
}

impl RowBuilder {
    /// A builder of no rows yet, refusing a `hashing.n_features` outside [1, 2³¹).
    pub fn new(hashing: Hashing) -> Result<RowBuilder, CwError> {
        check_n_features(hashing.n_features)?;
        let rows = HashedRows {
            indptr: vec![0],
            ..HashedRows::default()
        };
        Ok(RowBuilder {
            hashing,
            rows,
            row: Vec::new(),
            out_of_memory: false,
        })
    }

    /// One occurrence of `token` in the current row.
    #[inline]
    pub fn add(&mut self, token: &[u8]) {
        let (column, sign) = hashed_column(token, self.hashing.n_features);
        let negative = self.hashing.alternate_sign && sign < 0.0;
        // Buffers that grow with the input grow fallibly: out of memory is an error, not an
        // abort.
        if self.row.len() == self.row.capacity() && self.row.try_reserve(64).is_err() {
            self.out_of_memory = true;
            return;
        }
        self.row.push(column << 1 | u32::from(negative));
    }

    /// Ends the current row: sorted, its duplicates summed, made binary and normalized.
    pub fn end_row(&mut self) -> Result<(), CwError> {
        let room = self.rows.data.try_reserve(self.row.len()).is_ok()
            && self.rows.indices.try_reserve(self.row.len()).is_ok()
            && self.rows.indptr.try_reserve(1).is_ok();
        if self.out_of_memory || !room {
            return Err(CwError::OutOfMemory(format!(
                "not enough memory for the hashed rows ({} entries so far)",
                self.rows.data.len()
            )));
        }
        self.row.sort_unstable();
        let start = self.rows.data.len();
        let mut keys = self.row.iter().copied().peekable();
        while let Some(key) = keys.next() {
            let column = key >> 1;
            // The values are ±1: their sum is exact whatever the order.
            let mut value = if key & 1 == 1 { -1.0 } else { 1.0 };
            while let Some(more) = keys.next_if(|&next| next >> 1 == column) {
                value += if more & 1 == 1 { -1.0 } else { 1.0 };
            }
            // A zero sum stays stored, as SciPy's `sum_duplicates` leaves it.
            self.rows.indices.push(column as i32);
            self.rows.data.push(value);
        }
        self.row.clear();
        let values = &mut self.rows.data[start..];
        if self.hashing.binary {
            values.fill(1.0);
        }
        if let Some(norm) = self.hashing.norm {
            normalize(values, norm);
        }
        self.rows.indptr.push(self.rows.data.len() as i64);
        Ok(())
    }

    /// The rows gathered, each ended by [`RowBuilder::end_row`].
    pub fn finish(self) -> HashedRows {
        self.rows
    }
}

/// `values` divided by their norm, as scikit-learn's `normalize` computes it (a sum in order,
/// then one division per value), unless the norm is 0.
fn normalize(values: &mut [f64], norm: Norm) {
    let total = match norm {
        Norm::L1 => values.iter().fold(0.0, |s, v| s + v.abs()),
        Norm::L2 => values.iter().fold(0.0, |s, v| s + v * v).sqrt(),
    };
    if total != 0.0 {
        values.iter_mut().for_each(|v| *v /= total);
    }
}

/// The rows of `documents`, analyzed by `analysis` and hashed by `hashing`.
pub fn hash_documents<'a>(
    documents: impl IntoIterator<Item = &'a str>,
    analysis: Analysis,
    hashing: Hashing,
) -> Result<HashedRows, CwError> {
    analysis.check()?;
    let mut rows = RowBuilder::new(hashing)?;
    let mut analyzer = TextAnalyzer::new(analysis);
    for document in documents {
        analyzer.for_each_token(document, |token| rows.add(token));
        rows.end_row()?;
    }
    Ok(rows.finish())
}

/// The tokens of documents, with buffers reused from one document to the next.
pub struct TextAnalyzer {
    analysis: Analysis,
    /// The document lowercased (if asked).
    text: String,
    /// The text with runs of whitespace made one space (character n-grams).
    spaced: String,
    /// Byte ranges of the words, or byte offsets of the characters, in the text.
    words: Vec<Range<usize>>,
    offsets: Vec<usize>,
    /// An n-gram of words joined by spaces, or a padded word.
    joined: String,
}

impl TextAnalyzer {
    /// An analyzer of `analysis` with empty buffers.
    pub fn new(analysis: Analysis) -> TextAnalyzer {
        TextAnalyzer {
            analysis,
            text: String::new(),
            spaced: String::new(),
            words: Vec::new(),
            offsets: Vec::new(),
            joined: String::new(),
        }
    }

    /// Calls `emit` with the UTF-8 of each token of `document`, in scikit-learn's order.
    pub fn for_each_token(&mut self, document: &str, mut emit: impl FnMut(&[u8])) {
        self.text.clear();
        if self.analysis.lowercase {
            push_lowercase(document, &mut self.text);
        } else {
            self.text.push_str(document);
        }
        let (min_n, max_n) = self.analysis.ngram_range;
        match self.analysis.analyzer {
            Analyzer::Word => {
                word_ranges(&self.text, &mut self.words);
                let (text, words) = (&self.text, &self.words);
                if min_n == 1 {
                    words.iter().for_each(|w| emit(&text.as_bytes()[w.clone()]));
                }
                for n in min_n.max(2)..=max_n.min(words.len()) {
                    for gram in words.windows(n) {
                        self.joined.clear();
                        for (k, w) in gram.iter().enumerate() {
                            if k > 0 {
                                self.joined.push(' ');
                            }
                            self.joined.push_str(&text[w.clone()]);
                        }
                        emit(self.joined.as_bytes());
                    }
                }
            }
            Analyzer::Char => {
                single_spaces(&self.text, &mut self.spaced);
                char_offsets(&self.spaced, &mut self.offsets);
                let (bytes, offsets) = (self.spaced.as_bytes(), &self.offsets);
                let n_chars = offsets.len() - 1;
                for n in min_n..=max_n.min(n_chars) {
                    for i in 0..=n_chars - n {
                        emit(&bytes[offsets[i]..offsets[i + n]]);
                    }
                }
            }
            Analyzer::CharWb => {
                single_spaces(&self.text, &mut self.spaced);
                for word in self.spaced.split(is_space).filter(|w| !w.is_empty()) {
                    self.joined.clear();
                    self.joined.push(' ');
                    self.joined.push_str(word);
                    self.joined.push(' ');
                    char_offsets(&self.joined, &mut self.offsets);
                    let (bytes, offsets) = (self.joined.as_bytes(), &self.offsets);
                    let len = offsets.len() - 1;
                    // scikit-learn's loop: a word shorter than n counts once, whole, and ends
                    // the larger n.
                    for n in min_n..=max_n {
                        emit(&bytes[..offsets[n.min(len)]]);
                        let mut start = 0;
                        while start + n < len {
                            start += 1;
                            emit(&bytes[offsets[start]..offsets[start + n]]);
                        }
                        if start == 0 {
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// The byte offset of each character of `text`, then its length.
fn char_offsets(text: &str, offsets: &mut Vec<usize>) {
    offsets.clear();
    offsets.extend(text.char_indices().map(|(i, _)| i));
    offsets.push(text.len());
}

/// `text` with each run of two or more whitespace characters made one space (scikit-learn's
/// `re.sub(r"\s\s+", " ", text)`; a single whitespace character stays as it is).
fn single_spaces(text: &str, out: &mut String) {
    out.clear();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_space(c) && chars.peek().is_some_and(|&next| is_space(next)) {
            while chars.next_if(|&next| is_space(next)).is_some() {}
            out.push(' ');
        } else {
            out.push(c);
        }
    }
}

/// The byte ranges of the maximal runs of at least two word characters of `text` (what
/// `re.findall(r"(?u)\b\w\w+\b", text)` finds).
fn word_ranges(text: &str, words: &mut Vec<Range<usize>>) {
    words.clear();
    let bytes = text.as_bytes();
    let (mut i, mut start, mut length) = (0, 0, 0);
    while i < bytes.len() {
        // ASCII bytes (most of most text) by table; other characters decoded.
        let (word, width) = match bytes[i] {
            byte if byte.is_ascii() => (ASCII_WORD[byte as usize], 1),
            _ => {
                let c = text[i..].chars().next().unwrap_or_default();
                (is_word(c), c.len_utf8())
            }
        };
        if word {
            if length == 0 {
                start = i;
            }
            length += 1;
        } else {
            if length >= 2 {
                words.push(start..i);
            }
            length = 0;
        }
        i += width;
    }
    if length >= 2 {
        words.push(start..text.len());
    }
}

/// [`is_word`] of each ASCII character: letters, digits and the underscore.
static ASCII_WORD: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    table
};

/// Appends `text` lowercased as Python's `str.lower` does it.
pub fn push_lowercase(text: &str, out: &mut String) {
    let mut i = 0;
    while i < text.len() {
        // A run of ASCII characters at once; then one other character.
        let ascii = text.as_bytes()[i..]
            .iter()
            .take_while(|b| b.is_ascii())
            .count();
        if ascii > 0 {
            let start = out.len();
            out.push_str(&text[i..i + ascii]);
            out[start..].make_ascii_lowercase();
            i += ascii;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or_default();
        if c == 'Σ' {
            out.push(if is_final_sigma(text, i) { 'ς' } else { 'σ' });
        } else if let Ok(k) = tables::LOWER.binary_search_by_key(&(c as u32), |&(from, _)| from) {
            out.push(char::from_u32(tables::LOWER[k].1).unwrap_or(c));
        } else if let Some(&(_, lower)) = tables::LOWER_MULTI.iter().find(|&&(f, _)| f == c as u32)
        {
            out.push_str(lower);
        } else {
            out.push(c);
        }
        i += c.len_utf8();
    }
}

/// Whether the capital sigma at byte `i` of `text` is in the Final_Sigma context (Unicode's
/// definition, as Python applies it): a cased character before it and none after it, skipping
/// case-ignorable characters on both sides.
fn is_final_sigma(text: &str, i: usize) -> bool {
    let not_ignorable = |c: &char| !in_table(tables::CASE_IGNORABLE, *c);
    let before = text[..i].chars().rev().find(not_ignorable);
    let after = text[i + 'Σ'.len_utf8()..].chars().find(not_ignorable);
    let cased = |c: char| in_table(tables::CASED, c);
    before.is_some_and(cased) && !after.is_some_and(cased)
}

/// Python's `re` `\w`: `str.isalnum()` or the underscore.
#[inline]
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        ASCII_WORD[c as usize]
    } else {
        in_table(tables::WORD, c)
    }
}

/// Python's `re` `\s` and `str.isspace()`.
#[inline]
pub fn is_space(c: char) -> bool {
    in_table(tables::SPACE, c)
}

/// The Unicode version of the character tables (that of the Python they were made from).
pub fn unicode_version() -> &'static str {
    tables::UNICODE_VERSION
}

/// Whether `c` is in one of the sorted inclusive ranges of `table`.
#[inline]
fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    let i = table.partition_point(|&(_, last)| last < c);
    i < table.len() && table[i].0 <= c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(document: &str, analyzer: Analyzer, ngram_range: (usize, usize)) -> Vec<String> {
        let analysis = Analysis {
            lowercase: true,
            analyzer,
            ngram_range,
        };
        let mut out = Vec::new();
        let mut analyzer = TextAnalyzer::new(analysis);
        analyzer.for_each_token(document, |t| {
            out.push(String::from_utf8(t.to_vec()).unwrap())
        });
        out
    }

    #[test]
    fn words_and_their_ngrams() {
        let words = tokens("The a_b, x  ÉTÉ 42!", Analyzer::Word, (1, 2));
        assert_eq!(
            words,
            ["the", "a_b", "été", "42", "the a_b", "a_b été", "été 42"]
        );
    }

    #[test]
    fn python_lowercase_and_final_sigma() {
        let mut out = String::new();
        push_lowercase("ΟΔΟΣ ΟΔΟΣ. Σ İ", &mut out);
        assert_eq!(out, "οδος οδος. σ i\u{307}");
    }

    #[test]
    fn char_ngrams_as_scikit_learn() {
        assert_eq!(
            tokens("ab  c", Analyzer::Char, (2, 3)),
            ["ab", "b ", " c", "ab ", "b c"]
        );
        let padded = tokens("ab c", Analyzer::CharWb, (2, 4));
        assert_eq!(
            padded,
            [" a", "ab", "b ", " ab", "ab ", " ab ", " c", "c ", " c "]
        );
    }

    #[test]
    fn rows_are_summed_and_normalized() {
        let hashing = Hashing {
            n_features: 1,
            alternate_sign: false,
            binary: false,
            norm: Some(Norm::L1),
        };
        let mut rows = RowBuilder::new(hashing).unwrap();
        rows.add(b"a");
        rows.add(b"b");
        rows.end_row().unwrap();
        rows.end_row().unwrap();
        let rows = rows.finish();
        assert_eq!(
            (rows.data, rows.indices, rows.indptr),
            (vec![1.0], vec![0], vec![0, 1, 1])
        );
    }
}
