//! Arbitrary bytes through the LIBSVM reader in every mode: zero-based, one-based and "auto",
//! whole-file, chunked with tiny blocks and chunks (so that lines straddle block and chunk
//! boundaries) and through the threaded pipeline. Nothing may panic or hang; every error names a
//! line of the input; every chunk is well-formed CSR that passes the learners' validation for
//! exactly its `n_features` columns; and all the ways of reading give the same rows (or the same
//! error). Rows that parse are then learned by a regressor, which must accept them.
#![no_main]

use cwrs::covariance::CovarianceKind;
use cwrs::data::libsvm::{for_each_chunk, read_all, Chunk, IndexBase, LabelField, Reader};
use cwrs::data::Presentation;
use cwrs::learn::regression::Regressor;
use cwrs::rules::RegressionRule;
use cwrs::CwError;
use libfuzzer_sys::fuzz_target;

/// One parsed row, with floats as bits so that `-0.0` and `0.0` differ.
#[derive(Debug, PartialEq)]
struct Row {
    label: u64,
    /// 0 for a row without `qid:` (as the reader reports it).
    qid: i64,
    entries: Vec<(i64, u64)>,
}

/// Everything a read gave: the rows, whether any had a qid, the widest row and the first line.
#[derive(Debug, Default, PartialEq)]
struct Rows {
    rows: Vec<Row>,
    any_qid: bool,
    n_features: usize,
    first_line: Option<u64>,
}

impl Rows {
    fn append(&mut self, chunk: &Chunk) {
        if self.first_line.is_none() && chunk.n_rows() > 0 {
            self.first_line = Some(chunk.first_line());
        }
        self.any_qid |= chunk.qids().is_some();
        self.n_features = self.n_features.max(chunk.n_features());
        let indptr = chunk.indptr();
        for i in 0..chunk.n_rows() {
            let (start, end) = (indptr[i] as usize, indptr[i + 1] as usize);
            self.rows.push(Row {
                label: chunk.labels()[i].to_bits(),
                qid: chunk.qids().map_or(0, |q| q[i]),
                entries: chunk.indices()[start..end]
                    .iter()
                    .zip(&chunk.values()[start..end])
                    .map(|(&j, &x)| (j, x.to_bits()))
                    .collect(),
            });
        }
    }
}

