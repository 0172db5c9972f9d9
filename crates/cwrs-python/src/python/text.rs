//! Feature hashing for Python (`cwrs::data::text`, `cwrs::data::hashing`): documents copied
//! out as UTF-8 under the GIL, then analyzed and hashed without it; samples of
//! `cwrs.FeatureHasher` (dicts, pairs, strings) read in one pass over the Python objects.

use std::borrow::Cow;

use numpy::PyArray1;
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

use super::{Array1, Object, PyResult};
use crate::host::shared::guarded;
use cwrs::data::hashing::hashed_column;
use cwrs::data::text::{
    check_n_features, hash_documents as hash_texts, Analysis, Analyzer, HashedRows, Hashing, Norm,
    RowBuilder, TextAnalyzer,
};

/// The UTF-8 of `text`, which Python caches in the string object (ASCII strings hold it
/// already): no copy. A lone surrogate has no UTF-8 (UnicodeEncodeError). PyO3 offers
/// `to_str` only where the limited API of every Python supported has the function (3.10), but
/// Python 3.9 exports it too, except from the `python3.dll` of Windows, where the copy that
/// PyO3's `to_cow` makes is taken instead.
#[cfg(not(windows))]
fn utf8<'a>(text: &'a Bound<PyString>) -> PyResult<Cow<'a, str>> {
    extern "C" {
        fn PyUnicode_AsUTF8AndSize(
            text: *mut pyo3::ffi::PyObject,
            size: *mut pyo3::ffi::Py_ssize_t,
        ) -> *const std::os::raw::c_char;
    }
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a str; the buffer lives as long as it does, and holds valid UTF-8.
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(text.py()).into());
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
        Ok(Cow::Borrowed(std::str::from_utf8_unchecked(bytes)))
    }
}

#[cfg(windows)]
fn utf8<'a>(text: &'a Bound<PyString>) -> PyResult<Cow<'a, str>> {
    text.to_cow()
}

/// CSR arrays (data, indices, indptr) as NumPy arrays.
type Csr<'py> = (Array1<'py, f64>, Array1<'py, i32>, Array1<'py, i64>);

fn to_numpy(py: Python, rows: HashedRows) -> Csr {
    let data = PyArray1::from_vec(py, rows.data);
    let indices = PyArray1::from_vec(py, rows.indices);
    (data, indices, PyArray1::from_vec(py, rows.indptr))
}

/// The documents' text, one after the other, and where each ends.
struct Documents {
    text: String,
    ends: Vec<usize>,
}

impl Documents {
    /// Appends a document's text; a copy larger than the memory left is a `MemoryError`.
    fn push(&mut self, text: &str) -> PyResult<()> {
        if self.text.try_reserve(text.len()).is_err() {
            return Err(PyMemoryError::new_err(format!(
                "not enough memory to copy the documents ({} bytes so far)",
                self.text.len()
            ))
            .into());
        }
        self.text.push_str(text);
        Ok(())
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.text[start..end])
    }
}

/// The documents of the iterable `documents` (str, or bytes decoded as strict UTF-8, as
/// scikit-learn's `input="content"` takes them). A str holding lone surrogates has no UTF-8:
/// for the word analyzer, to which they are separators as any character outside `\w` is, each
/// is read as "?" (also outside `\w`, and neither cased nor case-ignorable); else its encoding
/// error is raised, as scikit-learn raises it when it hashes the token.
fn read_documents(documents: &Object, analyzer: Analyzer) -> PyResult<Documents> {
    let mut read = Documents {
        text: String::new(),
        ends: Vec::new(),
    };
    for (i, document) in documents.try_iter()?.enumerate() {
        let document = document?;
        if let Ok(text) = document.cast::<PyString>() {
            match utf8(text) {
                Ok(text) => read.push(&text)?,
                Err(_) if analyzer == Analyzer::Word => {
                    let replaced = text.call_method1("encode", ("utf-8", "replace"))?;
                    let replaced = replaced.cast::<PyBytes>()?.as_bytes();
                    read.push(&String::from_utf8_lossy(replaced))?;
                }
                Err(error) => return Err(error),
            }
        } else if let Ok(bytes) = document.cast::<PyBytes>() {
            match std::str::from_utf8(bytes.as_bytes()) {
                Ok(text) => read.push(text)?,
                // Python's own decoding error (its message names the bad byte).
                Err(_) => {
                    let decoded = document.call_method1("decode", ("utf-8",))?;
                    read.push(&utf8(decoded.cast::<PyString>()?)?)?;
                }
            }
        } else {
            return Err(PyTypeError::new_err(format!(
                "documents must be str or bytes; document {i} is of type {}",
                document.get_type().name()?
            ))
            .into());
        }
        read.ends.push(read.text.len());
    }
    Ok(read)
}

