//! Looking for a test's processes in /proc: by a marker in their command
//! line, with zombies (exited, not yet reaped) left out, since a zombie no
//! longer runs anything. Included with `#[path]` by the tests that count
//! processes left behind.
#![allow(dead_code)]

use std::path::Path;

/// Whether the process at `/proc/<pid>` is a zombie (or already gone).
pub fn is_zombie(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("stat"))
        .map(|s| {
            // The state follows the command name, which ends with `)`.
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

/// Live (non-zombie) processes whose command line mentions `needle`.
pub fn running(needle: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                return false;
            };
            String::from_utf8_lossy(&cmdline).contains(needle) && !is_zombie(&entry.path())
        })
        .count()
}
