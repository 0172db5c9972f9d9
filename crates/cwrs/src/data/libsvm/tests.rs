//! Tests of the LIBSVM reader: every construct, errors named by line, lines across blocks and
//! chunks, the pipeline, and property tests of random and mutated files.

use std::io::{ErrorKind, Read};
use std::path::PathBuf;
use std::thread;

use super::parse::{leading_digits, plain_decimal, scalar_decimal, MAX_QUOTED};
use super::*;

/// Everything in one chunk.
fn read_all(text: &str, base: IndexBase) -> Result<Chunk, CwError> {
    let mut chunk = Chunk::default();
    Reader::new(text.as_bytes(), base, usize::MAX).next_chunk(&mut chunk)?;
    Ok(chunk)
}

fn error_of(text: &str, base: IndexBase) -> String {
    read_all(text, base).unwrap_err().to_string()
}

/// Everything in one chunk, each line's label field optional.
fn read_unlabeled(text: &str) -> Result<Chunk, CwError> {
    let mut chunk = Chunk::default();
    Reader::new(text.as_bytes(), IndexBase::One, usize::MAX)
        .with_labels(LabelField::Optional)
        .next_chunk(&mut chunk)?;
    Ok(chunk)
}

/// All chunks, concatenated back into one, reading with the given block size.
fn read_chunked(text: &str, block: usize, rows: usize) -> Chunk {
    let mut reader = Reader::new(text.as_bytes(), IndexBase::One, rows).with_block_size(block);
    let (mut all, mut chunk) = (Chunk::default(), Chunk::default());
    while reader.next_chunk(&mut chunk).unwrap() {
        assert!(chunk.n_rows() <= rows);
        append(&mut all, &chunk);
    }
    all
}

fn append(all: &mut Chunk, chunk: &Chunk) {
    let (offset, rows) = (all.indices.len() as i64, all.n_rows());
    if rows == 0 {
        all.first_line = chunk.first_line;
    }
    // A chunk has qids only if one of its own rows has one: pad with the 0 of a missing qid.
    if !(all.qids.is_empty() && chunk.qids.is_empty()) {
        all.qids.resize(rows, 0);
        all.qids.extend_from_slice(&chunk.qids);
        all.qids.resize(rows + chunk.n_rows(), 0);
    }
    all.labels.extend_from_slice(&chunk.labels);
    all.lines.extend_from_slice(&chunk.lines);
    all.indices.extend_from_slice(&chunk.indices);
    all.values.extend_from_slice(&chunk.values);
    all.indptr
        .extend(chunk.indptr[1..].iter().map(|p| p + offset));
    all.n_features = all.n_features.max(chunk.n_features);
}

const SAMPLE: &str = "# a header comment\n\
    +1 qid:3 1:0.5 3:1e-5\t7:.5 # trailing comment\r\n\
    \n   \t \r\n\
    -1 qid:-2 2:-0 4:2.5E2\n\
    0\n\
    2.5 qid:7 10:1#no space before the comment\n\
    1e3 5:3 1:1 3:2\n";

#[test]
fn parses_every_construct() {
    let chunk = read_all(SAMPLE, IndexBase::One).unwrap();
    assert_eq!(chunk.labels(), &[1.0, -1.0, 0.0, 2.5, 1000.0]);
    assert_eq!(chunk.indptr(), &[0, 3, 5, 5, 6, 9]);
    assert_eq!(chunk.indices(), &[0, 2, 6, 1, 3, 9, 0, 2, 4]);
    assert_eq!(
        chunk.values(),
        &[0.5, 1e-5, 0.5, -0.0, 250.0, 1.0, 1.0, 2.0, 3.0]
    );
    assert_eq!(chunk.qids(), Some(&[3, -2, 0, 7, 0][..]));
    assert_eq!(chunk.n_features(), 10);
    assert_eq!(chunk.first_line(), 2);
    let matrix = chunk.matrix(chunk.n_features());
    assert!(matrix.validate(10).is_ok());
    assert_eq!(matrix.n_rows(), 5);
}