/// The invariants of one chunk of at most `max_rows` rows.
fn check_chunk(chunk: &Chunk, max_rows: usize) {
    let n = chunk.n_rows();
    assert!(n <= max_rows);
    let indptr = chunk.indptr();
    assert_eq!(indptr.len(), n + 1);
    assert_eq!(indptr[0], 0);
    assert!(indptr.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(indptr[n] as usize, chunk.indices().len());
    assert_eq!(chunk.indices().len(), chunk.values().len());
    assert!(chunk.qids().is_none_or(|q| q.len() == n));
    assert!(chunk.labels().iter().all(|y| y.is_finite()));
    assert!(chunk.values().iter().all(|x| x.is_finite()));
    let mut widest = 0;
    for w in indptr.windows(2) {
        let row = &chunk.indices()[w[0] as usize..w[1] as usize];
        assert!(row.first().is_none_or(|&j| j >= 0));
        assert!(row.windows(2).all(|p| p[0] < p[1]), "unsorted row {row:?}");
        if let Some(&last) = row.last() {
            widest = widest.max(last as usize + 1);
        }
    }
    assert_eq!(chunk.n_features(), widest);
    // Exactly n_features columns hold the rows; one fewer does not (n_features limits).
    let m = chunk.n_features();
    assert_eq!(chunk.matrix(m).validate(m), Ok(()));
    if m > 0 {
        assert!(chunk.matrix(m - 1).validate(m - 1).is_err());
    }
}

/// An error of the reader names a line of the input.
fn check_error(error: &CwError, n_lines: u64) {
    let message = error.to_string();
    let number = message
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
        .and_then(|(number, _)| number.parse::<u64>().ok());
    assert!(
        number.is_some_and(|k| (1..=n_lines).contains(&k)),
        "{message:?} names no line of {n_lines}"
    );
    assert!(matches!(error, CwError::InvalidInput(_)), "{error:?}");
}

fn whole(data: &[u8], zero_based: Option<bool>, n_lines: u64) -> Result<Rows, CwError> {
    let (chunk, _) = read_all(data, zero_based, LabelField::Required)
        .inspect_err(|e| check_error(e, n_lines))?;
    check_chunk(&chunk, usize::MAX);
    if zero_based == Some(false) {
        learn(&chunk);
    }
    let mut rows = Rows::default();
    rows.append(&chunk);
    Ok(rows)
}

/// Reads with the given block size and rows per chunk; the error ends the read.
fn chunked(data: &[u8], base: IndexBase, block: usize, chunk_rows: usize) -> Result<Rows, CwError> {
    let mut reader = Reader::new(data, base, chunk_rows).with_block_size(block);
    let (mut rows, mut chunk) = (Rows::default(), Chunk::default());
    let mut last_first_line = 0;
    while reader.next_chunk(&mut chunk)? {
        assert!(chunk.n_rows() > 0);
        check_chunk(&chunk, chunk_rows);
        assert!(chunk.first_line() > last_first_line);
        last_first_line = chunk.first_line();
        rows.append(&chunk);
    }
    // The end stays the end.
    assert_eq!(reader.next_chunk(&mut chunk), Ok(false));
    assert_eq!(chunk.n_rows(), 0);
    Ok(rows)
}

fn pipelined(data: &[u8], base: IndexBase, chunk_rows: usize) -> Result<Rows, CwError> {
    let mut rows = Rows::default();
    for_each_chunk(data, base, chunk_rows, |chunk| {
        check_chunk(chunk, chunk_rows);
        rows.append(chunk);
        Ok(())
    })?;
    Ok(rows)
}

/// The rows of a whole read, learned by a diagonal AROW regressor: valid rows must be accepted.
fn learn(chunk: &Chunk) {
    let n_features = chunk.n_features().max(1);
    if n_features > 1 << 12 {
        return;
    }
    let rule = RegressionRule::from_name("AROW", &[]).unwrap();
    let mut model = Regressor::new(rule, CovarianceKind::Diagonal, n_features, true, 1.0).unwrap();
    let x = chunk.matrix(n_features);
    model
        .partial_fit(&x, chunk.labels(), Presentation::default())
        .unwrap();
    let mut out = vec![0.0; chunk.n_rows()];
    model.predict(&x, &mut out).unwrap();
}

fuzz_target!(|data: &[u8]| {
    let n_lines = data.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let h = data.len();
    // Block sizes and chunk sizes that vary with the input, so that its lines fall across
    // block and chunk boundaries at many offsets.
    let configs = [(1, 1), (2 + h % 7, 1 + h % 3), (1 + h % 61, 2 + h % 5)];
    let mut whole_reads = Vec::new();
    for (zero_based, base) in [(Some(true), IndexBase::Zero), (Some(false), IndexBase::One)] {
        let all = whole(data, zero_based, n_lines);
        for (block, chunk_rows) in configs {
            assert_eq!(
                chunked(data, base, block, chunk_rows),
                all,
                "block {block}, {chunk_rows} rows per chunk"
            );
        }
        assert_eq!(pipelined(data, base, 1 + h % 4), all, "pipeline");
        whole_reads.push(all);
    }
    // "auto" reads zero-based and shifts every index down unless one of them is 0.
    let auto = whole(data, None, n_lines);
    match (&whole_reads[0], &auto) {
        (Ok(zero), Ok(auto)) => {
            let min = zero.rows.iter().flat_map(|r| &r.entries).map(|e| e.0).min();
            if min.is_some_and(|j| j > 0) {
                // Then the file is one-based, and reads as such wherever one-based reads it.
                if let Ok(one) = &whole_reads[1] {
                    assert_eq!(auto, one);
                }
                assert_eq!(auto.n_features + 1, zero.n_features);
            } else {
                assert_eq!(auto, zero);
            }
        }
        (Err(zero), Err(auto)) => assert_eq!(zero, auto),
        (zero, auto) => panic!("zero-based {zero:?}, auto {auto:?}"),
    }
});