fn analysis(lowercase: bool, analyzer: &str, ngram_range: (usize, usize)) -> PyResult<Analysis> {
    let analysis = Analysis {
        lowercase,
        analyzer: Analyzer::from_name(analyzer)?,
        ngram_range,
    };
    analysis.check()?;
    Ok(analysis)
}

fn hashing(
    n_features: u32,
    alternate_sign: bool,
    binary: bool,
    norm: Option<&str>,
) -> PyResult<Hashing> {
    let norm = Norm::from_name(norm)?;
    Ok(Hashing {
        n_features,
        alternate_sign,
        binary,
        norm,
    })
}

/// The CSR arrays of `documents` (an iterable of str or bytes) as scikit-learn's
/// `HashingVectorizer` makes them: rows with sorted columns, duplicates summed, binary and
/// normalized as asked. The documents are copied out under the GIL, then hashed without it.
#[pyfunction]
#[pyo3(signature = (documents, n_features, lowercase, analyzer, ngram_range, alternate_sign, binary, norm))]
#[allow(clippy::too_many_arguments)]
pub(super) fn hash_documents<'py>(
    documents: &Object<'py>,
    n_features: u32,
    lowercase: bool,
    analyzer: &str,
    ngram_range: (usize, usize),
    alternate_sign: bool,
    binary: bool,
    norm: Option<&str>,
) -> PyResult<Csr<'py>> {
    let py = documents.py();
    let analysis = analysis(lowercase, analyzer, ngram_range)?;
    let hashing = hashing(n_features, alternate_sign, binary, norm)?;
    let read = read_documents(documents, analysis.analyzer)?;
    let hash = || Ok::<_, super::errors::Error>(hash_texts(read.iter(), analysis, hashing)?);
    let rows = py.detach(|| guarded("_cwrs", "hash_documents", hash))?;
    Ok(to_numpy(py, rows))
}

/// The tokens of each document, as `hash_documents` hashes them.
#[pyfunction]
pub(super) fn analyze_documents<'py>(
    documents: &Object<'py>,
    lowercase: bool,
    analyzer: &str,
    ngram_range: (usize, usize),
) -> PyResult<Vec<Bound<'py, PyList>>> {
    let py = documents.py();
    let analysis = analysis(lowercase, analyzer, ngram_range)?;
    let read = read_documents(documents, analysis.analyzer)?;
    let mut analyzer = TextAnalyzer::new(analysis);
    let mut lists = Vec::with_capacity(read.ends.len());
    for document in read.iter() {
        let mut tokens = Vec::new();
        analyzer.for_each_token(document, |token| tokens.push(token.to_vec()));
        let tokens = tokens
            .iter()
            .map(|t| PyString::new(py, &String::from_utf8_lossy(t)));
        lists.push(PyList::new(py, tokens)?);
    }
    Ok(lists)
}

/// The CSR arrays of `token_lists` (an iterable of iterables of token names, str or bytes; a
/// str is refused as a list, as scikit-learn's `FeatureHasher` refuses it), each token counted
/// once where it occurs, made as `hash_documents` makes its rows: `FeatureHasher`'s "string"
/// input, and the tokens of `HashingVectorizer`'s Python tokenizers.
#[pyfunction]
pub(super) fn hash_token_lists<'py>(
    token_lists: &Object<'py>,
    n_features: u32,
    alternate_sign: bool,
    binary: bool,
    norm: Option<&str>,
) -> PyResult<Csr<'py>> {
    let mut rows = RowBuilder::new(hashing(n_features, alternate_sign, binary, norm)?)?;
    for tokens in token_lists.try_iter()? {
        let tokens = tokens?;
        if tokens.is_instance_of::<PyString>() {
            return Err(PyValueError::new_err(
                "Samples can not be a single string. The input must be an iterable over \
                 iterables of strings.",
            )
            .into());
        }
        for token in tokens.try_iter()? {
            rows.add(name_bytes(&token?)?.as_ref());
        }
        rows.end_row()?;
    }
    Ok(to_numpy(token_lists.py(), rows.finish()))
}

/// The bytes a feature name is hashed as: a str's UTF-8, a bytes object's bytes; any other name
/// is refused as scikit-learn's `FeatureHasher` refuses it.
fn name_bytes<'a>(name: &'a Object) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(text) = name.cast::<PyString>() {
        Ok(match utf8(text)? {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        })
    } else if let Ok(bytes) = name.cast::<PyBytes>() {
        Ok(Cow::Borrowed(bytes.as_bytes()))
    } else {
        Err(PyTypeError::new_err(format!(
            "feature names must be strings (str or bytes), got {} of type {}",
            name.repr()?,
            name.get_type().name()?
        ))
        .into())
    }
}

