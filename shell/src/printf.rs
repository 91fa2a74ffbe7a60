//! The `printf` builtin's format, as far as it can assign.
//!
//! bash's `printf` stores the number of bytes written so far into the
//! variable named by the argument of a `%n` conversion, so `printf %n PATH`
//! sets `PATH=0`: the format decides whether the later words are names.

/// Whether `format` holds a `%n` conversion (with any flags, width or
/// precision between `%` and `n`).
pub(crate) fn assigns(format: &str) -> bool {
    let bytes = format.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                i += 1;
                if bytes.get(i) == Some(&b'%') {
                    i += 1;
                    continue;
                }
                while bytes
                    .get(i)
                    .is_some_and(|b| b"-+ #0'*.123456789".contains(b))
                {
                    i += 1;
                }
                if bytes.get(i) == Some(&b'n') {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn n_conversions_are_found() {
        assert!(super::assigns("%n"));
        assert!(super::assigns("ab%-5n"));
        assert!(super::assigns("%s %n"));
        assert!(!super::assigns("%%n"));
        assert!(!super::assigns("%s\\n"));
        assert!(super::assigns("%%%n"));
    }
}