#[test]
fn zero_based_and_edge_lines() {
    let chunk = read_all("1 0:1 2:2", IndexBase::Zero).unwrap();
    assert_eq!(chunk.indices(), &[0, 2]);
    assert_eq!(chunk.n_features(), 3);
    assert_eq!(chunk.qids(), None);
    let empty = read_all("# only\n\n \r\n", IndexBase::One).unwrap();
    assert_eq!(empty.n_rows(), 0);
    assert_eq!(empty.indptr(), &[0]);
    assert_eq!(read_all("", IndexBase::One).unwrap().n_rows(), 0);
}

#[test]
fn unsorted_rows_are_sorted_and_duplicates_rejected() {
    let chunk = read_all("1 9:9 2:2 5:5 1:1\n-1 3:3 2:2\n", IndexBase::One).unwrap();
    assert_eq!(chunk.indices(), &[0, 1, 4, 8, 1, 2]);
    assert_eq!(chunk.values(), &[1.0, 2.0, 5.0, 9.0, 2.0, 3.0]);
    assert_eq!(
        error_of("1 1:1\n1 3:1 2:1 3:2\n", IndexBase::One),
        "line 2: duplicate index 3"
    );
    assert_eq!(
        error_of("1 1:1 1:1\n", IndexBase::Zero),
        "line 1: duplicate index 1"
    );
}

/// Fuzz crash (libsvm_reader): a duplicate of the largest one-based index, 2^63, is the
/// column i64::MAX; naming it as written overflowed (a panic in debug builds, a negative
/// index in the message in release).
#[test]
fn a_duplicate_of_the_largest_index_is_named_as_written() {
    let text = "1 9223372036854775808:1 9223372036854775808:2\n";
    assert_eq!(
        error_of(text, IndexBase::One),
        "line 1: duplicate index 9223372036854775808"
    );
    let text = "1 9223372036854775807:1 5:0 9223372036854775807:2\n";
    assert_eq!(
        error_of(text, IndexBase::Zero),
        "line 1: duplicate index 9223372036854775807"
    );
}

#[test]
fn the_auto_scan_finds_index_zero_only_in_entries() {
    for (text, zero) in [
        ("1 0:1\n", true),
        ("1 1:1\n-1 2:1 00:2\n", true),
        ("1 1:1\t0:5\n", true),
        ("0 1:1\n", false),
        ("0:1 1:1\n", false),
        ("1 qid:0 1:1\n", false),
        ("1 1:1 # 0:1\n#0:1\n", false),
        ("1 10:1 1:0\n", false),
        ("", false),
    ] {
        assert_eq!(has_index_zero(text.as_bytes()), Ok(zero), "{text:?}");
    }
}

#[test]
fn compressed_input_is_decompressed_and_plain_input_kept() {
    use std::io::Write;
    let text = SAMPLE.as_bytes();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text).unwrap();
    let gz = gz.finish().unwrap();
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    bz.write_all(text).unwrap();
    let bz = bz.finish().unwrap();
    let plain = read_all(SAMPLE, IndexBase::One).unwrap();
    for packed in [gz.clone(), bz.clone(), text.to_vec()] {
        let mut source = decompressed(std::io::Cursor::new(packed)).unwrap();
        let mut chunk = Chunk::default();
        Reader::new(&mut source, IndexBase::One, usize::MAX)
            .next_chunk(&mut chunk)
            .unwrap();
        assert_eq!(chunk, plain);
    }
    let truncated = decompressed(std::io::Cursor::new(gz[..gz.len() / 2].to_vec())).unwrap();
    let mut chunk = Chunk::default();
    let error = Reader::new(truncated, IndexBase::One, usize::MAX).next_chunk(&mut chunk);
    assert!(
        matches!(&error, Err(CwError::InvalidInput(m)) if m.starts_with("the gzip data is corrupt")),
        "{error:?}"
    );
}

