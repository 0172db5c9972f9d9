//! The index base of a file: whether its indices count from 0, as scikit-learn's
//! `zero_based="auto"` decides it.

use std::io::Read;

use super::parse::is_blank;
use super::reader::read_some;
use super::BLOCK_SIZE;
use crate::error::CwError;

/// Whether some `index:value` entry of the LIBSVM text in `source` has the index 0, outside
/// comments: the test of scikit-learn's `zero_based="auto"` (zero-based exactly when an index 0
/// occurs), as a byte scan that stops at the first one and parses nothing else. Malformed lines
/// are left to the reader.
pub fn has_index_zero<R: Read>(mut source: R) -> Result<bool, CwError> {
    #[derive(PartialEq)]
    enum Token {
        Between,
        /// A token of zeros so far, not the label.
        Zeros,
        Other,
    }
    let mut buf = vec![0; BLOCK_SIZE];
    let (mut comment, mut label, mut token) = (false, true, Token::Between);
    loop {
        let n = read_some(&mut source, &mut buf)?;
        if n == 0 {
            return Ok(false);
        }
        for &b in &buf[..n] {
            if b == b'\n' {
                (comment, label, token) = (false, true, Token::Between);
            } else if comment {
            } else if b == b'#' {
                comment = true;
            } else if is_blank(b) {
                label &= token == Token::Between;
                token = Token::Between;
            } else {
                token = match token {
                    Token::Between if b == b'0' && !label => Token::Zeros,
                    Token::Zeros if b == b'0' => Token::Zeros,
                    Token::Zeros if b == b':' => return Ok(true),
                    _ => Token::Other,
                };
            }
        }
    }
}
