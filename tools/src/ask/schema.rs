//! `AskUserQuestionInput` as JSON Schema, written from Claude Code's
//! `sdk-tools.d.ts` (descriptions and limits as the model was trained on).

use serde_json::{json, Value};

fn option() -> Value {
    json!({
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "The display text for this option that the user will see and select. Should be concise (1-5 words) and clearly describe the choice."},
            "description": {"type": "string", "description": "Explanation of what this option means or what will happen if chosen. Useful for providing context about trade-offs or implications."},
            "preview": {"type": "string", "description": "Optional preview content rendered when this option is focused. Use for mockups, code snippets, or visual comparisons that help users compare options."}
        },
        "required": ["label", "description"],
        "additionalProperties": false
    })
}

fn question() -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The complete question to ask the user. Should be clear, specific, and end with a question mark. If multiSelect is true, phrase it accordingly."},
            "header": {"type": "string", "description": "Very short label displayed as a chip/tag (max 12 chars). Examples: \"Auth method\", \"Library\", \"Approach\"."},
            "options": {
                "type": "array",
                "description": "The available choices for this question. Must have 2-4 options. Each option should be a distinct, mutually exclusive choice (unless multiSelect is enabled). There should be no 'Other' option, that will be provided automatically.",
                "items": option(),
                "minItems": 2,
                "maxItems": 4
            },
            "multiSelect": {"type": "boolean", "description": "Set to true to allow the user to select multiple options instead of just one."}
        },
        "required": ["question", "header", "options", "multiSelect"],
        "additionalProperties": false
    })
}

pub(super) fn input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": "Questions to ask the user (1-4 questions)",
                "items": question(),
                "minItems": 1,
                "maxItems": 4
            },
            "answers": {
                "type": "object",
                "description": "User answers collected by the permission component",
                "additionalProperties": {"type": "string"}
            },
            "annotations": {
                "type": "object",
                "description": "Optional per-question annotations from the user (e.g., notes on preview selections). Keyed by question text.",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "preview": {"type": "string"},
                        "notes": {"type": "string"}
                    },
                    "additionalProperties": false
                }
            },
            "metadata": {
                "type": "object",
                "description": "Optional metadata for tracking and analytics purposes. Not displayed to user.",
                "properties": {"source": {"type": "string"}},
                "additionalProperties": false
            }
        },
        "required": ["questions"],
        "additionalProperties": false
    })
}