#[test]
fn nul_bytes_end_the_read_early() {
    let zeros = std::io::repeat(0).take(3 * BLOCK_SIZE as u64);
    let mut chunk = Chunk::default();
    let error = Reader::new(zeros, IndexBase::One, 10).next_chunk(&mut chunk);
    assert_eq!(
        error,
        Err(CwError::InvalidInput(
            "line 1: NUL bytes: this is not a LIBSVM text file".into()
        ))
    );
}

#[test]
fn malformed_lines_name_line_and_problem() {
    let one = IndexBase::One;
    let cases = [
        (
            "1 1:1\n\n-1 3;4\n",
            "line 3: expected index:value, got \"3;4\"",
        ),
        ("1 3:\n", "line 1: expected index:value, got \"3:\""),
        ("1 :4\n", "line 1: expected index:value, got \":4\""),
        ("1 -3:4\n", "line 1: expected index:value, got \"-3:4\""),
        ("1 3:4x\n", "line 1: expected index:value, got \"3:4x\""),
        ("1 3:4:5\n", "line 1: expected index:value, got \"3:4:5\""),
        ("1 3 4\n", "line 1: expected index:value, got \"3\""),
        (
            "1 3:inf\n",
            "line 1: the value must be finite, got \"3:inf\"",
        ),
        (
            "1 3:NaN\n",
            "line 1: the value must be finite, got \"3:NaN\"",
        ),
        (
            "1 3:1e999\n",
            "line 1: the value must be finite, got \"3:1e999\"",
        ),
        (
            "1 0:1\n",
            "line 1: index 0 in \"0:1\", but indices are one-based",
        ),
        (
            "1 99999999999999999999:1\n",
            "line 1: index too large in \"99999999999999999999:1\"",
        ),
        (
            "1 9223372036854775809:1\n",
            "line 1: index too large in \"9223372036854775809:1\"",
        ),
        ("x 1:1\n", "line 1: expected a label, got \"x\""),
        ("1:1 2:2\n", "line 1: expected a label, got \"1:1\""),
        ("nan 1:1\n", "line 1: the label must be finite, got \"nan\""),
        (
            "1 qid:x 1:1\n",
            "line 1: expected qid:integer, got \"qid:x\"",
        ),
        (
            "1 1:1 qid:3\n",
            "line 1: expected index:value, got \"qid:3\"",
        ),
        (
            "1\r\n# c\r\n1 2:\u{e9}\r\n",
            "line 3: expected index:value, got \"2:\u{e9}\"",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(error_of(text, one), message, "{text:?}");
    }
    // The largest index that fits i64 is fine zero-based; one more is not.
    let max = format!("1 {}:1", i64::MAX);
    assert_eq!(
        read_all(&max, IndexBase::Zero).unwrap().indices(),
        &[i64::MAX]
    );
    assert!(
        error_of(&format!("1 {}:1", i64::MAX as u64 + 1), IndexBase::Zero).contains("too large")
    );
    let long = format!("1 {}", "x".repeat(100));
    assert!(error_of(&long, one).ends_with(&format!("\"{}...\"", "x".repeat(MAX_QUOTED))));
}

#[test]
fn lines_across_tiny_blocks_and_chunks() {
    let long_line = (1..=300)
        .map(|j| format!("{j}:{}.25", j % 7))
        .collect::<Vec<_>>()
        .join(" ");
    let text = format!("{SAMPLE}-1 {long_line}\n1 2:2\n\n1 1:1"); // no final newline
    let whole = read_all(&text, IndexBase::One).unwrap();
    assert_eq!(whole.n_rows(), 8);
    for block in [1, 2, 3, 7, 64, 1 << 20] {
        for rows in [1, 2, 3] {
            assert_eq!(
                read_chunked(&text, block, rows),
                whole,
                "block {block}, rows {rows}"
            );
        }
    }
}

#[test]
fn pipeline_equals_single_thread() {
    let text: String = (0..1000)
        .map(|i| {
            format!(
                "{} {}:{i} {}:0.5\n",
                1 - 2 * (i % 2),
                i % 13 + 1,
                i % 29 + 20
            )
        })
        .collect();
    let whole = read_all(&text, IndexBase::One).unwrap();
    let mut all = Chunk::default();
    let mut lines = vec![];
    for_each_chunk(text.as_bytes(), IndexBase::One, 3, |chunk| {
        lines.push(chunk.first_line());
        append(&mut all, chunk);
        Ok(())
    })
    .unwrap();
    assert_eq!(all, whole);
    assert_eq!(lines, (0..334).map(|k| 3 * k + 1).collect::<Vec<_>>());
}

#[test]
fn pipeline_stops_on_either_side_error() {
    let mut text: String = (0..500).map(|_| "1 1:1\n").collect();
    text.push_str("1 1:x\n");
    text.extend((0..500).map(|_| "1 1:1\n"));
    let mut rows = 0;
    let parse_error = for_each_chunk(text.as_bytes(), IndexBase::One, 7, |chunk| {
        rows += chunk.n_rows();
        Ok(())
    });
    assert_eq!(
        parse_error.unwrap_err().to_string(),
        "line 501: expected index:value, got \"1:x\""
    );
    assert_eq!(rows, 497);
    let stop = CwError::InvalidInput("stop".into());
    let consumer_error = for_each_chunk(text.as_bytes(), IndexBase::One, 7, |chunk| {
        if chunk.first_line() > 20 {
            Err(stop.clone())
        } else {
            Ok(())
        }
    });
    assert_eq!(consumer_error, Err(stop));
}

#[test]
fn read_errors_are_io_errors() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(ErrorKind::PermissionDenied, "denied"))
        }
    }
    let mut chunk = Chunk::default();
    let error = Reader::new(Failing, IndexBase::One, 10).next_chunk(&mut chunk);
    assert_eq!(
        error,
        Err(CwError::Io(ErrorKind::PermissionDenied, "denied".into()))
    );
}

