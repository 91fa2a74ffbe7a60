use super::*;

fn sample(dir: &Path) -> SessionState {
    SessionState {
        version: VERSION,
        session_id: "s-1".into(),
        pid: std::process::id(),
        root: dir.to_path_buf(),
        cwd: dir.join("sub"),
        files_read: vec![FileRead {
            path: dir.join("a.txt"),
            sha256: Some("ab".repeat(32)),
            size: 3,
            mtime: Some((1_700_000_000, 5)),
            dev: 1,
            ino: 2,
        }],
        rules: vec![SavedRule {
            behavior: "allow".into(),
            rule: "Bash(make:*)".into(),
        }],
        loaded_tools: vec!["WebFetch".into()],
        tasks: vec![],
    }
}

#[test]
fn a_written_state_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let state = sample(dir.path());
    write_atomic(dir.path(), &state.to_text()).unwrap();
    assert_eq!(SessionState::load(dir.path()).unwrap(), state);
    // The temporary file was renamed, not left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(STATE_FILE)]);
}

#[test]
fn missing_corrupt_and_unknown_versions_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = SessionState::load(dir.path()).unwrap_err();
    assert!(matches!(err, StateError::Missing(_)), "{err}");
    let file = dir.path().join(STATE_FILE);
    for (text, want) in [
        ("{\"version\": 1, \"session_id\": ", "corrupt"),
        ("[]", "no `version`"),
        ("{\"version\": 2}", "version 2; this Baton reads version 1"),
        ("{\"version\": \"1\"}", "version \"1\""),
    ] {
        std::fs::write(&file, text).unwrap();
        let err = SessionState::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
        assert!(err.contains(STATE_FILE), "{err}");
    }
    // A field of the wrong type is named.
    let mut value = serde_json::to_value(sample(dir.path())).unwrap();
    value["files_read"][0]["size"] = serde_json::json!("big");
    std::fs::write(&file, value.to_string()).unwrap();
    let err = SessionState::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("files_read[0].size"), "{err}");
}

#[test]
fn a_state_whose_writer_runs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = sample(dir.path());
    state.check_not_running().unwrap(); // our own pid: this process resumes
    state.pid = 1; // init always runs
    let err = state.check_not_running().unwrap_err().to_string();
    assert!(err.contains("still running in process 1"), "{err}");
}
