//! OpenAI's strict function schemas, and the way back.
//!
//! With `strict: true` OpenAI constrains the model's arguments to the
//! schema, but accepts only a subset of JSON Schema: every object closed
//! (`additionalProperties: false`) with every property `required`, and a
//! short list of keywords. [`to_strict`] rewrites a tool's schema into that
//! subset when the rewrite keeps its meaning:
//!
//! - an optional property becomes required and nullable; the model then
//!   sends `null` for "absent", and [`strip_optional_nulls`] removes those
//!   nulls again before validation, so the tool sees what it declared;
//! - an object without `additionalProperties` is closed (the tool names no
//!   other property, so none carries meaning for it);
//! - integer `format`s OpenAI does not know (`uint64`, `int32`, …) are
//!   dropped, keeping their range as `minimum`/`maximum`;
//! - `oneOf` becomes `anyOf` when its branches cannot both match (distinct
//!   types or distinct constants), which is when the two mean the same;
//! - annotations the subset lacks (`default`, `examples`, `$schema`) are
//!   dropped: they do not constrain the input.
//!
//! Anything else (open maps, `allOf`, `not`, `if`, `patternProperties`, a
//! `oneOf` whose branches overlap, …) cannot be expressed; the tool is then
//! sent with `strict: false` and its schema unchanged.

use serde_json::{json, Map, Value};

/// Keywords kept as they are (supported by the strict subset).
const KEPT: &[&str] = &[
    "type",
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Annotations dropped without loss.
const DROPPED: &[&str] = &["default", "examples", "$schema", "$comment", "deprecated"];

/// String formats the strict subset supports.
const STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Deepest nesting the subset allows.
const MAX_DEPTH: usize = 10;

/// The strict form of `schema`, or `None` when there is none with the same
/// meaning.
pub fn to_strict(schema: &Value) -> Option<Value> {
    let obj = schema.as_object()?;
    // The root must be an object schema.
    if !type_names(obj).iter().any(|t| t == "object") && !obj.contains_key("properties") {
        return None;
    }
    let mut out = convert(schema, 0)?;
    for defs in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = obj.get(defs) {
            let mut converted = Map::new();
            for (name, def) in d {
                converted.insert(name.clone(), convert(def, 1)?);
            }
            out[defs] = Value::Object(converted);
        }
    }
    Some(out)
}

fn type_names(obj: &Map<String, Value>) -> Vec<String> {
    match obj.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    }
}

fn convert(schema: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let obj = match schema {
        Value::Object(o) => o,
        // `true` (anything) cannot be expressed; `false` never matches.
        _ => return None,
    };
    let mut out = Map::new();
    let types = type_names(obj);
    for (key, value) in obj {
        match key.as_str() {
            k if KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            k if DROPPED.contains(&k) => {}
            "$defs" | "definitions" if depth == 0 => {} // converted by the caller
            "$ref" => {
                let target = value.as_str()?;
                if !target.starts_with("#/$defs/") && !target.starts_with("#/definitions/") {
                    return None;
                }
                out.insert(key.clone(), value.clone());
            }
            "format" => {
                let f = value.as_str()?;
                if types.iter().any(|t| t == "string") && STRING_FORMATS.contains(&f) {
                    out.insert(key.clone(), value.clone());
                } else if types.iter().any(|t| t == "integer" || t == "number") {
                    // Keep what the format promised as a range.
                    if let Some((min, max)) = integer_range(f) {
                        out.entry("minimum").or_insert(json!(min));
                        if let Some(max) = max {
                            out.entry("maximum").or_insert(json!(max));
                        }
                    } else if !matches!(f, "double" | "float") {
                        return None;
                    }
                } else {
                    return None;
                }
            }
            "properties" => {
                let props = value.as_object()?;
                let mut converted = Map::new();
                let required = required_of(obj);
                for (name, prop) in props {
                    let mut p = convert(prop, depth + 1)?;
                    if !required.contains(&name.as_str()) {
                        p = nullable(p);
                    }
                    converted.insert(name.clone(), p);
                }
                out.insert(key.clone(), Value::Object(converted));
                out.insert(
                    "required".into(),
                    Value::Array(props.keys().map(|k| json!(k)).collect()),
                );
            }
            "required" => {} // rebuilt from `properties`
            "additionalProperties" => {
                if value != &Value::Bool(false) {
                    return None;
                }
            }
            "items" => {
                out.insert(key.clone(), convert(value, depth + 1)?);
            }
            "anyOf" => {
                out.insert(key.clone(), branches(value, depth)?);
            }
            "oneOf" => {
                let converted = branches(value, depth)?;
                if !disjoint(value.as_array()?) {
                    return None;
                }
                out.insert("anyOf".into(), converted);
            }
            _ => return None,
        }
    }
    let is_object = types.iter().any(|t| t == "object") || obj.contains_key("properties");
    if is_object {
        out.insert("additionalProperties".into(), Value::Bool(false));
        out.entry("properties").or_insert_with(|| json!({}));
        out.entry("required").or_insert_with(|| json!([]));
    }
    Some(Value::Object(out))
}

