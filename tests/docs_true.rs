//! Docs that cannot rot (issue 24): docs/cli.md names every flag the
//! commands accept, docs/serve-protocol.md lists every line type once per
//! direction and exactly the types serve accepts and writes, and the README
//! links only files in the repository.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use serde_json::json;

use crate::support::BATON;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn help(args: &[&str]) -> String {
    let out = crate::support::baton()
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommand names listed under `Commands:` in a help text.
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags of a help text's option lines.
fn flags(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| l.split([' ', ',']))
        .filter(|w| w.starts_with("--"))
        .filter(|w| *w != "--help" && *w != "--version")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_flag_of_every_command_is_in_cli_md() {
    let cli = read("docs/cli.md");
    let mut commands: Vec<Vec<String>> = Vec::new();
    for top in subcommands(&help(&[])) {
        let args = vec![top.clone()];
        let text = help(&[top.as_str()]);
        let nested = subcommands(&text);
        if nested.is_empty() {
            commands.push(args);
        }
        for sub in nested {
            commands.push(vec![top.clone(), sub]);
        }
    }
    assert!(commands.len() >= 6, "{commands:?}");
    let mut missing = Vec::new();
    for command in &commands {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let name = args.join(" ");
        assert!(
            cli.contains(&format!("baton {name}")),
            "`baton {name}` is not in cli.md"
        );
        for flag in flags(&help(&args)) {
            // Written as `--flag` or `--flag VALUE` in a table cell.
            if !cli.contains(&format!("`{flag}`")) && !cli.contains(&format!("`{flag} ")) {
                missing.push(format!("{name} {flag}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "flags missing from docs/cli.md: {missing:?}"
    );
}

/// The first-column names of the table in section `heading`, in order.
fn table_types(doc: &str, heading: &str) -> Vec<String> {
    let section = doc
        .split("\n### ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("no section `{heading}`"));
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l[3..].split('`').next())
        // The header row names the column.
        .filter(|name| *name != "type")
        .map(str::to_string)
        .collect()
}

fn once(names: &[String], what: &str) -> BTreeSet<String> {
    let mut seen = HashSet::new();
    for n in names {
        assert!(
            seen.insert(n.clone()),
            "`{n}` appears twice in the {what} table"
        );
    }
    names.iter().cloned().collect()
}

#[test]
fn the_host_table_lists_exactly_the_lines_serve_accepts() {
    let doc = read("docs/serve-protocol.md");
    let documented = once(&table_types(&doc, "Host → Baton"), "host → Baton");
    // Serve names what it accepts when it meets a type it does not know.
    let dir = tempfile::tempdir().unwrap();
    let mut s =
        baton_test_support::serve::Serve::start(BATON, &["--cwd", dir.path().to_str().unwrap()]);
    s.send(json!({"type": "no-such-line"}));
    let error = s.next();
    s.finish();
    let text = error["message"].as_str().unwrap().to_string();
    let list = text
        .split_once("expected one of: ")
        .map(|(_, l)| l.trim_end_matches(')'))
        .unwrap_or_else(|| panic!("{text}"));
    let accepted: BTreeSet<String> = list
        .split(['(', ')', ',', ';', ':', ' '])
        .filter(|w| !w.is_empty() && !w.contains('`') && *w != "with")
        .map(str::to_string)
        .collect();
    assert_eq!(
        documented, accepted,
        "docs/serve-protocol.md vs serve ({text})"
    );
}

/// Line types written by the serve code: `"type": "x"` literals outside
/// test modules, and the lifecycle names.
fn written_types() -> BTreeSet<String> {
    // Every file under src/cli/serve, its subdirectories included.
    let mut files: Vec<String> = Vec::new();
    let mut dirs = vec![root().join("src/cli/serve")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path.to_string_lossy().into_owned());
            }
        }
    }
    for f in [
        "src/jsonl.rs",
        "src/jsonl_direct.rs",
        "src/cli/session.rs",
        "src/cli/tool_search.rs",
    ] {
        files.push(root().join(f).to_string_lossy().into_owned());
    }
    let mut found = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        // The last: a line written straight (`jsonl_direct`).
        for pattern in [
            "\"type\": \"",
            "line[\"type\"] = serde_json::json!(\"",
            "value(\"type\", \"",
        ] {
            for part in code.split(pattern).skip(1) {
                if let Some(name) = part.split('"').next() {
                    found.insert(name.to_string());
                }
            }
        }
    }
    let lifecycle = read("actors/src/lifecycle.rs");
    for part in lifecycle.split("=> \"").skip(1) {
        if let Some(name) = part.split('"').next() {
            found.insert(name.to_string());
        }
    }
    // A content block inside a line, not a line.
    found.remove("text");
    found
}

#[test]
fn the_baton_table_lists_exactly_the_lines_serve_writes() {
    let doc = read("docs/serve-protocol.md");
    let documented = once(&table_types(&doc, "Baton → host"), "Baton → host");
    let written = written_types();
    assert!(written.len() > 15, "{written:?}");
    let undocumented: Vec<_> = written.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&written).collect();
    assert!(
        undocumented.is_empty(),
        "written but not documented: {undocumented:?}"
    );
    assert!(stale.is_empty(), "documented but never written: {stale:?}");
}

#[test]
fn the_readme_links_only_files_in_the_repository() {
    for doc in [
        "README.md",
        "docs/cli.md",
        "docs/serve-protocol.md",
        "docs/contract.md",
    ] {
        let text = read(doc);
        let base = root().join(doc).parent().unwrap().to_path_buf();
        for part in text.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            if target.starts_with("http") || target.starts_with('#') {
                continue;
            }
            let path = target.split('#').next().unwrap_or("");
            let full = base.join(path);
            assert!(
                full.exists() && full.canonicalize().unwrap().starts_with(root()),
                "{doc} links `{target}`, which is not a file of the repository"
            );
        }
    }
}

/// The names a cell of limits.md's last column places in a file: the
/// backticked list right before each " in `path`".
fn placed_names(cell: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let parts: Vec<&str> = cell.split(" in `").collect();
    for pair in parts.windows(2) {
        let Some(path) = pair[1].split('`').next() else {
            continue;
        };
        let mut before = pair[0].trim_end();
        while let Some(rest) = before.strip_suffix('`') {
            let Some(start) = rest.rfind('`') else { break };
            found.push((rest[start + 1..].to_string(), path.to_string()));
            before = rest[..start].trim_end();
            match before.strip_suffix(',') {
                Some(b) => before = b.trim_end(),
                None => break,
            }
        }
    }
    found
}

#[test]
fn every_constant_the_limits_table_names_is_where_it_says() {
    let doc = read("docs/limits.md");
    let mut checked = 0;
    for row in doc.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
        let Some(last) = cells.last() else { continue };
        for (name, path) in placed_names(last) {
            let file = read(&path);
            let ok = match name.split_once("::") {
                // `Type::field`: the type and its field are in the file.
                Some((ty, field)) => {
                    file.contains(&format!("struct {ty}")) && file.contains(&format!("{field}:"))
                }
                None => file.contains(&format!("const {name}:")),
            };
            assert!(
                ok,
                "limits.md says {name} is in {path}, which does not define it"
            );
            checked += 1;
        }
    }
    // The table names at least these many constants today.
    assert!(checked >= 13, "only {checked} constants found in limits.md");
}
