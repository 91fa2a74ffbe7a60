//! Running a real bash under a policy, as the tests of the sandbox do: the
//! child is forked by `std::process::Command` and enters the sandbox in
//! `pre_exec` (a forked child is single-threaded, so it may `unshare` the
//! namespaces that Baton's `clone` would have created).
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use baton_sandbox::{enter, support, Policy, Prepared};

/// Runs `script` under bash, confined by `policy`, in `cwd`.
pub fn run(policy: &Policy, cwd: &Path, script: &str) -> Output {
    try_run(policy, cwd, script).expect("bash runs")
}

/// [`run`], with a start that fails (the sandbox refused to enter) as an
/// error.
pub fn try_run(policy: &Policy, cwd: &Path, script: &str) -> std::io::Result<Output> {
    let prepared = Prepared::new(policy, support()).expect("policy prepares");
    let entry = prepared.entry();
    let flags = prepared.clone_flags();
    let mut cmd = Command::new("/bin/bash");
    cmd.arg("-c").arg(script).current_dir(cwd);
    // SAFETY: `enter` makes only system calls; `prepared` outlives the
    // spawn.
    unsafe {
        cmd.pre_exec(move || {
            if flags != 0 && libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            enter(&entry).map_err(|e| std::io::Error::from_raw_os_error(e.errno()))
        });
    }
    let out = cmd.output();
    drop(prepared);
    out
}

/// Runs `script` under bash, unconfined: the control that shows a probe
/// works at all.
pub fn run_unconfined(cwd: &Path, script: &str) -> Output {
    Command::new("/bin/bash")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .output()
        .expect("bash runs")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn usable() -> bool {
    let ok = support().usable();
    if !ok {
        eprintln!("skipping: {:?}", support().missing());
    }
    ok
}

/// A temporary directory with an empty `work` directory in it, by its
/// resolved path (the test's workspace).
pub struct Scene {
    _dir: tempfile::TempDir,
    pub work: std::path::PathBuf,
}

pub fn workspace() -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let work = dir.path().canonicalize().expect("canonical").join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    Scene { _dir: dir, work }
}
