//! One line of LIBSVM text parsed into a [`Chunk`]: the hot path, with no allocation per line.

use super::{out_of_memory, try_push, Chunk, IndexBase, LabelField};
use crate::error::CwError;

/// Longest token quoted in an error message.
pub(super) const MAX_QUOTED: usize = 40;

/// Space, tab, CR, VT and FF: the whitespace of Python's `bytes.split()`, as scikit-learn's
/// reader splits on it; a newline ends the line.
#[inline(always)]
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

#[inline(always)]
fn is_delimiter(b: u8) -> bool {
    is_blank(b) || b == b'\n' || b == b'#'
}

/// 10^0 ..= 10^22, all exact in f64.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `[+-]digits[.digits]` (the usual spelling of labels and values) as (value, bytes used),
/// when its digits make an integer m ≤ 2^53 and it has at most 22 decimals: then m and 10^k
/// are exact and one division rounds correctly (Clinger's fast path), the same bits as a full
/// parser. `None` for anything else (exponents, long mantissas, inf, nan, malformed), which the
/// full parser then takes.
#[inline(always)]
pub(super) fn plain_decimal(bytes: &[u8]) -> Option<(f64, usize)> {
    short_decimal(bytes).or_else(|| scalar_decimal(bytes))
}

/// [`plain_decimal`] a byte at a time: the general case, and the reference of the word-wise
/// [`short_decimal`].
#[inline(always)]
pub(super) fn scalar_decimal(bytes: &[u8]) -> Option<(f64, usize)> {
    let negative = bytes.first() == Some(&b'-');
    let mut at = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    let (mut mantissa, mut n_digits, mut decimals) = (0u64, 0u32, 0usize);
    let mut in_fraction = false;
    loop {
        match bytes.get(at) {
            Some(&b @ b'0'..=b'9') => {
                // 19 digits cannot overflow a u64.
                n_digits += 1;
                if n_digits > 19 {
                    return None;
                }
                mantissa = mantissa * 10 + u64::from(b - b'0');
                decimals += usize::from(in_fraction);
            }
            Some(b'.') if !in_fraction => in_fraction = true,
            _ => break,
        }
        at += 1;
    }
    if n_digits == 0 || matches!(bytes.get(at), Some(b'e' | b'E')) || mantissa > 1 << 53 {
        return None;
    }
    let value = mantissa as f64 / *POWERS_OF_TEN.get(decimals)?;
    Some((if negative { -value } else { value }, at))
}

/// `[+-]d{1,7}[.d{1,7}]` not followed by an exponent, read eight bytes at a time (a third of
/// the instructions of [`scalar_decimal`] on values like `0.033690`): the same (value, bytes
/// used) as [`scalar_decimal`], whose fast path it is (at most 14 digits, so the mantissa is
/// below 2^53 and one division rounds correctly). `None` for anything else, including fewer
/// than eight bytes left to read at either group of digits.
#[inline(always)]
fn short_decimal(bytes: &[u8]) -> Option<(f64, usize)> {
    let negative = bytes.first() == Some(&b'-');
    let sign = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    // Values in [0, 1) (most values of normalised rows) skip the whole part's word.
    let (n_whole, whole) = if bytes.get(sign..sign + 2) == Some(b"0.") {
        (1, 0)
    } else {
        leading_digits(word_at(bytes, sign)?)
    };
    if !(1..8).contains(&n_whole) {
        return None;
    }
    let mut at = sign + n_whole;
    let (mut mantissa, mut decimals) = (whole, 0);
    if bytes.get(at) == Some(&b'.') {
        let (n_fraction, fraction) = leading_digits(word_at(bytes, at + 1)?);
        if !(1..8).contains(&n_fraction) {
            return None;
        }
        mantissa = mantissa * POWERS_OF_TEN_U64[n_fraction] + fraction;
        decimals = n_fraction;
        at += 1 + n_fraction;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        return None;
    }
    let value = mantissa as f64 / POWERS_OF_TEN[decimals];
    Some((if negative { -value } else { value }, at))
}

/// 10^0 ..= 10^7.
const POWERS_OF_TEN_U64: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The eight bytes at `at` as a little-endian word (the first byte lowest), if there are eight.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let eight: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(eight))
}

