//! Every `SPEC §N` (or `SPEC §N.M`) the code and docs cite names a section
//! (or an item of a section's numbered list) that exists in docs/spec.md,
//! so a citation always leads somewhere a reader can open.

use std::path::{Path, PathBuf};

/// `(section, item)` pairs the spec has: `(N, None)` for every `## N.`
/// heading, `(N, Some(M))` for every top-level `M.` list item under it.
fn spec_anchors(spec: &str) -> Vec<(u32, Option<u32>)> {
    let mut anchors = Vec::new();
    let mut section = None;
    for line in spec.lines() {
        if let Some(rest) = line.strip_prefix("## ") {
            section = rest
                .split('.')
                .next()
                .and_then(|n| n.trim().parse::<u32>().ok());
            if let Some(n) = section {
                anchors.push((n, None));
            }
        } else if let (Some(n), Some((m, _))) = (section, line.split_once(". ")) {
            if let Ok(m) = m.parse::<u32>() {
                anchors.push((n, Some(m)));
            }
        }
    }
    anchors
}

/// Every `SPEC §N[.M]` in `text`, with the line it is on.
fn citations(text: &str) -> Vec<(usize, u32, Option<u32>)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("SPEC §") {
            rest = &rest[at + "SPEC §".len()..];
            let digits: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let digits = digits.trim_end_matches('.');
            let mut parts = digits.split('.');
            let Some(Ok(n)) = parts.next().map(str::parse::<u32>) else {
                continue;
            };
            let m = parts.next().and_then(|m| m.parse::<u32>().ok());
            out.push((i + 1, n, m));
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "node_modules" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") || name.ends_with(".md") {
            out.push(path);
        }
    }
}

#[test]
fn every_spec_citation_names_a_section_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = std::fs::read_to_string(root.join("docs/spec.md")).unwrap();
    let anchors = spec_anchors(&spec);
    assert!(anchors.contains(&(1, None)) && anchors.contains(&(16, None)));
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut cited = 0;
    let mut broken = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (line, n, m) in citations(&text) {
            cited += 1;
            if !anchors.contains(&(n, m)) {
                let at = m.map_or(format!("§{n}"), |m| format!("§{n}.{m}"));
                broken.push(format!("{}:{line}: {at}", file.display()));
            }
        }
    }
    assert!(
        cited > 50,
        "only {cited} citations found: is the scan right?"
    );
    assert!(
        broken.is_empty(),
        "citations of nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_citation_reader_finds_sections_and_items() {
    let spec = "## 4. Life\n1. one\n2. two\n## 5. Next\n";
    let anchors = spec_anchors(spec);
    assert_eq!(
        anchors,
        vec![(4, None), (4, Some(1)), (4, Some(2)), (5, None)]
    );
    let found = citations("see SPEC §4.2 and SPEC §5, not §6.");
    assert_eq!(found, vec![(1, 4, Some(2)), (1, 5, None)]);
    assert!(!anchors.contains(&(4, Some(3))));
}
