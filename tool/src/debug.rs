//! [`debug_fields!`]: the `Debug` impl of a type that cannot derive one.
//!
//! Many of Baton's types hold trait objects, closures, secrets or live
//! processes, so `#[derive(Debug)]` does not fit, yet every public type must
//! print (the workspace denies `missing_debug_implementations`). Written by
//! hand, each such impl is the same eight lines around the list of fields
//! worth printing; this macro is those lines, once, and the impl is the list.

/// Implements `Debug` for a struct as `debug_struct` with the fields named.
///
/// - `field` prints `self.field`.
/// - `field: expr` prints `expr`, which reads the value through the name
///   given after `as` (`this` when none is given): a count for a large
///   collection, `is_some()` for a closure, a mask for a secret.
/// - A trailing `..` ends with `finish_non_exhaustive`, saying that fields
///   were left out (`Name { .. }` alone for a type with nothing to print).
/// - Type parameters, when the type has some, follow the name without
///   bounds: the impl needs none, since no field of their type is printed.
///
/// ```
/// struct Account {
///     user: String,
///     password: String,
///     history: Vec<String>,
///     on_change: Box<dyn Fn()>,
/// }
/// baton_tool::debug_fields! { Account as a { user, password: "***", history: a.history.len(), .. } }
///
/// let account = Account {
///     user: "ann".into(),
///     password: "secret".into(),
///     history: vec!["login".into()],
///     on_change: Box::new(|| ()),
/// };
/// let printed = format!("{account:?}");
/// assert_eq!(printed, r#"Account { user: "ann", password: "***", history: 1, .. }"#);
/// ```
#[macro_export]
macro_rules! debug_fields {
    ($name:ident $(<$($param:ident),+>)? { $($fields:tt)* }) => {
        $crate::debug_fields!($name $(<$($param),+>)? as this { $($fields)* });
    };
    ($name:ident $(<$($param:ident),+>)? as $this:ident { $($fields:tt)* }) => {
        impl $(<$($param),+>)? ::std::fmt::Debug for $name $(<$($param),+>)? {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                #[allow(unused_variables)]
                let $this = self;
                let mut out = f.debug_struct(stringify!($name));
                $crate::debug_fields!(@field out $this $($fields)*)
            }
        }
    };
    (@field $out:ident $this:ident) => {
        $out.finish()
    };
    (@field $out:ident $this:ident ..) => {
        $out.finish_non_exhaustive()
    };
    (@field $out:ident $this:ident $field:ident : $value:expr $(, $($rest:tt)*)?) => {{
        $out.field(stringify!($field), &$value);
        $crate::debug_fields!(@field $out $this $($($rest)*)?)
    }};
    (@field $out:ident $this:ident $field:ident $(, $($rest:tt)*)?) => {{
        $out.field(stringify!($field), &$this.$field);
        $crate::debug_fields!(@field $out $this $($($rest)*)?)
    }};
}
