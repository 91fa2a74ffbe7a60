//! `${VAR}` and `${VAR:-default}` in server entries, as Claude Code expands
//! them. An unset variable without a default is an error for that server:
//! running a command with a silently empty argument, or with the literal
//! text `${TOKEN}` as a header, fails later in ways that are hard to trace.

/// Expands every `${NAME}` / `${NAME:-default}` in `text` with `lookup`.
/// `field` names the place (e.g. `args[2]`) for the error message.
pub fn expand(
    text: &str,
    field: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // No closing brace: not a reference, keep the text as written.
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.find(":-") {
            Some(i) => (&inner[..i], Some(&inner[i + 2..])),
            None => (inner, None),
        };
        if !valid_name(name) {
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match (lookup(name), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(format!(
                        "{field}: environment variable {name} is not set (write ${{{name}:-default}} to give a default)"
                    ))
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_set_default_and_literal_forms() {
        let e = |s| expand(s, "f", &env);
        assert_eq!(e("${HOME}/x").unwrap(), "/home/u/x");
        assert_eq!(e("a${NOPE:-def}b").unwrap(), "adefb");
        assert_eq!(e("${HOME:-def}").unwrap(), "/home/u");
        assert_eq!(e("${EMPTY:-def}").unwrap(), "");
        assert_eq!(e("${NOPE:-}").unwrap(), "");
        assert_eq!(
            e("$HOME ${ not a var } ${").unwrap(),
            "$HOME ${ not a var } ${"
        );
        assert_eq!(e("${HOME}${HOME}").unwrap(), "/home/u/home/u");
        assert_eq!(e("ünï${HOME}ç").unwrap(), "ünï/home/uç");
    }

    #[test]
    fn unset_without_default_names_variable_and_field() {
        let err = expand("Bearer ${TOKEN}", "headers.Authorization", &env).unwrap_err();
        assert!(err.contains("TOKEN"), "{err}");
        assert!(err.contains("headers.Authorization"), "{err}");
    }
}
