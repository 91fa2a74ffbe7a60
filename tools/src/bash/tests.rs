use super::*;

#[test]
fn labels_are_short_and_on_one_line() {
    assert_eq!(label("ls -la"), "Bash(ls -la)");
    let long = "cargo build --release --workspace --all-features --locked";
    assert_eq!(
        label(long),
        "Bash(cargo build --release --workspace --all-…)"
    );
    assert_eq!(label("echo a\necho b"), "Bash(echo a echo b)");
}

#[test]
fn the_three_tools_build() {
    let tools = tools(&BashConfig::default()).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["Bash", "TaskOutput", "TaskStop"]);
    assert!(tools[0].def().triggers_sibling_cancel());
}
