//! File transfer on a real worker (`baton mcp serve --http`), over real
//! sockets: round trips of a large file and of a large tree through the
//! client (`baton::remote::files`), transfers cut halfway, checksums, the
//! size limit, `HEAD` and `DELETE`. What the judgement refuses is in
//! `transfer_judgement.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

use baton::remote::files::WorkerFiles;
use baton::transfer::{EntryKind, Sha256Digest};

use crate::common::wait_for;
use crate::support::files_worker::{leftovers, tree, FilesWorker};

/// Reads under `private/` and writes under `secret/` are denied; the rest
/// of the workspace is writable (acceptEdits).
pub const SETTINGS: &str =
    r#"{"permissions": {"deny": ["Edit(//{work}/secret/**)", "Read(//{work}/private/**)"]}}"#;

/// `len` bytes that do not repeat (xorshift), different for each `seed`.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn sha256(bytes: &[u8]) -> Sha256Digest {
    use sha2::Digest as _;
    Sha256Digest(sha2::Sha256::digest(bytes).into())
}

/// The `Repr-Digest` request header for `bytes`.
fn digest_header(bytes: &[u8]) -> String {
    format!("Repr-Digest: {}", sha256(bytes).header_value())
}

/// The size of the temporary file a transfer is writing below `dir`.
fn temporary_size(dir: &Path) -> u64 {
    leftovers(dir)
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_20_mb_file_round_trips_byte_for_byte_and_is_written_as_it_arrives() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    // More than the 16 MiB MCP body cap, which does not apply here.
    let data = noise(20 * 1024 * 1024, 7);
    let half = data.len() / 2;

    // Half the body sent, the other half held back: what arrived is
    // already on disk, in the temporary, so the body is not being
    // collected in memory first.
    let mut socket = TcpStream::connect(("127.0.0.1", worker.port)).unwrap();
    let head = format!(
        "PUT /v1/files/data/big.bin HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\
         {}\r\nContent-Length: {}\r\n\r\n",
        worker.port,
        digest_header(&data),
        data.len()
    );
    socket.write_all(head.as_bytes()).unwrap();
    socket.write_all(&data[..half]).unwrap();
    let dir = worker.work.join("data");
    assert!(
        wait_for(|| temporary_size(&dir) >= 1024 * 1024).await,
        "nothing of the first half reached the disk"
    );
    assert!(
        !dir.join("big.bin").exists(),
        "placed before the body ended"
    );
    socket.write_all(&data[half..]).unwrap();
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    assert!(answer.contains(&sha256(&data).header_value()), "{answer}");
    assert!(std::fs::read(dir.join("big.bin")).unwrap() == data);

    // The same through the client, both ways.
    let files = WorkerFiles::new(&worker.url(), None).unwrap();
    let local = worker.outside.join("big.bin");
    std::fs::write(&local, &data).unwrap();
    let sent = files.upload_file(&local, "data/again.bin").await.unwrap();
    assert_eq!(sent, sha256(&data));
    assert!(std::fs::read(dir.join("again.bin")).unwrap() == data);

    let stat = files.stat("data/again.bin").await.unwrap().unwrap();
    assert_eq!(stat.kind, EntryKind::File);
    assert_eq!(stat.size, Some(data.len() as u64));
    assert_eq!(stat.digest, Some(sent));

    let back = worker.outside.join("back/big.bin");
    let got = files.download_file("data/big.bin", &back).await.unwrap();
    assert_eq!(got, sent);
    assert!(std::fs::read(&back).unwrap() == data);
    assert!(leftovers(&worker.work).is_empty());
    assert!(leftovers(&worker.outside).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_of_2000_files_round_trips_byte_for_byte() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    let src = worker.outside.join("src");
    for i in 0..2000u64 {
        let dir = src.join(format!("d{:02}/e{}", i % 40, i % 3));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            noise((i * 37 % 5000) as usize, i),
        )
        .unwrap();
    }
    std::fs::create_dir_all(src.join("empty")).unwrap();
    std::os::unix::fs::symlink("d00/e0/f0.txt", src.join("link")).unwrap();
    let files = WorkerFiles::new(&worker.url(), None).unwrap();

    files.upload_dir(&src, "tree").await.unwrap();
    let original = tree(&src);
    assert_eq!(original.len(), 2000 + 40 + 120 + 2);
    assert!(
        tree(&worker.work.join("tree")) == original,
        "the worker's copy differs"
    );

    let back = worker.outside.join("back");
    files.download_dir("tree", &back).await.unwrap();
    assert!(tree(&back) == original, "the downloaded copy differs");

    // Sent again, it replaces the directory whole.
    std::fs::remove_file(src.join("d01/e1/f1.txt")).unwrap();
    files.upload_dir(&src, "tree").await.unwrap();
    assert!(tree(&worker.work.join("tree")) == tree(&src));
    assert!(leftovers(&worker.work).is_empty());
    assert!(leftovers(&worker.outside).is_empty());
}