/// How many of the bytes of `word` (in text order, as [`word_at`] reads them) are decimal
/// digits before the first one that is not (0 ..= 8), and, below 8, their value: SWAR, with no
/// branch per digit. The bytes after the first non-digit play no part.
#[inline(always)]
pub(super) fn leading_digits(word: u64) -> (usize, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_NIBBLES: u64 = 0xF0 * ONES;
    // A byte is a digit (0x30 ..= 0x39) when its high nibble is 3 and stays 3 after adding 6.
    // Adding 6 carries into the next byte only from a byte ≥ 0xFA, a non-digit, so every byte
    // up to the first non-digit is classified right.
    let off = ((word & HIGH_NIBBLES) ^ (0x30 * ONES))
        | ((word.wrapping_add(0x06 * ONES) & HIGH_NIBBLES) ^ (0x30 * ONES));
    let n = (off.trailing_zeros() / 8) as usize;
    if n == 0 || n == 8 {
        return (n, 0);
    }
    // The n digits moved to the top, zero bytes (read as leading zeros) below them, then
    // combined in pairs, fours and eights.
    let digits = (word << (8 * (8 - n))) & (0x0F * ONES);
    let pairs = (digits.wrapping_mul(10 << 8 | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let fours = (pairs.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    (n, fours.wrapping_mul(10_000 << 32 | 1) >> 32)
}

/// A cursor over one line; `bytes` starts at the line and may run on past its newline. The
/// error paths take it by value, so that the hot loop can keep it in registers.
#[derive(Clone, Copy)]
struct Line<'a> {
    bytes: &'a [u8],
    at: usize,
    number: u64,
}

impl Line<'_> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Skips blanks; true when no token is left (newline, end of input or a comment).
    #[inline(always)]
    fn at_end(&mut self) -> bool {
        while self.peek().is_some_and(is_blank) {
            self.at += 1;
        }
        matches!(self.peek(), None | Some(b'\n' | b'#'))
    }

    /// The bytes consumed through the end of the line, including its newline.
    #[inline(always)]
    fn finish(&self) -> usize {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        rest.iter()
            .position(|&b| b == b'\n')
            .map_or(self.bytes.len(), |k| self.at + k + 1)
    }

    #[inline(always)]
    fn rest(&self) -> &[u8] {
        self.bytes.get(self.at..).unwrap_or_default()
    }

    /// A float ending at a delimiter; the cursor moves past it only on success.
    #[inline(always)]
    fn float(&mut self) -> Option<f64> {
        let rest = self.rest();
        let (x, n) = match plain_decimal(rest) {
            Some(parsed) => parsed,
            None => fast_float2::parse_partial::<f64, _>(rest).ok()?,
        };
        let end = self.at + n;
        if self.bytes.get(end).is_some_and(|&b| !is_delimiter(b)) {
            return None;
        }
        self.at = end;
        Some(x)
    }

    /// Decimal digits as u64: `None` when there are none, `Some(None)` on overflow.
    #[inline(always)]
    fn digits(&mut self) -> Option<Option<u64>> {
        if let Some(word) = word_at(self.bytes, self.at) {
            match leading_digits(word) {
                (0, _) => return None,
                (8, _) => {}
                (n, value) => {
                    self.at += n;
                    return Some(Some(value));
                }
            }
        }
        let start = self.at;
        let mut n = Some(0u64);
        while let Some(b @ b'0'..=b'9') = self.peek() {
            n = n
                .and_then(|n| n.checked_mul(10))
                .and_then(|n| n.checked_add(u64::from(b - b'0')));
            self.at += 1;
        }
        (self.at > start).then_some(n)
    }

    /// The token starting at `start`, quoted and shortened for a message.
    #[cold]
    fn quoted(self, start: usize) -> String {
        let rest = self.bytes.get(start..).unwrap_or_default();
        let len = rest
            .iter()
            .position(|&b| is_delimiter(b))
            .unwrap_or(rest.len());
        let token = rest.get(..len.min(MAX_QUOTED)).unwrap_or_default();
        let shown = String::from_utf8_lossy(token);
        if len > MAX_QUOTED {
            format!("\"{}...\"", shown.escape_debug())
        } else {
            format!("\"{}\"", shown.escape_debug())
        }
    }

    #[cold]
    fn error(self, what: impl std::fmt::Display) -> CwError {
        CwError::InvalidInput(format!("line {}: {what}", self.number))
    }

    #[inline(always)]
    fn label(&mut self) -> Result<f64, CwError> {
        let start = self.at;
        match self.float() {
            Some(y) if y.is_finite() => Ok(y),
            Some(_) => Err(self.error(format!(
                "the label must be finite, got {}",
                self.quoted(start)
            ))),
            None => Err(self.error(format!("expected a label, got {}", self.quoted(start)))),
        }
    }

    /// The label of a line whose label field may be absent ([`LabelField::Optional`]): a
    /// number is the label; a token with a colon (the first `index:value`, or `qid:`) is no
    /// label field, and stays; any other token is a placeholder, skipped. NaN for both.
    #[inline(always)]
    fn optional_label(&mut self) -> f64 {
        if let Some(y) = self.float() {
            return y;
        }
        let rest = self.rest();
        let token = rest
            .iter()
            .position(|&b| is_delimiter(b))
            .unwrap_or(rest.len());
        if !rest.get(..token).unwrap_or_default().contains(&b':') {
            self.at += token;
        }
        f64::NAN
    }

    /// `qid:N` (N a signed integer), if that is the next token.
    #[inline(always)]
    fn qid(&mut self) -> Result<Option<i64>, CwError> {
        let start = self.at;
        if !self.rest().starts_with(b"qid:") {
            return Ok(None);
        }
        self.at += 4;
        let negative = self.peek() == Some(b'-');
        self.at += usize::from(negative);
        let value = self.digits().flatten().and_then(|n| {
            let n = i64::try_from(n).ok()?;
            Some(if negative { -n } else { n })
        });
        match value {
            Some(q) if self.peek().is_none_or(is_delimiter) => Ok(Some(q)),
            _ => Err(self.error(format!("expected qid:integer, got {}", self.quoted(start)))),
        }
    }

    /// One `index:value` pair, the index made zero-based.
    #[inline(always)]
    fn feature(&mut self, base: IndexBase) -> Result<(i64, f64), CwError> {
        let start = self.at;
        let malformed =
            |line: Self| line.error(format!("expected index:value, got {}", line.quoted(start)));
        let index = self.digits().ok_or_else(|| malformed(*self))?;
        if self.peek() != Some(b':') {
            return Err(malformed(*self));
        }
        self.at += 1;
        let column = match (index, base) {
            (Some(0), IndexBase::One) => {
                return Err(self.error(format!(
                    "index 0 in {}, but indices are one-based",
                    self.quoted(start)
                )))
            }
            (j, IndexBase::One) => j.map(|j| j - 1),
            (j, IndexBase::Zero) => j,
        };
        let column = column
            .and_then(|j| i64::try_from(j).ok())
            .ok_or_else(|| self.error(format!("index too large in {}", self.quoted(start))))?;
        match self.float() {
            Some(x) if x.is_finite() => Ok((column, x)),
            Some(_) => Err(self.error(format!(
                "the value must be finite, got {}",
                self.quoted(start)
            ))),
            None => Err(malformed(*self)),
        }
    }
}

/// Parses the line at the start of `bytes` into `chunk` (nothing for a blank or comment line);
/// returns the bytes consumed, its newline included.
pub(super) fn parse_line(
    bytes: &[u8],
    number: u64,
    base: IndexBase,
    labels: LabelField,
    chunk: &mut Chunk,
    scratch: &mut Vec<(i64, f64)>,
) -> Result<usize, CwError> {
    let mut line = Line {
        bytes,
        at: 0,
        number,
    };
    if line.at_end() {
        return Ok(line.finish());
    }
    let label = match labels {
        LabelField::Required => line.label()?,
        LabelField::Optional => line.optional_label(),
    };
    let qid = if line.at_end() { None } else { line.qid()? };
    let row_start = chunk.indices.len();
    let (mut sorted, mut previous) = (true, -1);
    while !line.at_end() {
        let (column, value) = line.feature(base)?;
        sorted &= column > previous;
        previous = column;
        try_push(&mut chunk.indices, column)?;
        try_push(&mut chunk.values, value)?;
    }
    let indices = chunk.indices.get_mut(row_start..).unwrap_or_default();
    let values = chunk.values.get_mut(row_start..).unwrap_or_default();
    if !sorted {
        sort_row(indices, values, scratch)?;
        if let Some(w) = indices.windows(2).find(|w| w[0] == w[1]) {
            // As written in the file (one more than i64::MAX for the largest one-based index).
            let shown = w[0] as u64 + u64::from(base == IndexBase::One);
            return Err(line.error(format!("duplicate index {shown}")));
        }
    }
    if let Some(&last) = indices.last() {
        chunk.n_features = chunk.n_features.max((last as usize).saturating_add(1));
    }
    let row = chunk.labels.len();
    match qid {
        Some(q) => {
            if chunk.qids.is_empty() {
                chunk
                    .qids
                    .try_reserve(row + 1)
                    .map_err(|_| out_of_memory(row + 1))?;
                chunk.qids.resize(row, 0);
            }
            try_push(&mut chunk.qids, q)?;
        }
        None if !chunk.qids.is_empty() => try_push(&mut chunk.qids, 0)?,
        None => {}
    }
    try_push(&mut chunk.labels, label)?;
    try_push(&mut chunk.lines, number)?;
    try_push(&mut chunk.indptr, chunk.indices.len() as i64)?;
    Ok(line.finish())
}

/// Sorts a row's entries by index (the rare path: lines are almost always sorted already).
fn sort_row(
    indices: &mut [i64],
    values: &mut [f64],
    scratch: &mut Vec<(i64, f64)>,
) -> Result<(), CwError> {
    scratch.clear();
    scratch
        .try_reserve(indices.len())
        .map_err(|_| out_of_memory(indices.len()))?;
    scratch.extend(indices.iter().copied().zip(values.iter().copied()));
    scratch.sort_unstable_by_key(|&(j, _)| j);
    for ((j, x), &(sj, sx)) in indices
        .iter_mut()
        .zip(values.iter_mut())
        .zip(scratch.iter())
    {
        (*j, *x) = (sj, sx);
    }
    Ok(())
}
