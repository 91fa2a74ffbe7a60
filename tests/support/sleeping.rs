//! Counting the live `sleep` processes a test started, by a marker in
//! their arguments.

/// Live `sleep` processes whose arguments name `marker`.
pub fn sleeping(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                == Some("Z");
            text.starts_with("sleep ") && text.contains(marker) && !zombie
        })
        .count()
}