#[test]
fn a_dead_parser_is_an_error_not_the_end_of_input() {
    struct Panicking;
    impl Read for Panicking {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            panic!("a bug in a reader")
        }
    }
    let (mut stream, job) = ChunkStream::new(Panicking, IndexBase::One, LabelField::Required, 10);
    assert!(thread::spawn(job).join().is_err());
    assert!(matches!(stream.next_chunk(), Err(CwError::Io(..))));
    assert_eq!(stream.next_chunk(), Ok(None));
}

/// Random bytes from an alphabet rich in the format's own characters never panic, and give
/// either rows that pass validation or a line-numbered error.
#[test]
fn plain_decimals_parse_to_the_correctly_rounded_value() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for _ in 0..200_000 {
        let digits: String = (0..1 + next(20))
            .map(|_| (b'0' + next(10) as u8) as char)
            .collect();
        let point = next(digits.len() as u64 + 2) as usize;
        let mut text = match next(3) {
            0 => "-".to_string(),
            1 => "+".to_string(),
            _ => String::new(),
        };
        if point <= digits.len() {
            text.push_str(&digits[..point]);
            text.push('.');
            text.push_str(&digits[point..]);
        } else {
            text.push_str(&digits);
        }
        let want: f64 = text.parse().unwrap();
        if let Some((got, used)) = plain_decimal(text.as_bytes()) {
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
            assert_eq!(used, text.len(), "{text}");
        }
    }
    assert_eq!(plain_decimal(b"0.0123 "), Some((0.0123, 6)));
    assert_eq!(plain_decimal(b"-0"), Some((-0.0, 2)));
    for other in [
        &b"1e5"[..],
        b".",
        b"-",
        b"inf",
        b"12345678901234567890",
        b"9007199254740993",
    ] {
        assert_eq!(
            plain_decimal(other),
            None,
            "{}",
            String::from_utf8_lossy(other)
        );
    }
}

