//! The classes of the outside review (issue 8) against the read-only
//! classifier, several variants each. Every `false` row was read-only before
//! the fix; the `true` rows keep the fix from swallowing harmless lines.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_engine::shell::is_read_only;

fn check(table: &[(&str, bool)]) {
    let wrong: Vec<String> = table
        .iter()
        .filter(|(src, want)| is_read_only(src) != *want)
        .map(|(src, want)| format!("{src:?}: want read-only = {want}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Hole 1: a variable's value evaluated as code.
#[test]
fn values_evaluated_as_code() {
    check(&[
        ("true 'a[$(touch F)]'; [[ $_ -eq 1 ]]", false),
        ("[[ $x -eq 1 ]]", false),
        ("[[ 1 -lt $x ]]", false),
        ("[[ x -gt 1 ]]", false),
        ("[[ ! $x -ge 1 ]]", false),
        ("[[ -n a && ( $y -ne 2 ) ]]", false),
        ("[[ \"$(cat f)\" -le 3 ]]", false),
        ("echo $((x))", false),
        ("echo $(($x + 1))", false),
        ("echo $((${x} * 2))", false),
        ("echo $(( $(cat f) ))", false),
        ("echo $[x]", false),
        ("(( x > 1 ))", false),
        ("(( $_ ))", false),
        ("for x in 'a[$(touch F)]'; do echo $((x)); done", false),
        ("for ((;x;)); do ls; done", false),
        ("echo ${a[i]}", false),
        ("echo ${a[$i]}", false),
        ("echo \"${a[$_]}\"", false),
        ("echo ${#a[x]}", false),
        ("echo ${x:y}", false),
        ("echo ${x:$y:1}", false),
        ("echo ${x:1:$_}", false),
        ("echo ${@:$1}", false),
        ("echo ${!x}", false),
        ("echo ${!x:-d}", false),
        ("echo \"${!_}\"", false),
        ("echo ${x@P}", false),
        ("echo \"${_@P}\"", false),
        ("test -v \"$x\"", false),
        ("test -v 'a[$(touch F)]'", false),
        ("[ -v \"$_\" ]", false),
        ("[ -R x[1] ]", false),
        ("[[ -v $x ]]", false),
        ("[[ -v a[$i] ]]", false),
        ("[ $x ]", false),
        ("[ \"$a\" \"$b\" ]", false),
        ("test \"$a\" \"$b\" \"$c\"", false),
        ("test $a = b", false),
        ("[ \"$a\" -a \"$b\" -o -v \"$c\" ]", false),
        // Harmless forms stay read-only.
        ("echo $((1 + 2 * 3))", true),
        ("(( 1 )) && ls", true),
        ("[[ 1 -eq 1 ]]", true),
        ("[[ $x == y ]]", true),
        ("[[ -n $x && -f $y ]]", true),
        ("[[ -v HOME ]]", true),
        ("echo ${a[@]} ${a[*]} ${a[0]} ${#a[@]}", true),
        (
            "echo ${x:1:2} ${x: -1} ${x:-d} ${x:+y} ${#x} ${x%.*} ${x@Q}",
            true,
        ),
        ("echo ${!pre*} ${!a[@]}", true),
        ("test -f \"$x\"", true),
        ("[ -n \"$x\" ]", true),
        ("[ \"$a\" = \"$b\" ]", true),
        ("[ \"$a\" -eq 1 ]", true),
        ("[ ! \"$a\" = b ]", true),
        ("test -v HOME", true),
        ("[ -d src ]", true),
    ]);
}

/// Hole 3: here-documents whose delimiter the grammar reads differently.
#[test]
fn here_document_delimiters() {
    check(&[
        ("echo hi <<E\"O\"F\nEOF\ntouch F\nE\"O\"F", false),
        ("cat <<E'O'F\nEOF\ntouch F\nE'O'F", false),
        ("cat <<E\\OF\nEOF\ntouch F\nE\\OF", false),
        ("cat <<-E\"O\"F\n\tEOF\ntouch F\n\tE\"O\"F", false),
        ("cat <<\"EOF\"\"\"\nEOF\ntouch F\nEOF\"\"", false),
        ("cat <<$x\n$x\ntouch F\n$x", false),
        ("cat <<EOF\nx\nEOF | cat\ntouch F\nEOF", false),
        ("cat <<EOF\n\tEOF\ntouch F\nEOF", false),
        ("cat <<EOF\n`touch F`\nEOF", false),
        ("echo x\n\\touch F", false),
        ("echo {a,b}\n\\touch F", false),
        ("cat <<EOF\nhello\nEOF", true),
        ("cat <<'EOF'\n$(touch F)\nEOF", true),
        ("cat <<\"EOF\"\nx\nEOF", true),
        ("cat <<\\EOF\nx\nEOF", true),
        ("cat <<-EOF\n\tx\n\tEOF", true),
    ]);
}

/// Hole 2: GNU long options are resolved like getopt_long (unique
/// prefixes), and an option not understood is not read-only.
#[test]
fn long_option_abbreviations() {
    check(&[
        ("sed -n --expr='1e touch F' x.txt", false),
        ("sed -n --expression '1e touch F' x.txt", false),
        ("sed -n --e='1e touch F' x.txt", false),
        ("sed --in=.bak s/a/b/ f", false),
        ("sed --fi=script f", false),
        ("sed --unknown 1p f", false),
        ("sed -l 5 'w out' f", false),
        ("sed -n -- 'w out' f", false),
        ("sed -s -i s/a/b/ f", false),
        ("sort --out=x f", false),
        ("sort --o=x f", false),
        ("sort --comp=sh f", false),
        ("sort --bogus f", false),
        ("date --se=2020-01-01", false),
        ("date --s 2020-01-01", false),
        ("date --da now 0101", false),
        ("uniq --skip-f 1 in out", false),
        ("uniq --count in out", false),
        ("uniq --nope in", false),
        ("file --comp -m x", false),
        ("file --pres x", false),
        ("rg --pr sh x", false),
        ("rg --hostname x", false),
        ("tree --o x", false),
        ("git log --outp=x", false),
        ("git diff --ext", false),
        ("git config --unset-a x", false),
        ("git --no-p log", false),
        ("find . {-delete,-print}", false),
        ("find . -{delete,print}", false),
        // Resolved abbreviations of harmless options stay read-only.
        ("sed -n --quiet --expr=1p f", true),
        ("sed --sandbox -n 'w x' f", true),
        ("sort --rev --key 2 f", true),
        ("sort -k 2 -t , f", true),
        ("date --iso --date now", true),
        ("date -u +%s", true),
        ("uniq --count --skip-f 1 in", true),
        ("file --brief x", true),
        ("tree --dirsfirst -L 2", true),
    ]);
}

/// Harmless commands from Claude Code's read-only list run without asking;
/// their arguments are reviewed, unknown ones fail closed.
#[test]
fn harmless_commands_are_read_only() {
    check(&[
        ("sleep 0.5", true),
        ("sleep 1 2m 0.1s", true),
        ("sleep infinity", true),
        ("sleep --help", true),
        ("sleep $X", false),
        ("sleep -x 1", false),
        ("sleep 1e400", false),
        ("sleep NaN", false),
        ("cal", true),
        ("uptime -p", true),
        ("free -h", true),
        ("expr 1 + 2", true),
        ("ps aux", true),
        ("pgrep -l bash", true),
        ("base64 -d f", true),
        ("numfmt --to=iec 1024", true),
        ("fmt -w 60 f", true),
        ("tsort f", true),
        ("getconf PAGESIZE", true),
        ("who", true),
    ]);
}
