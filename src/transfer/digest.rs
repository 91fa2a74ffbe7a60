//! SHA-256 checksums of what travels, and how HTTP carries them.
//!
//! The header is `Repr-Digest` of RFC 9530 (`sha-256=:<base64>:`), the
//! standard field for the digest of a whole representation: on a `PUT` the
//! client says what it sends, and on every answer the server says what it
//! received, has, or sends. Other algorithms in the field are ignored; a
//! field that names `sha-256` with a malformed value is an error, not
//! something to skip.

use std::fmt;
use std::io::{self, Read, Write};
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use super::TransferError;

/// The header that carries a digest (RFC 9530).
pub const DIGEST_HEADER: &str = "repr-digest";

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest(pub [u8; 32]);

impl Sha256Digest {
    /// The value of a `Repr-Digest` field naming this digest.
    pub fn header_value(&self) -> String {
        format!(
            "sha-256=:{}:",
            base64::engine::general_purpose::STANDARD.encode(self.0)
        )
    }

    /// The digest named `sha-256` in a `Repr-Digest` field; `Ok(None)`
    /// when the field names only other algorithms.
    pub fn from_header(value: &str) -> Result<Option<Sha256Digest>, String> {
        for member in value.split(',') {
            let Some((key, rest)) = member.trim().split_once('=') else {
                continue;
            };
            if !key.trim().eq_ignore_ascii_case("sha-256") {
                continue;
            }
            // A byte sequence (RFC 8941): base64 between colons, possibly
            // followed by parameters.
            let rest = rest.trim();
            let bytes = rest
                .strip_prefix(':')
                .and_then(|r| r.split(':').next())
                .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok());
            return match bytes.as_deref().map(<[u8; 32]>::try_from) {
                Some(Ok(array)) => Ok(Some(Sha256Digest(array))),
                _ => Err(format!(
                    "the Repr-Digest field's sha-256 value `{rest}` is not 32 bytes of base64 \
                     between colons (sha-256=:…:)"
                )),
            };
        }
        Ok(None)
    }

    /// Lower-case hex, as `sha256sum` prints it.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// The checksum a body must have.
#[derive(Clone, Debug, Default)]
pub(crate) enum Expected {
    /// Whatever it is.
    #[default]
    Any,
    /// Announced before the body (a header).
    Known(Sha256Digest),
    /// Announced after it (a trailer): set by whoever reads the trailer,
    /// before the body is said to be complete.
    Later(Arc<OnceLock<Sha256Digest>>),
}

impl Expected {
    /// What was announced, if anything was to be.
    pub(crate) fn of(digest: Option<Sha256Digest>) -> Expected {
        digest.map_or(Expected::Any, Expected::Known)
    }

    /// Whether `actual` is what was announced.
    pub(crate) fn check(&self, actual: Sha256Digest) -> Result<(), TransferError> {
        let expected = match self {
            Expected::Any => return Ok(()),
            Expected::Known(digest) => *digest,
            Expected::Later(slot) => *slot.get().ok_or_else(|| {
                TransferError::Cut(
                    "the body ended without the checksum that was to follow it;                      nothing was placed"
                        .into(),
                )
            })?,
        };
        if expected == actual {
            Ok(())
        } else {
            Err(TransferError::ChecksumMismatch { expected, actual })
        }
    }
}

/// A running SHA-256.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hasher(Sha256);

impl Hasher {
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub(crate) fn finish(self) -> Sha256Digest {
        Sha256Digest(self.0.finalize().into())
    }
}

/// Reads through, hashing what passes.
#[derive(Debug)]
pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Hasher,
    read: u64,
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Hasher::default(),
            read: 0,
        }
    }

    /// Reads what is left (trailing padding of an archive), hashing it;
    /// the digest of everything read, and its length.
    pub(crate) fn finish(mut self) -> io::Result<(Sha256Digest, u64)> {
        io::copy(&mut self, &mut io::sink())?;
        Ok((self.hasher.finish(), self.read))
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

/// Writes through, hashing what passes.
#[derive(Debug)]
pub(crate) struct HashingWriter<W> {
    pub(crate) inner: W,
    hasher: Hasher,
}

impl<W: Write> HashingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Hasher::default(),
        }
    }

    pub(crate) fn finish(self) -> (W, Sha256Digest) {
        (self.inner, self.hasher.finish())
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The digest of everything `reader` yields.
pub(crate) fn of_reader(reader: impl Read) -> io::Result<Sha256Digest> {
    Ok(HashingReader::new(reader).finish()?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_digest_round_trips_and_refuses_garbage() {
        let digest = of_reader(&b"hello\n"[..]).unwrap();
        assert_eq!(
            digest.hex(),
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        let value = digest.header_value();
        assert_eq!(Sha256Digest::from_header(&value), Ok(Some(digest)));
        let both = format!("sha-512=:AAAA:, {value}");
        assert_eq!(Sha256Digest::from_header(&both), Ok(Some(digest)));
        assert_eq!(Sha256Digest::from_header("sha-512=:AAAA:"), Ok(None));
        assert!(Sha256Digest::from_header("sha-256=:AAAA:").is_err());
        assert!(Sha256Digest::from_header("sha-256=nope").is_err());
    }
}
