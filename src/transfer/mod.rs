//! File transfer: files and whole directories into and out of a worker.
//!
//! A host that runs tools on a worker (`baton mcp serve --http`) needs to
//! move files there and back without printing them through a tool call.
//! This module does it as plain REST resources, shaped like the Kubernetes
//! agent-sandbox runtime's file API: `PUT`, `GET`, `HEAD` and `DELETE` on
//! `/v1/files/{path}` ([`routes`]), behind the worker's token, `Host` and
//! `Origin` checks. The same operations are library functions on an
//! [`Engine`](crate::Engine) ([`upload_file`], [`upload_dir`],
//! [`download_file`], [`download_dir`], [`stat`], [`delete`]), and
//! `crate::remote::files` is the client.
//!
//! What every transfer guarantees, each in its own module:
//! - **Judgement** ([`judge`]): a path is written (or removed) only where
//!   a `Write` of it would be allowed by the worker's engine, and read only
//!   where a `Read` would be; an "ask" is a refusal. Every entry of a
//!   directory is judged at its own path.
//! - **The judged object, and nothing else**: the work happens relative to
//!   handles on the judged directories, following no link
//!   (`baton_tools::files::open`).
//! - **Streaming** ([`bridge`]): bodies pass through a bounded channel;
//!   nothing is collected in memory. Uploads are bounded by a size limit.
//! - **Checksums** ([`digest`]): SHA-256 in `Repr-Digest` (RFC 9530) both
//!   ways; an upload whose announced checksum does not match places
//!   nothing.
//! - **Atomic placement** ([`place`]): a temporary beside the target,
//!   renamed onto it only when everything arrived and matched; a transfer
//!   cut halfway leaves neither the file nor the temporary behind.
//! - **Safe archives** ([`untar`]): `..`, absolute paths, escaping links,
//!   devices and the like refuse the whole archive.

mod api;
pub(crate) mod bridge;
pub mod digest;
mod error;
mod judge;
mod listing;
pub(crate) mod local;
mod pack;
mod place;
pub mod routes;
mod untar;
mod walk;

pub use api::{
    delete, download_dir, download_file, stat, upload_dir, upload_file, Download, EntryKind,
    Placed, Stat, UploadOptions,
};
pub use digest::Sha256Digest;
pub use error::TransferError;

/// The default limit on one upload's body: 1 GiB (`--max-transfer-bytes`).
pub const DEFAULT_MAX_BYTES: u64 = 1024 * 1024 * 1024;

/// The media type of a directory in transit.
pub const TAR: &str = "application/x-tar";
