//! The `approve` line: the host's answer to a `permission_request`.
//!
//! `decision` is `allow` or `deny`. An allow may carry `updated_input` (the
//! input to run instead; Baton checks it again as if the model had sent it)
//! and `remember` (add the request's `suggestion` as a session allow rule).
//! A deny may carry `reason` (shown to the model) and `interrupt` (also
//! interrupt the batch, as a `cancel` interrupt). An allow may instead
//! carry `mode`: allow and switch the session to that permission mode. A field that does not
//! belong to the decision, or has the wrong type, makes the whole line an
//! error: a host that meant something else must not get a plain allow.

use baton::engine::Approval;
use serde_json::Value;

use super::strict::ApproveLine;

/// The answer `line` gives. Its fields' types were checked when it was
/// parsed; here, which fields go with which decision.
pub(super) fn approval(line: &ApproveLine) -> Result<Approval, String> {
    match line.decision.as_str() {
        "allow" => {
            let stray = [
                ("reason", line.reason.is_some()),
                ("interrupt", line.interrupt.is_some()),
            ];
            if let Some((field, _)) = stray.into_iter().find(|(_, set)| *set) {
                return Err(format!(
                    "`{field}` belongs to a `deny` decision, not to `allow`"
                ));
            }
            let remember = line.remember.unwrap_or(false);
            let updated_input = line.updated_input.clone().map(Value::Object);
            // `mode`: allow and switch the session to that mode (how a host
            // approves `ExitPlanMode` into, say, acceptEdits).
            if let Some(mode) = &line.mode {
                let mode = mode.parse::<baton::engine::PermissionMode>()?;
                if updated_input.is_some() || remember {
                    return Err(
                        "`mode` cannot be combined with `updated_input` or `remember`".into(),
                    );
                }
                return Ok(Approval::AllowAndSetMode { mode });
            }
            Ok(if updated_input.is_none() && !remember {
                Approval::Allow
            } else {
                Approval::AllowWith {
                    updated_input,
                    remember,
                }
            })
        }
        "deny" => {
            let stray = [
                ("updated_input", line.updated_input.is_some()),
                ("remember", line.remember.is_some()),
                ("mode", line.mode.is_some()),
            ];
            if let Some((field, _)) = stray.into_iter().find(|(_, set)| *set) {
                return Err(format!(
                    "`{field}` belongs to an `allow` decision, not to `deny`"
                ));
            }
            let reason = line.reason.clone();
            Ok(if line.interrupt.unwrap_or(false) {
                Approval::DenyAndInterrupt { reason }
            } else {
                Approval::Deny { reason }
            })
        }
        _ => Err("`decision` must be \"allow\" or \"deny\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The line as the dispatcher parses it, then its answer.
    fn answer(mut v: Value) -> Result<Approval, String> {
        v["type"] = json!("approve");
        v["request_id"] = json!(1);
        super::super::strict::parse::<ApproveLine>("approve", &v).and_then(|l| approval(&l))
    }

    #[test]
    fn each_field_maps_to_its_answer() {
        let a = answer;
        assert_eq!(a(json!({"decision": "allow"})), Ok(Approval::Allow));
        assert_eq!(
            a(json!({"decision": "allow", "remember": true})),
            Ok(Approval::AllowWith {
                updated_input: None,
                remember: true
            })
        );
        assert_eq!(
            a(json!({"decision": "allow", "updated_input": {"command": "ls"}})),
            Ok(Approval::AllowWith {
                updated_input: Some(json!({"command": "ls"})),
                remember: false
            })
        );
        assert_eq!(
            a(json!({"decision": "deny", "reason": "no", "interrupt": true})),
            Ok(Approval::DenyAndInterrupt {
                reason: Some("no".into())
            })
        );
        assert_eq!(
            a(json!({"decision": "allow", "mode": "acceptEdits"})),
            Ok(Approval::AllowAndSetMode {
                mode: baton::engine::PermissionMode::AcceptEdits
            })
        );
        assert_eq!(
            a(json!({"decision": "deny"})),
            Ok(Approval::Deny { reason: None })
        );
    }

    #[test]
    fn mixed_up_fields_are_errors() {
        for bad in [
            json!({"decision": "allow", "interrupt": true}),
            json!({"decision": "allow", "reason": "x"}),
            json!({"decision": "deny", "remember": true}),
            json!({"decision": "deny", "updated_input": {}}),
            json!({"decision": "allow", "updated_input": "ls"}),
            json!({"decision": "allow", "remember": "yes"}),
            json!({"decision": "deny", "reason": 3}),
            json!({"decision": "deny", "mode": "plan"}),
            json!({"decision": "allow", "mode": "sideways"}),
            json!({"decision": "allow", "mode": "acceptEdits", "remember": true}),
            json!({"decision": "maybe"}),
        ] {
            assert!(answer(bad.clone()).is_err(), "{bad}");
        }
    }
}
