//! `/v1/files/{path}`: the transfers over HTTP.
//!
//! Shaped like the agent-sandbox runtime's file API (kubernetes-sigs/
//! agent-sandbox, `packages/sandboxd/spec/filesystem/v1/filesystem.yaml`):
//! the same paths, verbs, query parameters (`mode` on `PUT`, `recursive`
//! on `DELETE`), success codes (`204` for `PUT` and `DELETE`) and error
//! bodies (`{"code": …, "message": …}`). Where Baton differs, it adds:
//! directories travel as tar (`PUT` with `Content-Type: application/x-tar`,
//! `GET` with `Accept: application/x-tar`); checksums in `Repr-Digest`;
//! `413` above the size limit; `409` for a path that changed while it was
//! opened. docs/mcp-server.md ("File transfer") has the whole table.
//!
//! The routes carry no guard of their own: the server mounts them behind
//! the same token, `Host` and `Origin` checks as `/mcp`
//! (`crate::mcp_server::http`). The MCP body cap does not apply to them;
//! their own limit does.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::put;
use serde_json::json;

use super::digest::{Sha256Digest, DIGEST_HEADER};
use super::{api, EntryKind, TransferError, UploadOptions, TAR};
use crate::Engine;

/// The header naming what `HEAD` found: `file` or `directory`.
pub const ENTRY_TYPE_HEADER: &str = "baton-entry-type";

#[derive(Clone, Debug)]
struct Files {
    engine: Engine,
    max_bytes: u64,
}

/// The `/v1/files/{path}` routes on `engine`, taking uploads of at most
/// `max_bytes`. Mount them behind the server's guards.
pub fn router(engine: Engine, max_bytes: u64) -> axum::Router {
    let files = Arc::new(Files { engine, max_bytes });
    axum::Router::new()
        .route(
            "/v1/files/{*path}",
            put(upload).get(download).head(head).delete(remove),
        )
        .with_state(files)
}

/// The error as an answer: its status, and `{"code", "message"}`.
fn failure(err: TransferError) -> Response {
    let status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({"code": err.code(), "message": err.to_string()});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        format!("{body}\n"),
    )
        .into_response()
}

/// `name=value` pairs of a query; values are not percent-decoded (the
/// parameters taken here never need it).
fn param<'a>(query: &'a Option<String>, name: &str) -> Option<&'a str> {
    query
        .as_deref()?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn digest_value(digest: &Sha256Digest) -> HeaderValue {
    HeaderValue::from_str(&digest.header_value()).unwrap_or(HeaderValue::from_static(""))
}

async fn upload(
    State(files): State<Arc<Files>>,
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match upload_inner(&files, &path, query, &headers, body).await {
        Ok(placed) => (
            StatusCode::NO_CONTENT,
            [(DIGEST_HEADER, digest_value(&placed.digest))],
        )
            .into_response(),
        Err(e) => failure(e),
    }
}

async fn upload_inner(
    files: &Files,
    path: &str,
    query: Option<String>,
    headers: &HeaderMap,
    body: Body,
) -> Result<api::Placed, TransferError> {
    let declared = header_str(headers, header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > files.max_bytes) {
        return Err(TransferError::TooLarge(format!(
            "the body is larger than the limit of {} bytes (--max-transfer-bytes)",
            files.max_bytes
        )));
    }
    let expect = match header_str(headers, DIGEST_HEADER) {
        Some(value) => Sha256Digest::from_header(value).map_err(TransferError::Invalid)?,
        None if headers.contains_key(DIGEST_HEADER) => {
            return Err(TransferError::Invalid(
                "the Repr-Digest field is not text".into(),
            ))
        }
        None => None,
    };
    let mode = match param(&query, "mode") {
        None => None,
        Some(text) => Some(parse_mode(text)?),
    };
    let archive = header_str(headers, header::CONTENT_TYPE).is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case(TAR))
    });
    if archive && mode.is_some() {
        return Err(TransferError::Invalid(
            "`mode` applies to a file; an archive carries the modes of its entries".into(),
        ));
    }
    let options = UploadOptions {
        max_bytes: files.max_bytes,
        expect,
        mode,
    };
    let stream = body.into_data_stream();
    if archive {
        api::upload_dir(&files.engine, path, stream, &options).await
    } else {
        api::upload_file(&files.engine, path, stream, &options).await
    }
}

