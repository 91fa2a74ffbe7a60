//! The deployment files are real: the Kubernetes manifests validate against
//! the Kubernetes schemas, and the Dockerfile's entry point is a command line
//! this `baton` accepts and serves with.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BATON: &str = env!("CARGO_BIN_EXE_baton");

#[test]
fn kubernetes_manifests_validate_strictly() {
    let dir = format!("{ROOT}/deploy/kubernetes");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "-k", "1.34.0"])
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("kubernetes-validate is missing ({e}): run ./.ci/deps"));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for kind in [
        "deployment/baton-worker",
        "service/baton-worker",
        "secret/baton-worker-token",
    ] {
        assert!(
            text.contains(&format!("{kind} against")),
            "{kind} not checked:\n{text}"
        );
    }
}

/// The ENTRYPOINT array of the Dockerfile, as written.
fn entrypoint() -> Vec<String> {
    let text = std::fs::read_to_string(format!("{ROOT}/Dockerfile")).unwrap();
    let start = text.find("ENTRYPOINT [").expect("an exec-form ENTRYPOINT");
    let rest = &text[start + "ENTRYPOINT ".len()..];
    let end = rest.find(']').unwrap();
    let json = rest[..=end].replace("\\\n", " ");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn the_image_entrypoint_starts_a_worker() {
    let args = entrypoint();
    assert_eq!(args[0], "/usr/local/bin/baton");
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    // The same flags, with this machine's paths and a free loopback port.
    let mut flags: Vec<String> = args[1..].to_vec();
    for (i, f) in flags.clone().iter().enumerate() {
        match f.as_str() {
            "--http" => flags[i + 1] = "127.0.0.1:0".into(),
            "--token-file" => flags[i + 1] = token.display().to_string(),
            "--cwd" => flags[i + 1] = dir.path().display().to_string(),
            _ => {}
        }
    }
    let mut child = Command::new(BATON)
        .args(&flags)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("listening on"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.is_some(), "the entry point did not start a server");
}