/// The CSR arrays of the samples of `cwrs.FeatureHasher` of input types "dict" and "pair" (see
/// its documentation), each row's entries in the samples' order and not summed (SciPy's `sum_duplicates` sums them, as for
/// scikit-learn, so that the float sums are the same).
#[pyfunction]
pub(super) fn hash_samples<'py>(
    samples: &Object<'py>,
    input_type: &str,
    n_features: u32,
    alternate_sign: bool,
) -> PyResult<Csr<'py>> {
    check_n_features(n_features)?;
    let mut rows = Samples {
        rows: HashedRows {
            indptr: vec![0],
            ..HashedRows::default()
        },
        n_features,
        alternate_sign,
    };
    for sample in samples.try_iter()? {
        let sample = sample?;
        match input_type {
            "dict" => {
                if let Ok(dict) = sample.cast::<PyDict>() {
                    for (name, value) in dict.iter() {
                        rows.add_feature(&name, &value)?;
                    }
                } else {
                    for item in sample.call_method0("items")?.try_iter()? {
                        let (name, value) = pair(&item?)?;
                        rows.add_feature(&name, &value)?;
                    }
                }
            }
            "pair" => {
                for item in sample.try_iter()? {
                    let (name, value) = pair(&item?)?;
                    rows.add_feature(&name, &value)?;
                }
            }
            // Checked by `FeatureHasher` before (its message).
            other => {
                return Err(PyValueError::new_err(format!("unknown input_type {other:?}")).into())
            }
        }
        rows.rows.indptr.push(rows.rows.data.len() as i64);
    }
    Ok(to_numpy(samples.py(), rows.rows))
}

/// The rows of `hash_samples` as they are read.
struct Samples {
    rows: HashedRows,
    n_features: u32,
    alternate_sign: bool,
}

impl Samples {
    /// `value` in the column of `token`, times the sign of its hash if asked.
    fn add(&mut self, token: &[u8], value: f64) {
        let (column, sign) = hashed_column(token, self.n_features);
        self.rows.indices.push(column as i32);
        let value = if self.alternate_sign {
            value * sign
        } else {
            value
        };
        self.rows.data.push(value);
    }

    /// The feature `name` of value `value`, as scikit-learn's `FeatureHasher` takes it: a
    /// string value v makes the name "name=v" (formatted as "%s=%s") with value 1; other values
    /// are converted to float, and a zero is left out before the name is looked at.
    fn add_feature(&mut self, name: &Object, value: &Object) -> PyResult<()> {
        if let Ok(text) = value.cast::<PyString>() {
            let formatted = format!("{}={}", utf8(&name.str()?)?, utf8(text)?);
            self.add(formatted.as_bytes(), 1.0);
            return Ok(());
        }
        let refused = || -> PyResult<super::errors::Error> {
            Ok(PyTypeError::new_err(format!(
                "feature {} has a value of type {}",
                name.repr()?,
                value.get_type().name()?
            ))
            .into())
        };
        if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
            return Err(refused()?);
        }
        let Ok(number) = value.extract::<f64>() else {
            return Err(refused()?);
        };
        if number != 0.0 {
            self.add(name_bytes(name)?.as_ref(), number);
        }
        Ok(())
    }
}

/// A (name, value) item unpacked as Python's `name, value = item` does.
fn pair<'py>(item: &Object<'py>) -> PyResult<(Object<'py>, Object<'py>)> {
    if let Ok(tuple) = item.cast::<PyTuple>() {
        if tuple.len() == 2 {
            return Ok((tuple.get_item(0)?, tuple.get_item(1)?));
        }
    }
    let Ok(values) = item.try_iter() else {
        return Err(PyTypeError::new_err(format!(
            "cannot unpack non-iterable {} object",
            item.get_type().name()?
        ))
        .into());
    };
    let values = values.take(3).collect::<Result<Vec<_>, PyErr>>()?;
    match <[Object; 2]>::try_from(values) {
        Ok([name, value]) => Ok((name, value)),
        Err(values) if values.len() > 2 => {
            Err(PyValueError::new_err("too many values to unpack (expected 2)").into())
        }
        Err(values) => Err(PyValueError::new_err(format!(
            "not enough values to unpack (expected 2, got {})",
            values.len()
        ))
        .into()),
    }
}