/// The word-wise paths agree with the byte-wise ones whatever follows the number: decimals of
/// up to 16 digits and the word's leading digits, then bytes that stop, continue or corrupt
/// it (a second point, an exponent, bytes ≥ 0xFA whose + 6 carries).
#[test]
fn word_wise_digits_and_decimals_match_the_byte_wise_ones() {
    let mut uniform = crate::test_rng::uniform(0x1234_5678_9ABC_DEF1);
    let mut next = |n: u64| ((uniform() + 1.0) / 2.0 * n as f64) as u64;
    let tail_bytes = b"0123456789 .:eE-+#\n\t\xfa\xff\x2f\x3a";
    for _ in 0..300_000 {
        let mut text = match next(4) {
            0 => b"-".to_vec(),
            1 => b"+".to_vec(),
            _ => Vec::new(),
        };
        text.extend((0..next(9)).map(|_| b'0' + next(10) as u8));
        if next(3) > 0 {
            text.push(b'.');
            text.extend((0..next(9)).map(|_| b'0' + next(10) as u8));
        }
        text.extend((0..next(12)).map(|_| tail_bytes[next(tail_bytes.len() as u64) as usize]));
        assert_eq!(
            plain_decimal(&text),
            scalar_decimal(&text),
            "{}",
            String::from_utf8_lossy(&text)
        );
        if let Some(eight) = text.get(..8) {
            let word = u64::from_le_bytes(eight.try_into().unwrap());
            let n = eight.iter().take_while(|b| b.is_ascii_digit()).count();
            let value = eight[..n]
                .iter()
                .fold(0u64, |v, &b| 10 * v + u64::from(b - b'0'));
            let want = (n, if n < 8 { value } else { 0 });
            assert_eq!(leading_digits(word), want, "{eight:?}");
        }
    }
    assert_eq!(plain_decimal(b"0.033690 12:0.5"), Some((0.03369, 8)));
    assert_eq!(plain_decimal(b"-12.5.3 xxxxxx"), Some((-12.5, 5)));
    assert_eq!(plain_decimal(b"+1 7:0.25\n-1 8:1"), Some((1.0, 2)));
    assert_eq!(plain_decimal(b"1.5e3 xxxxxxxxx"), None);
}

#[test]
fn never_panics_on_garbage() {
    let alphabet = b"0123456789:.-+eE#qid \t\r\n\x0bxinfa\xff";
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let len = (next() % 60) as usize;
        let text: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        for base in [IndexBase::Zero, IndexBase::One] {
            let mut reader = Reader::new(&text[..], base, 4).with_block_size(5);
            let mut chunk = Chunk::default();
            loop {
                match reader.next_chunk(&mut chunk) {
                    Ok(true) => {
                        let m = chunk.matrix(chunk.n_features());
                        assert!(m.validate(chunk.n_features()).is_ok(), "{text:?}");
                    }
                    Ok(false) => break,
                    Err(e) => {
                        assert!(e.to_string().starts_with("line "), "{e}");
                        break;
                    }
                }
            }
        }
    }
}

/// Property tests: random valid files parse back to the rows they were written from, and
/// random mutations of them give rows or a line-numbered error; every way of reading agrees.
mod props {
    use super::*;
    use proptest::collection::{btree_map, vec};
    use proptest::prelude::*;

