//! Strict schemas for OpenAI and reversible names.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use baton_engine::wire::names::{is_allowed, wire_name, NameMap};
use baton_engine::wire::strict::{strip_optional_nulls, to_strict};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Checks the strict subset independently of the transform: every object
/// closed with every property required, only supported keywords.
fn assert_strict_subset(schema: &Value, path: &str) {
    let Some(obj) = schema.as_object() else {
        panic!("{path}: not an object schema: {schema}");
    };
    const ALLOWED: &[&str] = &[
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
        "format",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
    ];
    for key in obj.keys() {
        assert!(
            ALLOWED.contains(&key.as_str()),
            "{path}: keyword `{key}` is not in the strict subset"
        );
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        assert_eq!(
            obj.get("additionalProperties"),
            Some(&json!(false)),
            "{path}: object not closed"
        );
        let required: Vec<&str> = obj["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for (name, prop) in props {
            assert!(
                required.contains(&name.as_str()),
                "{path}: `{name}` not required"
            );
            assert_strict_subset(prop, &format!("{path}.{name}"));
        }
    }
    for key in ["items"] {
        if let Some(s) = obj.get(key) {
            assert_strict_subset(s, &format!("{path}.{key}"));
        }
    }
    for key in ["anyOf"] {
        for (i, b) in obj
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            assert_strict_subset(b, &format!("{path}.{key}[{i}]"));
        }
    }
    for key in ["$defs", "definitions"] {
        for (n, d) in obj
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            assert_strict_subset(d, &format!("{path}.{key}.{n}"));
        }
    }
    if let Some(f) = obj.get("format").and_then(Value::as_str) {
        assert!(
            !f.starts_with("uint") && !f.starts_with("int"),
            "{path}: format {f} kept"
        );
    }
}

fn sample() -> Value {
    json!({
        "type": "object",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {
            "path": {"type": "string", "description": "where"},
            "limit": {"type": "integer", "format": "uint64", "minimum": 0, "default": null},
            "mode": {"$ref": "#/$defs/Mode"},
            "tags": {"type": "array", "items": {"type": "object", "properties": {
                "k": {"type": "string"}, "v": {"type": ["string", "null"]}
            }, "required": ["k"]}},
            "kind": {"oneOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]},
            "flag": {"type": "boolean", "default": false}
        },
        "required": ["path"],
        "additionalProperties": false,
        "$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}}
    })
}

#[test]
fn a_typical_schema_becomes_strict_and_keeps_its_constraints() {
    let strict = to_strict(&sample()).expect("expressible");
    assert_strict_subset(&strict, "$");
    let props = &strict["properties"];
    assert_eq!(props["limit"]["type"], json!(["integer", "null"]));
    assert_eq!(props["limit"]["minimum"], json!(0));
    assert_eq!(
        props["mode"],
        json!({"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}]})
    );
    assert_eq!(props["kind"]["anyOf"].as_array().unwrap().len(), 2);
    assert_eq!(
        props["path"]["type"],
        json!("string"),
        "required stays non-null"
    );
    // Nested optional `v` was already nullable: unchanged.
    assert_eq!(
        props["tags"]["items"]["properties"]["v"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn schemas_that_cannot_be_expressed_stay_non_strict() {
    let cases = [
        json!({"type": "object", "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}}}),
        json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}),
        json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}}),
        json!({"type": "object", "properties": {"a": {"not": {"type": "string"}}}}),
        json!({"type": "object", "properties": {"a": {"type": "integer", "format": "weird"}}}),
        json!({"type": "object", "patternProperties": {"^x": {}}}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"type": "string"}),
        json!({"type": "object", "properties": {"a": true}}),
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}),
    ];
    for schema in cases {
        assert_eq!(to_strict(&schema), None, "{schema}");
    }
}

#[test]
fn nulls_for_optional_fields_go_back_to_absent() {
    let schema = sample();
    let mut input = json!({
        "path": "/a", "limit": null, "mode": null, "flag": null, "kind": null,
        "tags": [{"k": "x", "v": null}]
    });
    strip_optional_nulls(&mut input, &schema);
    // `v` accepts null in the original schema, so its null stays.
    assert_eq!(
        input,
        json!({"path": "/a", "tags": [{"k": "x", "v": null}]})
    );
}

fn optional_keys() -> Vec<(&'static str, Value)> {
    vec![
        ("limit", json!(5)),
        ("mode", json!("fast")),
        ("flag", json!(true)),
        ("kind", json!("b")),
        ("tags", json!([{"k": "a"}, {"k": "b", "v": "c"}])),
    ]
}

proptest! {
    /// Any valid input, written as the strict schema forces (absent → null),
    /// validates against the strict schema, and stripping gives it back.
    #[test]
    fn strict_round_trip(present in proptest::collection::vec(any::<bool>(), 5)) {
        let original = sample();
        let strict = to_strict(&original).unwrap();
        let mut input = json!({"path": "/x"});
        let mut forced = json!({"path": "/x"});
        for ((key, value), on) in optional_keys().into_iter().zip(present) {
            if on {
                input[key] = value.clone();
                forced[key] = value;
            } else {
                forced[key] = Value::Null;
            }
        }
        // Nested optional `v` forced to null where absent.
        if let Some(tags) = forced.get_mut("tags").and_then(Value::as_array_mut) {
            for t in tags.iter_mut() {
                t.as_object_mut().unwrap().entry("v").or_insert(Value::Null);
            }
        }
        let original_validator = jsonschema::validator_for(&original).unwrap();
        prop_assert!(original_validator.is_valid(&input), "sample input invalid: {input}");
        let strict_validator = jsonschema::validator_for(&strict).unwrap();
        prop_assert!(strict_validator.is_valid(&forced), "forced input rejected by strict: {forced}");
        let mut back = forced.clone();
        strip_optional_nulls(&mut back, &original);
        prop_assert!(original_validator.is_valid(&back), "stripped input invalid: {back}");
        // `v: null` is kept (the original accepts it); otherwise identical.
        let mut expected = input.clone();
        if let Some(tags) = expected.get_mut("tags").and_then(Value::as_array_mut) {
            for t in tags.iter_mut() {
                t.as_object_mut().unwrap().entry("v").or_insert(Value::Null);
            }
        }
        prop_assert_eq!(back, expected);
    }

    /// Every name maps to an allowed one, and back.
    #[test]
    fn names_map_reversibly(names in proptest::collection::hash_set("[a-zA-Z0-9_.:/ -]{1,90}", 1..8)) {
        let names: Vec<String> = names.into_iter().collect();
        let map = NameMap::for_names(names.clone());
        let mut seen = std::collections::HashSet::new();
        for name in &names {
            let wire = wire_name(name);
            prop_assert!(is_allowed(&wire), "{wire:?}");
            prop_assert!(seen.insert(wire.to_string()), "two names map to {wire}");
            prop_assert_eq!(map.tool_name(&wire), name.as_str());
            if is_allowed(name) {
                prop_assert_eq!(wire.as_ref(), name.as_str());
            }
        }
    }
}

#[test]
fn mcp_style_names_are_mapped() {
    let long = format!("mcp__server__{}", "x".repeat(80));
    for name in ["mcp__github.com__search", long.as_str(), "a b"] {
        let wire = wire_name(name);
        assert!(is_allowed(&wire), "{wire}");
        assert_ne!(wire, name);
    }
    assert_eq!(wire_name("mcp__fs__read_file"), "mcp__fs__read_file");
}
