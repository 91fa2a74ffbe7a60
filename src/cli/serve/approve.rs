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

pub fn approval(msg: &Value) -> Result<Approval, String> {
    let flag = |name: &str| -> Result<bool, String> {
        match msg.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("`{name}` must be true or false")),
        }
    };
    let present = |name: &str| msg.get(name).is_some_and(|v| !v.is_null());
    match msg.get("decision").and_then(Value::as_str) {
        Some("allow") => {
            if let Some(field) = ["reason", "interrupt"].into_iter().find(|f| present(f)) {
                return Err(format!(
                    "`{field}` belongs to a `deny` decision, not to `allow`"
                ));
            }
            let remember = flag("remember")?;
            let updated_input = match msg.get("updated_input") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Object(_)) => Some(v.clone()),
                Some(_) => {
                    return Err("`updated_input` must be an object (the tool's input)".into())
                }
            };
            // `mode`: allow and switch the session to that mode (how a host
            // approves `ExitPlanMode` into, say, acceptEdits).
            if let Some(mode) = msg.get("mode").filter(|v| !v.is_null()) {
                let mode = mode
                    .as_str()
                    .ok_or("`mode` must be a permission mode name")?
                    .parse::<baton::engine::PermissionMode>()?;
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
        Some("deny") => {
            if let Some(field) = ["updated_input", "remember", "mode"]
                .into_iter()
                .find(|f| present(f))
            {
                return Err(format!(
                    "`{field}` belongs to an `allow` decision, not to `deny`"
                ));
            }
            let reason = match msg.get("reason") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err("`reason` must be a string".into()),
            };
            Ok(if flag("interrupt")? {
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

    #[test]
    fn each_field_maps_to_its_answer() {
        let a = |v: Value| approval(&v);
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
            assert!(approval(&bad).is_err(), "{bad}");
        }
    }
}
