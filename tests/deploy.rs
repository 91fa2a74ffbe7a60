//! The deployment files are real: the Kubernetes manifests validate against
//! the Kubernetes schemas, and the Dockerfile's entry point is a command line
//! this `baton` accepts and serves with.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn kubernetes_manifests_validate_strictly() {
    let dir = format!("{ROOT}/deploy/kubernetes");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "-k", "1.34.0"])
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("kubernetes-validate is missing ({e}): run ./.ci/deps"));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for kind in ["deployment/baton-worker", "service/baton-worker"] {
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
    std::fs::write(&token, "5d0c8e2f9a7b4c1e6f3a0b9d8c7e6f5a\n").unwrap();
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
    let mut child = crate::support::baton()
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

/// The manifests ship no token: the Secret is created by the operator
/// (docs/mcp-server.md), so `kubectl apply -f deploy/kubernetes/` cannot
/// install a known one.
#[test]
fn the_manifests_hold_no_secret_and_no_placeholder() {
    let dir = format!("{ROOT}/deploy/kubernetes");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        for bad in ["kind: Secret", "stringData", "replace-me", "changeme"] {
            assert!(!code.contains(bad), "{} contains `{bad}`", path.display());
        }
    }
    let deployment = std::fs::read_to_string(format!("{dir}/deployment.yaml")).unwrap();
    assert!(deployment.contains("secretName: baton-worker-token"));
    assert!(deployment.contains("kubectl create secret generic baton-worker-token"));
}

/// The image's entry point with `token` in its token file: the exit status
/// and stderr, or `None` if it started serving.
fn entrypoint_with_token(token: &str) -> Option<(Option<i32>, String)> {
    let args = entrypoint();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, token).unwrap();
    let mut flags: Vec<String> = args[1..].to_vec();
    for (i, f) in flags.clone().iter().enumerate() {
        match f.as_str() {
            // Beyond loopback, as in the pod (port 0: any free one).
            "--http" => flags[i + 1] = "0.0.0.0:0".into(),
            "--token-file" => flags[i + 1] = file.display().to_string(),
            "--cwd" => flags[i + 1] = dir.path().display().to_string(),
            _ => {}
        }
    }
    let mut child = crate::support::baton()
        .args(&flags)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    for line in BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        if line.contains("listening on") {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = child.wait().unwrap();
    Some((status.code(), stderr))
}

#[test]
fn a_worker_refuses_a_placeholder_or_short_token() {
    for (token, why) in [
        ("replace-me-with-a-long-random-value\n", "placeholder"),
        ("s3cret\n", "at least 32"),
    ] {
        let (code, stderr) = entrypoint_with_token(token)
            .unwrap_or_else(|| panic!("a worker started with the token {token:?}"));
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(why), "{token:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(entrypoint_with_token("5d0c8e2f9a7b4c1e6f3a0b9d8c7e6f5a").is_none());
}