/// `mode` as agent-sandbox takes it: `^0[0-7]{3}$`.
fn parse_mode(text: &str) -> Result<u32, TransferError> {
    let valid = text.len() == 4
        && text.starts_with('0')
        && text.bytes().all(|b| (b'0'..=b'7').contains(&b));
    match u32::from_str_radix(text, 8) {
        Ok(mode) if valid => Ok(mode),
        _ => Err(TransferError::Invalid(format!(
            "mode `{text}` must be four octal digits starting with 0 (e.g. 0644)"
        ))),
    }
}

async fn download(
    State(files): State<Arc<Files>>,
    Path(path): Path<String>,
    headers: HeaderMap,
) -> Response {
    let stat = match api::stat_kind(&files.engine, &path).await {
        Ok(kind) => kind,
        Err(e) => return failure(e),
    };
    let wants_tar = header_str(&headers, header::ACCEPT).is_some_and(|a| {
        a.split(',')
            .any(|t| t.split(';').next().is_some_and(|t| t.trim() == TAR))
    });
    match stat {
        EntryKind::File => match api::download_file(&files.engine, &path).await {
            Ok(download) => {
                let mut answer = Response::builder()
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, "application/octet-stream");
                if let Some(size) = download.size {
                    answer = answer.header(header::CONTENT_LENGTH, size);
                }
                if let Some(digest) = &download.digest {
                    answer = answer.header(DIGEST_HEADER, digest_value(digest));
                }
                answer
                    .body(download.into_body())
                    .unwrap_or_else(|e| failure(TransferError::Io(e.to_string())))
            }
            Err(e) => failure(e),
        },
        EntryKind::Directory if wants_tar => match api::download_dir(&files.engine, &path).await {
            Ok(download) => {
                let mut answer = Response::builder()
                    .status(StatusCode::OK)
                    .header(header::CONTENT_TYPE, TAR);
                // The checksum follows the archive, for a client that can
                // read trailers (RFC 9110 §6.5).
                let te = header_str(&headers, header::TE).unwrap_or("");
                if te
                    .split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("trailers"))
                {
                    answer = answer.header(header::TRAILER, DIGEST_HEADER);
                }
                answer
                    .body(download.into_body())
                    .unwrap_or_else(|e| failure(TransferError::Io(e.to_string())))
            }
            Err(e) => failure(e),
        },
        EntryKind::Directory => match super::listing::list(&files.engine, &path).await {
            Ok(listing) => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                format!("{listing}\n"),
            )
                .into_response(),
            Err(e) => failure(e),
        },
    }
}

async fn head(State(files): State<Arc<Files>>, Path(path): Path<String>) -> Response {
    let stat = match api::stat(&files.engine, &path).await {
        Ok(stat) => stat,
        Err(e) => {
            // A HEAD answer has no body: the status and a header say it.
            let mut answer = failure(e).into_response();
            *answer.body_mut() = Body::empty();
            return answer;
        }
    };
    let mut answer = Response::builder().status(StatusCode::OK);
    answer = match stat.kind {
        EntryKind::File => answer
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .header(header::CONTENT_LENGTH, stat.size)
            .header(ENTRY_TYPE_HEADER, "file"),
        EntryKind::Directory => answer
            .header(header::CONTENT_TYPE, "application/json")
            .header(ENTRY_TYPE_HEADER, "directory"),
    };
    if let Some(digest) = &stat.digest {
        answer = answer.header(DIGEST_HEADER, digest_value(digest));
    }
    answer
        .body(Body::empty())
        .unwrap_or_else(|e| failure(TransferError::Io(e.to_string())))
}

async fn remove(
    State(files): State<Arc<Files>>,
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let recursive = match param(&query, "recursive") {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return failure(TransferError::Invalid(format!(
                "recursive `{other}` must be true or false"
            )))
        }
    };
    match api::delete(&files.engine, &path, recursive).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => failure(e),
    }
}
