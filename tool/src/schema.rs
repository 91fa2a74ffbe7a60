//! Input validation against a tool's JSON Schema.
//!
//! Validators are compiled once, when the tool is built, and reused for every
//! call (compiling per call would dominate dispatch cost). Problems are turned
//! into [`SchemaProblem`]s in Baton's own words, each with the JSON path of the
//! offending value, so the model can fix all of them in one retry.

use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::Validator;
use serde_json::Value;

/// One thing wrong with an input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaProblem {
    /// A required parameter is absent.
    Missing {
        /// Where, as a JSON pointer (empty for the input itself).
        path: String,
        /// The parameter's name.
        parameter: String,
    },
    /// A parameter the schema does not allow.
    Unexpected {
        /// Where, as a JSON pointer.
        path: String,
        /// The parameter's name.
        parameter: String,
    },
    /// A value of the wrong JSON type.
    WrongType {
        /// Where, as a JSON pointer.
        path: String,
        /// The type(s) the schema wants.
        expected: String,
        /// The type given.
        given: String,
    },
    /// Any other rule broken (enum, range, pattern, …).
    Other {
        /// Where, as a JSON pointer.
        path: String,
        /// The validator's message.
        message: String,
    },
}

impl fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaProblem::Missing { path, parameter } => {
                write!(
                    f,
                    "missing required parameter `{parameter}` at {}",
                    show(path)
                )
            }
            SchemaProblem::Unexpected { path, parameter } => {
                write!(
                    f,
                    "unexpected parameter `{parameter}` at {} (not in the schema)",
                    show(path)
                )
            }
            SchemaProblem::WrongType {
                path,
                expected,
                given,
            } => write!(
                f,
                "wrong type at {}: expected {expected}, got {given}",
                show(path)
            ),
            SchemaProblem::Other { path, message } => write!(f, "at {}: {message}", show(path)),
        }
    }
}

fn show(path: &str) -> String {
    if path.is_empty() {
        "the top level".to_string()
    } else {
        format!("`{path}`")
    }
}

/// Name of a JSON value's type as the model would write it in a schema.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A compiled input schema.
pub struct CompiledSchema {
    schema: Value,
    validator: Validator,
}

crate::debug_fields! { CompiledSchema { schema } }

/// The schema itself is not a valid JSON Schema.
#[derive(Debug, thiserror::Error)]
#[error("invalid input schema: {0}")]
pub struct InvalidSchema(pub String);

impl CompiledSchema {
    /// Compiles `schema`. Tool input schemas must describe an object.
    pub fn compile(schema: Value) -> Result<Self, InvalidSchema> {
        match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None if schema.get("properties").is_some() => {}
            _ => {
                return Err(InvalidSchema(
                    "a tool's input schema must have \"type\": \"object\"".into(),
                ))
            }
        }
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| InvalidSchema(e.to_string()))?;
        Ok(CompiledSchema { schema, validator })
    }

    /// The JSON Schema the validator was compiled from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Every problem of `input`, in the validator's order.
    pub fn check(&self, input: &Value) -> Vec<SchemaProblem> {
        self.validator
            .iter_errors(input)
            .flat_map(|err| {
                let path = err.instance_path().as_str().to_string();
                match err.kind() {
                    ValidationErrorKind::Required { property } => vec![SchemaProblem::Missing {
                        path,
                        parameter: property
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| property.to_string()),
                    }],
                    ValidationErrorKind::AdditionalProperties { unexpected } => unexpected
                        .iter()
                        .map(|p| SchemaProblem::Unexpected {
                            path: path.clone(),
                            parameter: p.clone(),
                        })
                        .collect(),
                    ValidationErrorKind::Type { kind } => {
                        let expected = match kind {
                            TypeKind::Single(t) => t.to_string(),
                            TypeKind::Multiple(set) => set
                                .iter()
                                .map(|t| t.to_string())
                                .collect::<Vec<_>>()
                                .join(" or "),
                        };
                        vec![SchemaProblem::WrongType {
                            path,
                            expected,
                            given: json_type_name(err.instance()).to_string(),
                        }]
                    }
                    _ => vec![SchemaProblem::Other {
                        path,
                        message: err.to_string(),
                    }],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer"},
                "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}},
                          "additionalProperties": false}
            },
            "required": ["path"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn every_problem_is_listed_with_its_path() {
        let problems =
            schema().check(&json!({"limit": "ten", "extra": 1, "opts": {"deep": 3, "x": 0}}));
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        insta::assert_debug_snapshot!(text);
    }

    #[test]
    fn non_object_schema_is_rejected() {
        assert!(CompiledSchema::compile(json!({"type": "string"})).is_err());
    }
}