    /// One row and how its line is spelled.
    #[derive(Clone, Debug)]
    struct Line {
        label: f64,
        qid: Option<i64>,
        /// (zero-based index, value), sorted by index.
        entries: Vec<(u64, f64)>,
        /// The order the entries are written in (a permutation).
        order: Vec<usize>,
        /// Separator, leading blanks, ending (comment or blanks), exponent notation, an
        /// explicit '+', and blank or comment lines written before it.
        separator: &'static str,
        lead: &'static str,
        trailer: &'static str,
        exponent: bool,
        plus: bool,
        before: Vec<&'static str>,
    }

    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-4000i32..4000).prop_map(|k| f64::from(k) / 16.0),
            any::<f64>().prop_filter("finite", |x| x.is_finite()),
            Just(-0.0),
            Just(5e-324),
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
        ]
    }

    fn line() -> impl Strategy<Value = Line> {
        let entries = btree_map(0u64..60, value(), 0..7);
        (
            value(),
            prop::option::of(any::<i64>()),
            entries.prop_flat_map(|entries| {
                let n = entries.len();
                (
                    Just(entries.into_iter().collect::<Vec<_>>()),
                    Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
                )
            }),
            prop::sample::select(&[" ", "\t", "  ", " \t ", "\x0b", "\x0c"][..]),
            prop::sample::select(&["", " ", "\t "][..]),
            prop::sample::select(&["", " ", " # a comment", "#c 1:2", "\t#"][..]),
            any::<(bool, bool)>(),
            vec(
                prop::sample::select(&["", "   ", "# comment 1:1", "\t# x", " \r"][..]),
                0..2,
            ),
        )
            .prop_map(
                |(label, qid, (entries, order), separator, lead, trailer, flags, before)| Line {
                    label,
                    qid,
                    entries,
                    order,
                    separator,
                    lead,
                    trailer,
                    exponent: flags.0,
                    plus: flags.1,
                    before,
                },
            )
    }

    /// A file: its lines, the index base it is written in, CRLF endings, a final newline.
    fn file() -> impl Strategy<Value = (Vec<Line>, IndexBase, bool, bool)> {
        (
            vec(line(), 0..8),
            prop::bool::ANY.prop_map(|zero| {
                if zero {
                    IndexBase::Zero
                } else {
                    IndexBase::One
                }
            }),
            any::<bool>(),
            any::<bool>(),
        )
    }

    fn number(x: f64, line: &Line) -> String {
        let sign = if line.plus && x.is_sign_positive() {
            "+"
        } else {
            ""
        };
        if line.exponent {
            format!("{sign}{x:e}")
        } else {
            format!("{sign}{x}")
        }
    }

    fn write(lines: &[Line], base: IndexBase, crlf: bool, final_newline: bool) -> String {
        let eol = if crlf { "\r\n" } else { "\n" };
        let offset = u64::from(base == IndexBase::One);
        let mut text = String::new();
        for line in lines {
            for extra in &line.before {
                text.push_str(extra);
                text.push_str(eol);
            }
            text.push_str(line.lead);
            text.push_str(&number(line.label, line));
            if let Some(q) = line.qid {
                text.push_str(&format!("{}qid:{q}", line.separator));
            }
            for &k in &line.order {
                let (j, x) = line.entries[k];
                let x = number(x, line);
                text.push_str(&format!("{}{}:{x}", line.separator, j + offset));
            }
            text.push_str(line.trailer);
            text.push_str(eol);
        }
        if !final_newline && text.ends_with(eol) {
            text.truncate(text.len() - eol.len());
        }
        text
    }

    /// The rows a reader must give for `lines`: ((label, qid), [(index, value)]) as bits.
    type Rows = Vec<((u64, i64), Vec<(i64, u64)>)>;

    fn expected(lines: &[Line]) -> Rows {
        lines
            .iter()
            .map(|l| {
                let entries = l.entries.iter().map(|&(j, x)| (j as i64, x.to_bits()));
                ((l.label.to_bits(), l.qid.unwrap_or(0)), entries.collect())
            })
            .collect()
    }

    fn rows_of(chunk: &Chunk) -> Rows {
        (0..chunk.n_rows())
            .map(|i| {
                let (start, end) = (chunk.indptr[i] as usize, chunk.indptr[i + 1] as usize);
                let entries = (start..end).map(|k| (chunk.indices[k], chunk.values[k].to_bits()));
                let qid = chunk.qids().map_or(0, |q| q[i]);
                ((chunk.labels[i].to_bits(), qid), entries.collect())
            })
            .collect()
    }

    /// The whole text read at once, in chunks of `rows` from blocks of `block` bytes, and
    /// through the pipeline: all three must agree (same rows or same error).
    fn read_every_way(
        text: &[u8],
        base: IndexBase,
        block: usize,
        rows: usize,
    ) -> Result<Chunk, CwError> {
        let mut whole = Chunk::default();
        let whole = Reader::new(text, base, usize::MAX)
            .next_chunk(&mut whole)
            .map(|_| whole);
        let mut reader = Reader::new(text, base, rows).with_block_size(block);
        let (mut chunked, mut chunk) = (Chunk::default(), Chunk::default());
        let chunked = loop {
            match reader.next_chunk(&mut chunk) {
                Ok(true) => append(&mut chunked, &chunk),
                Ok(false) => break Ok(chunked),
                Err(e) => break Err(e),
            }
        };
        let mut piped = Chunk::default();
        let piped = for_each_chunk(text, base, rows, |chunk| {
            append(&mut piped, chunk);
            Ok(())
        })
        .map(|()| piped);
        match &whole {
            // An empty read leaves the first line unset.
            Ok(w) if w.n_rows() == 0 => {
                assert_eq!(chunked.map(|c| c.n_rows()), Ok(0));
                assert_eq!(piped.map(|c| c.n_rows()), Ok(0));
            }
            _ => {
                assert_eq!(&chunked, &whole);
                assert_eq!(&piped, &whole);
            }
        }
        whole
    }

    proptest! {
        #[test]
        fn written_rows_read_back(
            (lines, base, crlf, final_newline) in file(),
            block in 1usize..64,
            rows in 1usize..5,
        ) {
            let text = write(&lines, base, crlf, final_newline);
            let chunk = read_every_way(text.as_bytes(), base, block, rows).unwrap();
            prop_assert_eq!(rows_of(&chunk), expected(&lines));
            prop_assert_eq!(chunk.qids().is_some(), lines.iter().any(|l| l.qid.is_some()));
            let widest = lines.iter().flat_map(|l| &l.entries).map(|e| e.0 as usize + 1).max();
            prop_assert_eq!(chunk.n_features(), widest.unwrap_or(0));
            // "auto" reads a one-based file (no index 0 written) as one-based.
            if base == IndexBase::One {
                let whole = super::super::read_all(text.as_bytes(), None, LabelField::Required);
                prop_assert_eq!(whole.unwrap(), (chunk, base));
            }
        }

        #[test]
        fn mutated_files_give_rows_or_a_line_numbered_error(
            (lines, base, crlf, final_newline) in file(),
            mutations in vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(
                &b"0123456789:.-+eE#qid \t\r\n\x0bxinf\xff"[..])), 1..6),
            block in 1usize..16,
            rows in 1usize..4,
        ) {
            let mut text = write(&lines, base, crlf, final_newline).into_bytes();
            for (at, kind, byte) in mutations {
                let k = at.index(text.len() + 1);
                match kind {
                    0 => text.insert(k, byte),
                    _ if k == text.len() => text.push(byte),
                    1 => text[k] = byte,
                    _ => {
                        text.remove(k);
                    }
                }
            }
            let n_lines = text.iter().filter(|&&b| b == b'\n').count() + 1;
            for base in [IndexBase::Zero, IndexBase::One] {
                match read_every_way(&text, base, block, rows) {
                    Ok(chunk) => {
                        let m = chunk.n_features();
                        prop_assert!(chunk.matrix(m).validate(m).is_ok());
                    }
                    Err(e) => {
                        let message = e.to_string();
                        let line: usize = message
                            .strip_prefix("line ")
                            .and_then(|rest| rest.split(':').next())
                            .and_then(|k| k.parse().ok())
                            .unwrap_or(0);
                        prop_assert!((1..=n_lines).contains(&line), "{}", message);
                    }
                }
            }
        }
    }
}