/// Sends the head of a `PUT` and `sent` of its `whole` bytes, waits until
/// the worker is writing them, then closes the connection.
async fn cut(worker: &FilesWorker, path: &str, headers: &str, whole: &[u8], sent: usize) {
    let mut socket = TcpStream::connect(("127.0.0.1", worker.port)).unwrap();
    let head = format!(
        "PUT /v1/files/{path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{headers}Content-Length: {}\r\n\r\n",
        worker.port,
        whole.len()
    );
    socket.write_all(head.as_bytes()).unwrap();
    socket.write_all(&whole[..sent]).unwrap();
    let work = worker.work.clone();
    assert!(
        wait_for(|| !leftovers(&work).is_empty()).await,
        "the transfer never started writing"
    );
    socket.shutdown(std::net::Shutdown::Both).unwrap();
    drop(socket);
    assert!(
        wait_for(|| leftovers(&work).is_empty()).await,
        "a temporary is left: {:?}",
        leftovers(&work)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_cut_halfway_leaves_no_file_and_no_temporary() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    let whole = noise(4 * 1024 * 1024, 3);
    cut(&worker, "cut/half.bin", "", &whole, whole.len() / 2).await;
    assert!(!worker.work.join("cut/half.bin").exists());
    // The directory made for it went too.
    assert!(!worker.work.join("cut").exists());

    // The same for a directory's archive.
    let mut archive = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(whole.len() as u64);
    header.set_mode(0o644);
    archive
        .append_data(&mut header, "big.bin", &whole[..])
        .unwrap();
    let archive = archive.into_inner().unwrap();
    cut(
        &worker,
        "tree",
        "Content-Type: application/x-tar\r\n",
        &archive,
        archive.len() / 2,
    )
    .await;
    assert!(!worker.work.join("tree").exists());

    // The worker goes on: the same upload, whole, is placed.
    let answer = worker.call("PUT", "cut/half.bin", &[], &whole);
    assert_eq!(answer.status, 204, "{}", answer.text());
    assert!(std::fs::read(worker.work.join("cut/half.bin")).unwrap() == whole);
}

#[test]
fn a_checksum_mismatch_places_nothing() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    let body = b"the content that travels".to_vec();
    let other = digest_header(b"something else");

    let answer = worker.call("PUT", "notes.txt", &[&other], &body);
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(
        answer.text().contains("CHECKSUM_MISMATCH"),
        "{}",
        answer.text()
    );
    assert!(!worker.work.join("notes.txt").exists());

    // A file already there stays as it was.
    std::fs::write(worker.work.join("kept.txt"), b"old").unwrap();
    let answer = worker.call("PUT", "kept.txt", &[&other], &body);
    assert_eq!(answer.status, 400);
    assert_eq!(std::fs::read(worker.work.join("kept.txt")).unwrap(), b"old");

    // A malformed field is refused, not skipped.
    let answer = worker.call("PUT", "notes.txt", &["Repr-Digest: sha-256=:AAAA:"], &body);
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(!worker.work.join("notes.txt").exists());

    // An archive with the wrong checksum: no directory.
    let mut archive = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(body.len() as u64);
    header.set_mode(0o644);
    archive
        .append_data(&mut header, "a.txt", &body[..])
        .unwrap();
    let archive = archive.into_inner().unwrap();
    let tar = "Content-Type: application/x-tar";
    let answer = worker.call("PUT", "dir", &[tar, &other], &archive);
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert!(!worker.work.join("dir").exists());

    // The right checksum: placed, and echoed.
    let right = digest_header(&body);
    let answer = worker.call("PUT", "notes.txt", &[&right], &body);
    assert_eq!(answer.status, 204, "{}", answer.text());
    assert_eq!(
        answer.header("repr-digest"),
        Some(sha256(&body).header_value())
    );
    assert_eq!(std::fs::read(worker.work.join("notes.txt")).unwrap(), body);
    assert!(leftovers(&worker.work).is_empty());
}

