//! A streaming reader of LIBSVM / SVMlight text: `label [qid:N] index:value ... [# comment]`.
//!
//! The input is read in fixed-size blocks and parsed straight from the byte buffer into a
//! reusable [`Chunk`] of CSR arrays, so memory stays flat however large the file, and nothing is
//! allocated per line. [`for_each_chunk`] parses on a second thread while the caller consumes
//! (learns) the previous chunk.
//!
//! - `parse`: one line into a chunk (the hot path);
//! - `reader`: [`Reader`], blocks of bytes into chunks of whole lines;
//! - `compressed`: [`decompressed`], gzip, bzip2 and xz recognised by their first bytes;
//! - `index_base`: [`has_index_zero`], the scan behind scikit-learn's `zero_based="auto"`;
//! - `stream`: [`ChunkStream`], chunks parsed ahead on another thread;
//! - `file`: files opened, read and streamed on a background thread that a caller can wait for
//!   in slices and cancel (what the Python bindings use).

mod compressed;
mod file;
mod index_base;
mod parse;
mod reader;
mod stream;

use std::io::Read;

pub use compressed::decompressed;
pub use file::{auto_index_base, stream_file, FileChunks, Outcome, Pending};
pub use index_base::has_index_zero;
pub use reader::Reader;
pub use stream::{for_each_chunk, ChunkStream};

use crate::data::Matrix;
use crate::error::CwError;
use crate::model::state::State;

/// Bytes read per block; a longer line grows the buffer as far as it needs.
const BLOCK_SIZE: usize = 1 << 20;
/// Longest line accepted: no LIBSVM row is this long, and a longer one (a binary file, or
/// `/dev/zero`) would otherwise be buffered until memory runs out.
pub const MAX_LINE_BYTES: usize = 1 << 30;

/// `vec.push(value)`, or `CwError::OutOfMemory` where growing the vector would abort the
/// process: every buffer that grows with the input grows through here.
#[inline(always)]
fn try_push<T>(vec: &mut Vec<T>, value: T) -> Result<(), CwError> {
    if vec.len() == vec.capacity() {
        grow(vec)?;
    }
    vec.push(value);
    Ok(())
}

/// Doubles the capacity of `vec` (at least 64 elements), fallibly.
#[cold]
fn grow<T>(vec: &mut Vec<T>) -> Result<(), CwError> {
    vec.try_reserve(vec.len().max(64))
        .map_err(|_| out_of_memory(vec.len()))
}

#[cold]
fn out_of_memory(elements: usize) -> CwError {
    CwError::OutOfMemory(format!(
        "not enough memory to read the LIBSVM data (a buffer of {elements} elements could not grow)"
    ))
}

/// Whether feature indices in the file count from 0 or from 1 (LIBSVM's convention).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexBase {
    /// Index 0 is the first feature.
    Zero,
    /// Index 1 is the first feature (LIBSVM's files).
    One,
}

/// Whether each line must start with a label (to learn or evaluate), or may lack one (to
/// predict): then a line may start with its first `index:value` (or `qid:`), or with a
/// placeholder that is no number (such as `?`); such a line's label is NaN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LabelField {
    /// Every line starts with its label (to learn or to evaluate).
    #[default]
    Required,
    /// A line may lack its label, which is then NaN (to predict).
    Optional,
}

/// Consecutive rows of a file as CSR arrays, with column indices made zero-based and sorted.
/// Filled by [`Reader::next_chunk`]; reused chunks keep their capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub(crate) labels: Vec<f64>,
    pub(crate) indptr: Vec<i64>,
    pub(crate) indices: Vec<i64>,
    pub(crate) values: Vec<f64>,
    /// One per row once any row of the chunk has a `qid:` (0 for rows without one), else empty.
    pub(crate) qids: Vec<i64>,
    /// One past the largest column index (0 when the chunk has no entries).
    pub(crate) n_features: usize,
    /// The 1-based line number of each row.
    pub(crate) lines: Vec<u64>,
    /// The 1-based line number of the first row.
    first_line: u64,
}

