//! Compressed input (gzip, bzip2, xz), recognised by its first bytes and decoded on the fly.

use std::io::{ErrorKind, Read};

/// The compressed formats read transparently, told apart by their first bytes.
const COMPRESSED: [(&[u8], &str); 3] = [
    (&[0x1f, 0x8b], "gzip"),
    (b"BZh", "bzip2"),
    (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz"),
];

/// `source` decompressed when it starts with the magic bytes of gzip, bzip2 or xz (as files
/// written by `gzip`, `bzip2`, `xz` or Python's modules of those names), else as it is. Reads
/// the first few bytes, so it works on pipes too. Corrupt or truncated compressed data gives
/// `ErrorKind::InvalidData` errors that name the format.
pub fn decompressed<R: Read + Send + 'static>(
    mut source: R,
) -> std::io::Result<Box<dyn Read + Send>> {
    let mut head = [0u8; 6];
    let mut n = 0;
    while n < head.len() {
        match source.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let whole = std::io::Cursor::new(head[..n].to_vec()).chain(source);
    let format = COMPRESSED
        .iter()
        .find(|(magic, _)| head[..n].starts_with(magic))
        .map(|&(_, name)| name);
    Ok(match format {
        Some(name @ "gzip") => Box::new(Decoding::new(
            flate2::read::MultiGzDecoder::new(whole),
            name,
        )),
        Some(name @ "bzip2") => {
            Box::new(Decoding::new(bzip2::read::MultiBzDecoder::new(whole), name))
        }
        Some(name) => Box::new(Decoding::new(lzma_rust2::XzReader::new(whole, true), name)),
        None => Box::new(whole),
    })
}

/// A decoder whose format errors say which format was being decoded.
struct Decoding<D> {
    decoder: D,
    format: &'static str,
}

impl<D: Read> Decoding<D> {
    fn new(decoder: D, format: &'static str) -> Self {
        Decoding { decoder, format }
    }
}

impl<D: Read> Read for Decoding<D> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.decoder.read(buf).map_err(|e| match e.kind() {
            ErrorKind::InvalidData | ErrorKind::InvalidInput | ErrorKind::UnexpectedEof => {
                std::io::Error::new(
                    ErrorKind::InvalidData,
                    format!("the {} data is corrupt or truncated ({e})", self.format),
                )
            }
            _ => e,
        })
    }
}