#[test]
fn head_and_delete_work() {
    let worker = FilesWorker::start(SETTINGS, &[]);
    let body = noise(1000, 1);
    assert_eq!(worker.call("PUT", "a/b.bin", &[], &body).status, 204);

    let head = worker.call("HEAD", "a/b.bin", &[], b"");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length").as_deref(), Some("1000"));
    assert_eq!(head.header("baton-entry-type").as_deref(), Some("file"));
    assert_eq!(
        head.header("repr-digest"),
        Some(sha256(&body).header_value())
    );
    let dir = worker.call("HEAD", "a", &[], b"");
    assert_eq!(dir.status, 200);
    assert_eq!(dir.header("baton-entry-type").as_deref(), Some("directory"));
    assert_eq!(worker.call("HEAD", "a/missing", &[], b"").status, 404);

    // A directory that is not empty needs `recursive`.
    let refused = worker.call("DELETE", "a", &[], b"");
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert!(worker.work.join("a/b.bin").exists());

    assert_eq!(worker.call("DELETE", "a/b.bin", &[], b"").status, 204);
    assert_eq!(worker.call("HEAD", "a/b.bin", &[], b"").status, 404);
    assert_eq!(worker.call("DELETE", "a/b.bin", &[], b"").status, 404);

    assert_eq!(worker.call("PUT", "a/c/d.txt", &[], b"x").status, 204);
    let answer = worker.call("DELETE", "a?recursive=true", &[], b"");
    assert_eq!(answer.status, 204, "{}", answer.text());
    assert!(!worker.work.join("a").exists());
    assert!(worker.work.exists(), "only the directory named goes");
}

#[test]
fn uploads_over_the_limit_are_refused_and_place_nothing() {
    let worker = FilesWorker::start(SETTINGS, &["--max-transfer-bytes", "1000"]);
    let answer = worker.call("PUT", "big.bin", &[], &noise(2000, 2));
    assert_eq!(answer.status, 413, "{}", answer.text());
    assert!(!worker.work.join("big.bin").exists());

    // Without a length announced, the limit stops the body as it comes.
    let body = noise(2000, 2);
    let mut request = format!(
        "PUT /v1/files/big.bin HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\
         Transfer-Encoding: chunked\r\n\r\n",
        worker.port
    )
    .into_bytes();
    for chunk in body.chunks(500) {
        request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend_from_slice(chunk);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    let answer = worker.raw(&request, false);
    assert_eq!(answer.status, 413, "{}", answer.text());
    assert!(!worker.work.join("big.bin").exists());
    assert!(leftovers(&worker.work).is_empty());

    assert_eq!(
        worker.call("PUT", "ok.bin", &[], &noise(1000, 2)).status,
        204
    );
}

/// A worker that answers one `GET` with `head` and `body`, then closes.
fn fake_worker(head: String, body: Vec<u8>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request);
        let _ = socket.write_all(head.as_bytes());
        let _ = socket.write_all(&body);
    });
    format!("http://127.0.0.1:{port}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_places_a_download_only_when_it_is_whole_and_matches() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().canonicalize().unwrap().join("got.bin");
    let data = noise(1000, 4);

    // Half the body, then the connection closes.
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nRepr-Digest: {}\r\n\r\n",
        data.len(),
        sha256(&data).header_value()
    );
    let files = WorkerFiles::new(&fake_worker(head, data[..500].to_vec()), None).unwrap();
    let err = files.download_file("got.bin", &local).await.unwrap_err();
    assert!(!local.exists(), "a partial download was placed: {err}");
    assert!(leftovers(dir.path()).is_empty());

    // Whole, but not what its checksum says.
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nRepr-Digest: {}\r\n\r\n",
        data.len(),
        sha256(b"other").header_value()
    );
    let files = WorkerFiles::new(&fake_worker(head, data.clone()), None).unwrap();
    let err = files.download_file("got.bin", &local).await.unwrap_err();
    assert!(
        matches!(err, baton::transfer::TransferError::ChecksumMismatch { .. }),
        "{err}"
    );
    assert!(!local.exists());
    assert!(leftovers(dir.path()).is_empty());
}
