//! Tool names the wire formats do not allow, mapped reversibly.
//!
//! Every format here takes function names matching `^[a-zA-Z0-9_-]{1,64}$`.
//! MCP tools may carry `.` or `/` or be longer. Such a name is sent as its
//! allowed characters (others become `_`), cut to fit, with `_` and eight
//! hex digits of a hash of the whole original appended, so two names that
//! clean up alike still differ. Names that are already allowed are sent
//! unchanged, so the usual case costs nothing. The mapping is a pure
//! function of the name: a host and `baton serve` computing it apart agree.

use std::borrow::Cow;
use std::collections::HashMap;

use baton_tool::pool::ToolPool;

/// The longest name the formats accept.
pub const MAX_LEN: usize = 64;

/// Whether `name` can be sent as is.
pub fn is_allowed(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The name the model sees for tool `name`.
pub fn wire_name(name: &str) -> Cow<'_, str> {
    if is_allowed(name) {
        return Cow::Borrowed(name);
    }
    let suffix = format!("_{:08x}", fnv1a(name.as_bytes()));
    let mut cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    cleaned.truncate(MAX_LEN - suffix.len());
    cleaned.push_str(&suffix);
    Cow::Owned(cleaned)
}

/// 32-bit FNV-1a: stable across versions and platforms (unlike std's
/// hasher), which the mapping needs.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, b| {
        (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The way back from wire names to the pool's names. Only renamed tools
/// are stored; any other name maps to itself.
#[derive(Clone, Debug, Default)]
pub struct NameMap {
    back: HashMap<String, String>,
}

impl NameMap {
    /// The map for every tool of `pool`.
    pub fn for_pool(pool: &ToolPool) -> Self {
        Self::for_names(pool.tools().map(|t| t.name().to_string()))
    }

    /// The map for these tool names.
    pub fn for_names(names: impl IntoIterator<Item = String>) -> Self {
        let mut back = HashMap::new();
        for name in names {
            if let Cow::Owned(wire) = wire_name(&name) {
                back.insert(wire, name);
            }
        }
        NameMap { back }
    }

    /// The pool's name for what the model called `wire`.
    pub fn tool_name<'a>(&'a self, wire: &'a str) -> &'a str {
        self.back.get(wire).map_or(wire, String::as_str)
    }

    /// True when no tool needed renaming.
    pub fn is_identity(&self) -> bool {
        self.back.is_empty()
    }
}