/// The background reading of a file: the same rows as a reader on the calling thread, the index
/// base decided by the scan, errors naming the file, and a pipe refused for "auto".
#[test]
fn files_read_on_a_background_thread() {
    fn result<T>(mut pending: Pending<T>) -> Result<T, CwError> {
        loop {
            if let Some(outcome) = pending.poll(std::time::Duration::from_millis(10)) {
                return outcome.expect("no panic");
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("cwrs-libsvm-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (one, zero, bad) = (dir.join("one"), dir.join("zero"), dir.join("bad"));
    std::fs::write(&one, SAMPLE).unwrap();
    std::fs::write(&zero, "1 0:1 2:2\n-1 1:3\n").unwrap();
    std::fs::write(&bad, "1 1:1\n1 2:x\n").unwrap();

    // The whole file as one chunk, and what "auto" chose (in one pass: no index 0 in `one`).
    let whole_file = |path: &PathBuf, zero_based| {
        let chunks =
            result(stream_file(path.clone(), zero_based, LabelField::Required, None).unwrap())?;
        let chunk = chunks
            .poll(std::time::Duration::from_secs(60))
            .unwrap()?
            .unwrap();
        assert_eq!(chunks.poll(std::time::Duration::ZERO).unwrap(), Ok(None));
        Ok::<_, CwError>((chunk, chunks.base()))
    };
    let whole = read_all(SAMPLE, IndexBase::One).unwrap();
    assert_eq!(whole_file(&one, None), Ok((whole.clone(), IndexBase::One)));
    assert_eq!(whole_file(&zero, None).unwrap().1, IndexBase::Zero);
    assert_eq!(whole_file(&zero, Some(true)).unwrap().1, IndexBase::Zero);
    assert_eq!(whole_file(&one, Some(false)).unwrap().1, IndexBase::One);
    // Chunks: "auto" decided first, by a scan.
    let zero_chunks =
        result(stream_file(zero.clone(), None, LabelField::Required, Some(1)).unwrap());
    assert_eq!(zero_chunks.unwrap().base(), IndexBase::Zero);

    let chunks =
        result(stream_file(one.clone(), None, LabelField::Required, Some(2)).unwrap()).unwrap();
    assert_eq!(chunks.base(), IndexBase::One);
    let mut all = Chunk::default();
    while let Some(chunk) = loop {
        if let Some(next) = chunks.poll(std::time::Duration::from_millis(10)) {
            break next.unwrap();
        }
    } {
        append(&mut all, &chunk);
        chunks.recycle(chunk);
    }
    assert_eq!(all, whole);

    let error = whole_file(&bad, Some(false)).unwrap_err();
    let message = format!(
        "{}: line 2: expected index:value, got \"2:x\"",
        bad.display()
    );
    assert_eq!(error, CwError::InvalidInput(message));
    let missing = whole_file(&dir.join("missing"), None).unwrap_err();
    assert!(
        matches!(missing, CwError::Io(ErrorKind::NotFound, _)),
        "{missing:?}"
    );
    let pipe =
        result(stream_file("/dev/null".into(), None, LabelField::Required, Some(1)).unwrap());
    let pipe = pipe.map(|_| ()).unwrap_err();
    assert!(
        pipe.to_string().contains("pass zero_based=True or False"),
        "{pipe}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_optional_label_field_may_be_absent_or_a_placeholder() {
    let text = "1:0.5 3:2\n? 2:1\n-1 1:1\nqid:4 2:3\n?\n\n# comment\n7 # only a label\n";
    let chunk = read_unlabeled(text).unwrap();
    let labels = &chunk.labels;
    assert_eq!(labels.len(), 6);
    assert!(labels[0].is_nan() && labels[1].is_nan() && labels[3].is_nan() && labels[4].is_nan());
    assert_eq!((labels[2], labels[5]), (-1.0, 7.0));
    assert_eq!(chunk.indices, [0, 2, 1, 0, 1]);
    assert_eq!(chunk.values, [0.5, 2.0, 1.0, 1.0, 3.0]);
    assert_eq!(chunk.indptr, [0, 2, 3, 4, 5, 5, 5]);
    assert_eq!(chunk.qids, [0, 0, 0, 4, 0, 0]);
    assert_eq!(chunk.lines, [1, 2, 3, 4, 5, 8]);
    // Labelled lines read as with a required label; a malformed feature is still an error.
    assert_eq!(
        read_unlabeled(SAMPLE).unwrap(),
        read_all(SAMPLE, IndexBase::One).unwrap()
    );
    let error = read_unlabeled("? 1:0.5\n? 2:x\n").unwrap_err().to_string();
    assert!(error.contains("line 2: expected index:value"), "{error}");
    // A required label field stays required.
    assert!(error_of("1:0.5 3:2\n", IndexBase::One).contains("expected a label"));
}
