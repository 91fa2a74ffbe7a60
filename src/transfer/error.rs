//! Why a transfer did not happen, and the HTTP status each reason is.
//!
//! The kinds and their `code` strings follow the agent-sandbox runtime's
//! file API (`PERMISSION_DENIED` 403, `NOT_FOUND` 404, `INVALID_ARGUMENT`
//! 400, `CONFLICT` 409, `INTERNAL` 500), with the reasons it has no word
//! for added: a body over the limit (413), a checksum that does not match
//! (400, `CHECKSUM_MISMATCH`) and an archive that would place something
//! unsafe (400, `UNSAFE_ARCHIVE`).

use std::io;

use super::digest::Sha256Digest;

/// Why a transfer was refused or failed. Nothing was placed or removed
/// unless the text says otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    /// The judgement refused the path (a rule, a protected path, outside
    /// the workspace, the mode, or a question nobody can answer here).
    #[error("{0}")]
    Refused(String),
    /// Nothing is at the path.
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed (a bad path, header or parameter).
    #[error("{0}")]
    Invalid(String),
    /// The path holds something the request cannot act on (a directory
    /// where a file was sent, a non-empty directory without `recursive`,
    /// a path that changed while it was being opened).
    #[error("{0}")]
    Conflict(String),
    /// The body is larger than the limit.
    #[error("{0}")]
    TooLarge(String),
    /// What arrived does not have the checksum the client announced.
    #[error(
        "the checksum does not match: the client announced sha-256 {expected}, \
         but what arrived has {actual}; nothing was placed"
    )]
    ChecksumMismatch {
        /// What the client announced.
        expected: Sha256Digest,
        /// What arrived.
        actual: Sha256Digest,
    },
    /// The archive holds an entry that would escape or is not a plain
    /// file, directory or link inside it.
    #[error("{0}")]
    UnsafeArchive(String),
    /// The body ended before it was complete (the client went away).
    #[error("{0}")]
    Cut(String),
    /// The file system failed.
    #[error("{0}")]
    Io(String),
}

impl TransferError {
    /// The HTTP status for this error.
    pub fn status(&self) -> u16 {
        match self {
            TransferError::Refused(_) => 403,
            TransferError::NotFound(_) => 404,
            TransferError::Invalid(_)
            | TransferError::ChecksumMismatch { .. }
            | TransferError::UnsafeArchive(_)
            | TransferError::Cut(_) => 400,
            TransferError::Conflict(_) => 409,
            TransferError::TooLarge(_) => 413,
            TransferError::Io(_) => 500,
        }
    }

    /// The error's `code` in a JSON error body.
    pub fn code(&self) -> &'static str {
        match self {
            TransferError::Refused(_) => "PERMISSION_DENIED",
            TransferError::NotFound(_) => "NOT_FOUND",
            TransferError::Invalid(_) | TransferError::Cut(_) => "INVALID_ARGUMENT",
            TransferError::Conflict(_) => "CONFLICT",
            TransferError::TooLarge(_) => "PAYLOAD_TOO_LARGE",
            TransferError::ChecksumMismatch { .. } => "CHECKSUM_MISMATCH",
            TransferError::UnsafeArchive(_) => "UNSAFE_ARCHIVE",
            TransferError::Io(_) => "INTERNAL",
        }
    }

    /// Names `what` (a path, usually) in the error an I/O failure is:
    /// missing is [`TransferError::NotFound`], a path that changed or
    /// holds the wrong kind of thing is a conflict, a kernel refusal is a
    /// refusal, anything else is internal.
    pub(crate) fn io(what: impl std::fmt::Display, err: io::Error) -> TransferError {
        // Raised inside a reader or writer and carried through I/O.
        if err.get_ref().is_some_and(|e| e.is::<TransferError>()) {
            return match err.into_inner().map(|e| e.downcast::<TransferError>()) {
                Some(Ok(boxed)) => *boxed,
                _ => TransferError::Io(format!("{what}: an error got lost on its way")),
            };
        }
        if baton_tools::files::open::is_changed(&err) {
            return TransferError::Conflict(err.to_string());
        }
        let text = format!("{what}: {err}");
        match err.kind() {
            io::ErrorKind::NotFound => TransferError::NotFound(text),
            io::ErrorKind::PermissionDenied => TransferError::Refused(text),
            io::ErrorKind::AlreadyExists
            | io::ErrorKind::DirectoryNotEmpty
            | io::ErrorKind::IsADirectory
            | io::ErrorKind::NotADirectory => TransferError::Conflict(text),
            io::ErrorKind::UnexpectedEof => TransferError::Cut(text),
            _ => TransferError::Io(text),
        }
    }

    /// This error carried through an [`io::Error`] (out of a reader or a
    /// writer), to be told apart again by [`TransferError::io`].
    pub(crate) fn into_io(self) -> io::Error {
        io::Error::other(self)
    }
}
