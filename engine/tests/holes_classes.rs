//! The holes of the second review (issue 20, section 3) against the
//! read-only classifier, several variants each. `false` rows must not be
//! read-only; `true` rows keep the fixes from swallowing harmless lines.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_engine::shell::{is_read_only, split_commands};

fn check(table: &[(&str, bool)]) {
    let wrong: Vec<String> = table
        .iter()
        .filter(|(src, want)| is_read_only(src) != *want)
        .map(|(src, want)| format!("{src:?}: want read-only = {want}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Hole 1: words bash turns into several arguments, where position and
/// count decide what a program does.
#[test]
fn words_that_expand_into_several_arguments() {
    check(&[
        ("test {-v,'a[$(touch F)]'}", false),
        ("[ {-v,'a[$(touch F)]'} ]", false),
        ("test {-v,x}", false),
        ("test -n {a,b}", false),
        ("test *", false),
        ("[ -f *.rs ]", false),
        ("test $x", false),
        ("[ $a = b ]", false),
        ("test ! {-v,'a[1]'}", false),
        ("test -v 'a[$(touch F)]'", false),
        ("test -v a[1]", false),
        ("[[ -v a[$(touch F)] ]]", false),
        ("[[ -v \"$x\" ]]", false),
        ("[[ -v a[i] ]]", false),
        // Options hidden in braces, for programs whose options matter.
        ("sort {-o,out} f", false),
        ("wc {--files0-from,=list}", false),
        ("wc --files0-from=list", false),
        ("du --files0=list", false),
        ("sha256sum {-c,SUMS}", false),
        ("md5sum --check SUMS", false),
        ("jq {-f,prog.jq} x.json", false),
        // Still read-only.
        ("test -n \"$x\"", true),
        ("[ -f \"$f\" ]", true),
        ("test -v name", true),
        ("[[ -v name ]]", true),
        ("wc -l {a,b}.rs", true),
        ("sha256sum a b", true),
    ]);
}

/// Hole 2: a here-document whose body holds a line bash ends it on,
/// inside a quoted string of a substitution the grammar parses.
#[test]
fn here_documents_ending_where_bash_ends_them() {
    check(&[
        ("cat <<EOF\n$(echo \"\nEOF\ntouch F\n\")\nEOF\n", false),
        ("cat <<EOF\n$(echo '\nEOF\ntouch F\n')\nEOF\n", false),
        ("cat <<'EOF'\nx \"\nEOF\ntouch F\n\"\nEOF\n", false),
        ("cat <<-EOF\n$(echo \"\n\tEOF\ntouch F\n\")\nEOF\n", false),
        ("cat <<EOF\n`echo \"\nEOF\ntouch F\n\"`\nEOF\n", false),
        ("cat <<A <<B\n$(echo \"\nA\ntouch F\n\")\nA\nb\nB\n", false),
        ("cat <<EOF\nplain\nEOF\n", true),
        ("cat <<'EOF'\n$(not run)\nEOF\n", true),
        ("cat <<EOF\na EOF b\nEOF\n", true),
    ]);
}

/// Hole 3: builtins and constructs that assign variables (PATH, IFS,
/// BASH_ENV, Baton's own `__baton_*`).
#[test]
fn builtins_that_assign_variables() {
    check(&[
        ("printf %n PATH", false),
        ("printf 'ab%n' IFS", false),
        ("printf '%s%-3n' x BASH_ENV", false),
        ("printf -- %n PATH", false),
        ("printf -v PATH x", false),
        ("printf -vPATH x", false),
        ("printf {-v,PATH} x", false),
        ("printf \"$f\" PATH", false),
        ("read PATH < f", false),
        ("read -r IFS", false),
        ("mapfile -t PATH < f", false),
        ("readarray x < f", false),
        ("declare PATH=/tmp", false),
        ("declare \"$x\"=1", false),
        ("typeset -x BASH_ENV=f", false),
        ("local IFS=x", false),
        ("export PROMPT_COMMAND=x", false),
        ("readonly x=1", false),
        ("let PATH=1", false),
        ("getopts ab PATH", false),
        ("(( PATH = 1 ))", false),
        ("echo $(( __baton_status = 1 ))", false),
        ("echo ${PATH:=x}", false),
        ("echo ${!x}", false),
        ("for __baton_rc in 1; do :; done", false),
        ("for PATH in x; do ls; done", false),
        ("for IFS in x; do ls; done", false),
        ("CDPATH=/ cd etc", false),
        ("HOME=/ cd", false),
        ("printf '%s\\n' a b", true),
        ("printf '%%n\\n'", true),
        ("for f in a b; do echo $f; done", true),
    ]);
}

/// Hole 4: redirections of compound commands and lone redirections are
/// part of the line: writes are not read-only, reads are commands of
/// their own (checked against the workspace by the policy).
#[test]
fn redirections_of_compound_commands() {
    check(&[
        ("{ ls; } > f", false),
        ("( ls ) > f", false),
        ("while false; do :; done > f", false),
        ("if true; then ls; fi >> f", false),
        ("for x in a; do echo $x; done > f", false),
        ("case x in x) ls;; esac > f", false),
        ("echo $(> f)", false),
        ("{ ls; } 2> f", false),
        ("{ cat; } < f", true),
        ("( cat ) < f", true),
        ("while read -r l; do echo; done < f", false),
        ("if true; then cat; fi < f", true),
        ("echo \"$(<f)\"", true),
        ("echo $(< f)", true),
    ]);
    // The read of each appears as a command of its own, with its target.
    for src in [
        "{ cat; } < secret",
        "( cat ) < secret",
        "if true; then cat; fi < secret",
        "for x in a; do cat; done < secret",
        "echo \"$(<secret)\"",
    ] {
        let script = baton_engine::shell::parse(src).unwrap();
        let found = script.commands().iter().any(|c| {
            c.redirects()
                .iter()
                .any(|r| r.target.as_ref().and_then(|t| t.literal()) == Some("secret"))
        });
        assert!(
            found,
            "{src:?}: the redirection of `secret` is not on any command"
        );
        // They run nothing, so rule lists stay as they were.
        assert!(split_commands(src)
            .unwrap()
            .iter()
            .all(|c| !c.words().is_empty()));
    }
}

/// Hole 7: programs on the read-only list whose arguments name files in
/// their own syntax, or read lists of names from a file.
#[test]
fn programs_naming_files_in_their_own_syntax() {
    check(&[
        ("jq 'import \"x\" as y {search: \"/\"}; .' f.json", false),
        ("jq 'include \"x\" {search: \"/etc\"}; .' f.json", false),
        (
            "jq -n 'import \"passwd\" as $p {search: \"/etc\"}; $p'",
            false,
        ),
        ("jq -n '\"x\" | modulemeta'", false),
        ("jq -f prog.jq f.json", false),
        ("jq --from-file prog.jq", false),
        ("jq -L / -n 1", false),
        ("jq -nr 'include \"a\"; 1'", false),
        ("sed 'r /etc/passwd' f", false),
        ("sed '1R /etc/passwd' f", false),
        ("sed -n '1w out' f", false),
        ("sed '1e touch F' f", false),
        ("sed -f script.sed f", false),
        ("sed 's/x/touch F/e' f", false),
        ("sed 's/x/y/w out' f", false),
        ("sed -e p -e 'w out' f", false),
        ("sed '/a/{r /etc/passwd\n}' f", false),
        ("sed 's/[/]/x/e' f", false),
        ("sed 's/foo/bar/g' f", true),
        ("sed -n '/error/I,+2p' f", true),
        ("sed -e 's/reader/writer/' -e '$d' f", true),
        ("sort -o out f", false),
        ("sort --output=out f", false),
        ("sort --files0-from=list", false),
        ("sort -T /tmp f", false),
        ("sort --temporary-directory=/tmp f", false),
        ("file -f names", false),
        ("file --files-from names", false),
        ("find . -files0-from list", false),
        ("find . -fprint out", false),
        ("find . -fls out", false),
        ("wc --files0-from=list", false),
        ("du --files0-from list", false),
        ("sha1sum -c SUMS", false),
        ("b2sum --check SUMS", false),
        ("git --git-dir=/x log", false),
        ("git -C /x log", false),
        ("tar -tf x.tar", false),
        ("less f", false),
        ("man ls", false),
        ("xxd f", false),
        ("awk '{print}' f", false),
        ("jq .name package.json", true),
        ("jq -r '.[] | .name' f.json", true),
        ("sed -n '1,20p' f", true),
        ("sort -u f", true),
        ("wc -l f", true),
        ("sha256sum f", true),
        ("diff a b", true),
        ("grep -f patterns f", true),
    ]);
}

/// Hole 9, classifier side: git configuration from the command line or
/// the environment is never read-only.
#[test]
fn git_configuration_on_the_command_line() {
    check(&[
        ("git -c include.path=/dev/stdin st", false),
        ("git -c alias.st=status st", false),
        ("git -c core.pager=sh log", false),
        ("git -c 'includeIf.onbranch:main.path=x' log", false),
        ("git --config-env=alias.st=X st", false),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0=status git st",
            false,
        ),
        ("GIT_CONFIG_GLOBAL=/tmp/x git log", false),
        ("env GIT_CONFIG_PARAMETERS=x git log", false),
        ("git log", true),
        ("git status", true),
    ]);
}
