//! Criterion benches of the LIBSVM reader on a generated text-like file: parse throughput
//! (MB/s) on one thread, and parse + AROW (diagonal) learning in examples/s, through the
//! two-thread pipeline and, for the ratio, one after the other on one thread.
//!
//! `cargo bench --bench libsvm`; the file (about 290 MB) lives in the temp dir during the run.

use criterion::{Criterion, Throughput};
use cwrs::data::libsvm::{for_each_chunk, Chunk, IndexBase, Reader};
use cwrs::{CovarianceKind, Learner, Presentation, Rule};
use std::fs::{self, File};
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

mod common;

use common::Xorshift;

const ROWS: usize = 200_000;
const FEATURES: usize = 1 << 20;
const NNZ: usize = 100;
/// About 1.6 MB of CSR per chunk: the chunks in flight stay in cache next to the model.
const CHUNK_ROWS: usize = 1_000;

/// `ROWS` lines of about `NNZ` sorted one-based indices with values like `0.0123`, labels ±1
/// from a sparse linear teacher.
fn write_file(path: &Path) -> std::io::Result<()> {
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    let mut out = BufWriter::new(File::create(path)?);
    let mut row: Vec<(u64, u64)> = Vec::with_capacity(NNZ);
    for _ in 0..ROWS {
        row.clear();
        row.extend((0..NNZ).map(|_| (rng.next() % FEATURES as u64 + 1, rng.next() % 10_000)));
        row.sort_unstable();
        row.dedup_by_key(|e| e.0);
        let score: i64 = row
            .iter()
            .map(|&(j, _)| if j % 7 == 0 { 10 } else { -1 })
            .sum();
        out.write_all(if score > 0 { b"+1" } else { b"-1" })?;
        for &(j, v) in &row {
            write!(out, " {j}:0.{v:04}")?;
        }
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn arow() -> Learner {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    Learner::new(rule, CovarianceKind::Diagonal, FEATURES, true, 1.0).unwrap()
}

fn learn(learner: &mut Learner, chunk: &Chunk) -> Result<(), cwrs::CwError> {
    learner.partial_fit(
        &chunk.matrix(FEATURES),
        chunk.labels(),
        Presentation::default(),
    )
}

fn bench(c: &mut Criterion, path: &Path) {
    let bytes = fs::metadata(path).unwrap().len();
    let mut group = c.benchmark_group("libsvm");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));

    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("parse", |b| {
        b.iter(|| {
            let mut reader = Reader::new(File::open(path).unwrap(), IndexBase::One, CHUNK_ROWS);
            let (mut chunk, mut rows) = (Chunk::default(), 0);
            while reader.next_chunk(&mut chunk).unwrap() {
                rows += black_box(&chunk).n_rows();
            }
            assert_eq!(rows, ROWS);
        })
    });

    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("parse_learn_arow_diag/pipeline", |b| {
        b.iter(|| {
            let mut learner = arow();
            let file = File::open(path).unwrap();
            for_each_chunk(file, IndexBase::One, CHUNK_ROWS, |chunk| {
                learn(&mut learner, chunk)
            })
            .unwrap();
            black_box(learner.n_updates())
        })
    });
    group.bench_function("parse_learn_arow_diag/one_thread", |b| {
        b.iter(|| {
            let mut learner = arow();
            let mut reader = Reader::new(File::open(path).unwrap(), IndexBase::One, CHUNK_ROWS);
            let mut chunk = Chunk::default();
            while reader.next_chunk(&mut chunk).unwrap() {
                learn(&mut learner, &chunk).unwrap();
            }
            black_box(learner.n_updates())
        })
    });
    group.finish();
}

fn main() {
    let dir = std::env::temp_dir().join(format!("cwrs-libsvm-bench-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("text.libsvm");
    write_file(&path).unwrap();
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion, &path);
    criterion.final_summary();
    fs::remove_dir_all(&dir).unwrap();
}