impl Default for Chunk {
    fn default() -> Chunk {
        Chunk {
            labels: Vec::new(),
            indptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            qids: Vec::new(),
            n_features: 0,
            lines: Vec::new(),
            first_line: 0,
        }
    }
}

impl Chunk {
    /// Empties the chunk, keeping its capacity.
    pub fn clear(&mut self) {
        self.labels.clear();
        self.indptr.clear();
        self.indptr.push(0);
        self.indices.clear();
        self.values.clear();
        self.qids.clear();
        self.lines.clear();
        self.n_features = 0;
    }

    /// The number of rows in the chunk.
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }

    /// The label of each row (NaN for a line without one, when labels are optional).
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// The row offsets: row i is entries `indptr[i]..indptr[i + 1]` (n_rows + 1 values from 0).
    pub fn indptr(&self) -> &[i64] {
        &self.indptr
    }

    /// The zero-based column index of each value, sorted within a row.
    pub fn indices(&self) -> &[i64] {
        &self.indices
    }

    /// The stored values, row after row.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The query ids, one per row, if any row has one (rows without get 0).
    pub fn qids(&self) -> Option<&[i64]> {
        (!self.qids.is_empty()).then_some(self.qids.as_slice())
    }

    /// The fewest columns that hold every entry: one past the largest (zero-based) index.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The columns of a matrix of these rows: `n_features` when given (an error when narrower
    /// than [`Chunk::n_features`]), else [`Chunk::n_features`] but at least 1, as scikit-learn
    /// gives a file with no entries.
    pub fn n_cols(&self, n_features: Option<usize>) -> Result<usize, CwError> {
        let found = self.n_features;
        match n_features {
            None => Ok(found.max(1)),
            Some(n) if n >= found => Ok(n),
            Some(n) => Err(CwError::InvalidInput(format!(
                "n_features was set to {n}, but input file contains {found} features"
            ))),
        }
    }

    /// The 1-based line number of each row, for messages about a row.
    pub fn lines(&self) -> &[u64] {
        &self.lines
    }

    /// The 1-based line number of the first row, for messages about the chunk's rows.
    pub fn first_line(&self) -> u64 {
        self.first_line
    }

    /// The chunk by name, its arrays borrowed: `labels`, the CSR arrays `values`, `indices`
    /// and `indptr`, `qids` (None when no row has one), `n_features` ([`Chunk::n_features`])
    /// and `lines`.
    pub fn state(&self) -> State<'_> {
        State::default()
            .with("labels", self.labels())
            .with("values", self.values())
            .with("indices", self.indices())
            .with("indptr", self.indptr())
            .with("qids", self.qids())
            .with("n_features", self.n_features)
            .with("lines", self.lines())
    }

    /// The rows as a CSR matrix of `n_cols` columns (at least [`Chunk::n_features`], which the
    /// learners' validation checks).
    pub fn matrix(&self, n_cols: usize) -> Matrix<'_> {
        Matrix::Csr64 {
            values: &self.values,
            indices: &self.indices,
            indptr: &self.indptr,
            n_cols,
        }
    }
}

/// The whole of `source` as one chunk, and the index base it was read with. `zero_based` is
/// `Some(true)` or `Some(false)` for zero- or one-based indices, `None` for scikit-learn's
/// "auto": one-based unless some index is 0 (decided after parsing, so in one pass).
pub fn read_all<R: Read>(
    source: R,
    zero_based: Option<bool>,
    labels: LabelField,
) -> Result<(Chunk, IndexBase), CwError> {
    let mut base = match zero_based {
        Some(false) => IndexBase::One,
        _ => IndexBase::Zero,
    };
    let mut chunk = Chunk::default();
    Reader::new(source, base, usize::MAX)
        .with_labels(labels)
        .next_chunk(&mut chunk)?;
    if zero_based.is_none() && chunk.indices.iter().min().is_none_or(|&j| j > 0) {
        chunk.indices.iter_mut().for_each(|j| *j -= 1);
        chunk.n_features = chunk.n_features.saturating_sub(1);
        base = IndexBase::One;
    }
    Ok((chunk, base))
}

#[cfg(test)]
mod tests;
