use super::*;
use crate::test_support::Harness;
use baton_engine::questions::{install, QuestionAsker};
use baton_engine::Outcome;
use std::sync::{Arc, Mutex};

fn q(question: &str, header: &str, labels: &[&str], multi: bool) -> Value {
    let options: Vec<Value> = labels
        .iter()
        .map(|l| json!({"label": l, "description": format!("pick {l}")}))
        .collect();
    json!({"question": question, "header": header, "options": options, "multiSelect": multi})
}

struct Scripted {
    answer: QuestionAnswer,
    seen: Mutex<Vec<QuestionRequest>>,
}

#[async_trait]
impl QuestionAsker for Scripted {
    async fn ask(&self, request: QuestionRequest) -> QuestionAnswer {
        self.seen.lock().unwrap().push(request);
        self.answer.clone()
    }
}

#[tokio::test]
async fn claude_codes_limits_are_enforced_before_anyone_is_asked() {
    let h = Harness::new(vec![tool().unwrap()]);
    let dir = h.dir.path().to_path_buf();
    let bad = [
        json!({"questions": []}),
        json!({"questions": [q("A?", "h", &["only"], false)]}),
        json!({"questions": [q("A?", "h", &["1", "2", "3", "4", "5"], false)]}),
        json!({"questions": [q("A?", "thirteen char", &["x", "y"], false)]}),
        json!({"questions": [q("A?", "h", &["x", "x"], false)]}),
        json!({"questions": [q("A?", "h", &["x", "y"], false), q("A?", "h", &["x", "y"], false)]}),
        json!({"questions": (0..5).map(|i| q(&format!("Q{i}?"), "h", &["x", "y"], false)).collect::<Vec<_>>()}),
        json!({"questions": [{"question": "A?", "header": "h", "options": [{"label": "x", "description": "d"}, {"label": "y", "description": "d"}]}]}),
        json!({"questions": [q("A?", "h", &["x", "y"], false)], "extra": 1}),
    ];
    for input in bad {
        let r = h.run("AskUserQuestion", input.clone(), &dir).await;
        assert!(
            matches!(r.outcome, Outcome::InvalidInput | Outcome::ValidationFailed),
            "{input}: {}",
            r.text()
        );
    }
    // Twelve characters (not bytes) is the limit.
    let ok = json!({"questions": [q("A?", "Ünïcödé 12ch", &["x", "y"], false)]});
    let r = h.run("AskUserQuestion", ok, &dir).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
}

#[tokio::test]
async fn without_an_asker_the_model_is_told_to_go_on() {
    let h = Harness::new(vec![tool().unwrap()]);
    let input = json!({"questions": [q("Which db?", "Database", &["pg", "sqlite"], false)]});
    let r = h.run("AskUserQuestion", input, h.dir.path()).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert!(r.text().contains("No one can answer"), "{}", r.text());
    assert!(
        r.text().contains("Go on without the answers"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn answers_come_back_in_claude_codes_shape() {
    let h = Harness::new(vec![tool().unwrap()]);
    let mut answers = BTreeMap::new();
    answers.insert("Which db?".to_string(), "pg".to_string());
    answers.insert("Which extras?".to_string(), "auth, cache".to_string());
    let asker = Arc::new(Scripted {
        answer: QuestionAnswer::Answered {
            answers,
            annotations: Some(json!({"Which db?": {"notes": "managed"}})),
            response: None,
        },
        seen: Mutex::new(Vec::new()),
    });
    install(&h.session, asker.clone());
    let questions = json!([
        q("Which db?", "Database", &["pg", "sqlite"], false),
        q("Which extras?", "Extras", &["auth", "cache", "logs"], true)
    ]);
    let r = h
        .run(
            "AskUserQuestion",
            json!({"questions": questions}),
            h.dir.path(),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(r.text().contains("\"Which db?\"=\"pg\""), "{}", r.text());
    assert!(r.text().contains("\"Which extras?\"=\"auth, cache\""));
    let seen = asker.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].questions, questions);
}

#[tokio::test]
async fn a_declined_question_says_so_and_still_lets_the_model_go_on() {
    let h = Harness::new(vec![tool().unwrap()]);
    install(
        &h.session,
        Arc::new(Scripted {
            answer: QuestionAnswer::Declined {
                reason: Some("decide yourself".into()),
            },
            seen: Mutex::new(Vec::new()),
        }),
    );
    let input = json!({"questions": [q("Tabs?", "Indent", &["tabs", "spaces"], false)]});
    let r = h.run("AskUserQuestion", input, h.dir.path()).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert!(r.text().contains("declined"), "{}", r.text());
    assert!(r.text().contains("decide yourself"));
}
