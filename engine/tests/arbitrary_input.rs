//! Arbitrary JSON never crashes the pipeline: every input yields either a
//! successful call or an error result (SPEC §14).

use baton_engine::{Outcome, ToolUse};
use common::Harness;
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::common;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("text".to_string()),
                        Just("times".to_string()),
                        Just("mode".to_string()),
                        ".{0,8}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_json_gives_a_result(input in json_value(), raw_tool in any::<bool>()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let h = Harness::default_tools();
        // The raw tool's "mode" could ask it to hang or panic; keep it to
        // harmless modes so the property is about input handling.
        let input = match (raw_tool, &input) {
            (true, Value::Object(m)) => {
                let mut m = m.clone();
                m.remove("mode");
                Value::Object(m)
            }
            _ => input,
        };
        let name = if raw_tool { "Scripted" } else { "Echo" };
        let r = runtime.block_on(h.run(ToolUse::new("c", name, input.clone())));
        prop_assert_eq!(&r.call_id, "c");
        match r.outcome {
            Outcome::Success => prop_assert!(!r.is_error),
            Outcome::InvalidInput => {
                prop_assert!(r.is_error);
                prop_assert!(r.text().starts_with("<tool_use_error>"));
            }
            other => prop_assert!(false, "unexpected outcome {:?} for {}", other, input),
        }
    }

    #[test]
    fn any_text_input_gives_a_result(text in ".{0,80}") {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let h = Harness::default_tools();
        let r = runtime.block_on(h.run(ToolUse::from_json_text("c", "Echo", &text)));
        prop_assert!(matches!(r.outcome, Outcome::Success | Outcome::InvalidInput));
    }
}