fn branches(value: &Value, depth: usize) -> Option<Value> {
    let list = value.as_array()?;
    if list.is_empty() {
        return None;
    }
    list.iter()
        .map(|b| convert(b, depth + 1))
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

fn required_of(obj: &Map<String, Value>) -> Vec<&str> {
    obj.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The range an integer `format` implies; `None` for unknown formats.
fn integer_range(format: &str) -> Option<(i64, Option<i64>)> {
    Some(match format {
        "uint8" => (0, Some(i64::from(u8::MAX))),
        "uint16" => (0, Some(i64::from(u16::MAX))),
        "uint32" => (0, Some(i64::from(u32::MAX))),
        "uint64" | "uint" => (0, None),
        "int8" => (i64::from(i8::MIN), Some(i64::from(i8::MAX))),
        "int16" => (i64::from(i16::MIN), Some(i64::from(i16::MAX))),
        "int32" => (i64::from(i32::MIN), Some(i64::from(i32::MAX))),
        "int64" | "int" => (i64::MIN, Some(i64::MAX)),
        _ => return None,
    })
}

/// `schema` also accepting `null`.
fn nullable(mut schema: Value) -> Value {
    if accepts_null(&schema) {
        return schema;
    }
    let Some(obj) = schema.as_object_mut() else {
        return schema;
    };
    let simple =
        !obj.contains_key("$ref") && !obj.contains_key("anyOf") && !obj.contains_key("const");
    match obj.get_mut("type") {
        Some(Value::String(t)) if simple => {
            let t = std::mem::take(t);
            obj.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(values)) = obj.get_mut("enum") {
                values.push(Value::Null);
            }
            schema
        }
        Some(Value::Array(ts)) if simple => {
            ts.push(json!("null"));
            if let Some(Value::Array(values)) = obj.get_mut("enum") {
                values.push(Value::Null);
            }
            schema
        }
        _ => json!({"anyOf": [schema, {"type": "null"}]}),
    }
}

/// Whether `schema` (in either form) lets `null` through on its own.
fn accepts_null(schema: &Value) -> bool {
    let Some(obj) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if obj.get("const") == Some(&Value::Null) {
        return true;
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        return values.contains(&Value::Null);
    }
    if let Some(Value::Array(bs)) = obj.get("anyOf").or_else(|| obj.get("oneOf")) {
        return bs.iter().any(accepts_null);
    }
    if obj.contains_key("$ref") {
        return false;
    }
    match obj.get("type") {
        Some(_) => type_names(obj).iter().any(|t| t == "null"),
        // No type at all: anything, null included.
        None => !obj.contains_key("properties") && !obj.contains_key("items"),
    }
}

/// Whether no value can match two branches: each has its own types, or
/// each pins a constant no other shares.
fn disjoint(branches: &[Value]) -> bool {
    let typed: Option<Vec<Vec<String>>> = branches
        .iter()
        .map(|b| {
            let ts = b.as_object().map(type_names).unwrap_or_default();
            (!ts.is_empty()).then_some(ts)
        })
        .collect();
    if let Some(typed) = typed {
        let mut seen: Vec<&String> = Vec::new();
        let mut clash = false;
        for ts in &typed {
            for t in ts {
                // integer values are numbers too
                let overlaps = seen.iter().any(|s| {
                    *s == t
                        || (s.as_str() == "number" && t == "integer")
                        || (s.as_str() == "integer" && t == "number")
                });
                clash |= overlaps;
            }
            seen.extend(ts);
        }
        if !clash {
            return true;
        }
    }
    let consts: Option<Vec<&Value>> = branches.iter().map(|b| b.get("const")).collect();
    if let Some(consts) = consts {
        return consts
            .iter()
            .enumerate()
            .all(|(i, c)| !consts[..i].contains(c));
    }
    false
}

/// Removes the `null`s the model sent for optional properties (which the
/// strict form made required and nullable), so the input is what the
/// original `schema` declares. A `null` stays where the original schema
/// itself accepts it.
pub fn strip_optional_nulls(input: &mut Value, schema: &Value) {
    strip(input, schema, schema, 0);
}

fn strip(input: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_DEPTH * 2 {
        return;
    }
    let schema = resolve(schema, root);
    let Some(obj) = schema.as_object() else {
        return;
    };
    match input {
        Value::Object(fields) => {
            if let Some(Value::Object(props)) = obj.get("properties") {
                let required = required_of(obj);
                fields.retain(|name, value| {
                    !(value.is_null()
                        && !required.contains(&name.as_str())
                        && props
                            .get(name)
                            .is_some_and(|p| !accepts_null(resolve(p, root))))
                });
                for (name, value) in fields.iter_mut() {
                    if let Some(p) = props.get(name) {
                        strip(value, p, root, depth + 1);
                    }
                }
            } else if let Some(branch) = single_object_branch(obj) {
                strip(input, branch, root, depth + 1);
            }
        }
        Value::Array(values) => {
            if let Some(items) = obj.get("items") {
                for v in values {
                    strip(v, items, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The one object-shaped branch of an `anyOf`/`oneOf`, if exactly one is.
fn single_object_branch(obj: &Map<String, Value>) -> Option<&Value> {
    let list = obj.get("anyOf").or_else(|| obj.get("oneOf"))?.as_array()?;
    let mut objects = list.iter().filter(|b| b.get("properties").is_some());
    let first = objects.next()?;
    objects.next().is_none().then_some(first)
}

fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let Some(target) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    let path = target.trim_start_matches('#');
    root.pointer(path).unwrap_or(schema)
}
