//! The LLM segmenter against a stub OpenAI-compatible server on 127.0.0.1 (real HTTP over
//! loopback, no network): good answers, malformed answers, HTTP errors, retries, timeouts.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use envdist_core::{
    ActionId, EnvId, HarnessLevel, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory, TrajectoryStep,
};
use envdist_profiling::{LlmConfig, LlmSegmenter, SegmentError, Segmenter};

/// One scripted reply: HTTP status and body, or `None` to hang without answering.
type Reply = Option<(u16, String)>;

/// A request the stub received.
struct Seen {
    request_line: String,
    authorization: Option<String>,
    body: serde_json::Value,
}

fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        request_line: request_line.trim_end().to_string(),
        authorization,
        body: serde_json::from_slice(&body).ok()?,
    })
}

/// Serve `replies` in order, one per connection, then stop. Returns the base URL and a
/// receiver of what each request contained.
fn stub(replies: Vec<Reply>) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut held = Vec::new();
        for reply in replies {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let Some(seen) = read_request(&mut stream) else {
                return;
            };
            let _ = tx.send(seen);
            match reply {
                Some((status, body)) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
                // Keep the connection open without answering, so the client times out.
                None => held.push(stream),
            }
        }
        thread::sleep(Duration::from_millis(500));
    });
    (url, rx)
}

fn chat(content: &str) -> (u16, String) {
    let body = serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
    });
    (200, body.to_string())
}

fn trajectory() -> Trajectory {
    Trajectory {
        schema_version: TRAJECTORY_SCHEMA_VERSION,
        task: Task {
            env: EnvId::new("maze/classic"),
            seed: 4,
            harness: HarnessLevel::H1,
            scale: 7,
        },
        policy: "agent".into(),
        steps: [ActionId::RIGHT, ActionId::RIGHT, ActionId::INTERACT]
            .into_iter()
            .map(|action| TrajectoryStep {
                action,
                reward: 0.0,
                abilities: vec![],
            })
            .collect(),
        success: true,
        episode_return: 1.0,
    }
}

fn config(url: &str) -> LlmConfig {
    LlmConfig {
        api_key: Some("sk-test".into()),
        backoff_s: 0.0,
        timeout_s: 5.0,
        vocabulary: vec!["navigate".into(), "pick-up".into(), "use-key".into()],
        ..LlmConfig::new(url, "stub-model")
    }
}

#[test]
fn good_answer_is_parsed_and_request_is_as_documented() {
    let (url, rx) = stub(vec![Some(chat(
        "Here you go:\n```json\n[\"Navigate\", \"pick up\", \"navigate\"]\n```",
    ))]);
    let seg = LlmSegmenter::new(config(&url)).unwrap();
    assert_eq!(seg.name(), "llm:stub-model");
    let got = seg.segment(&trajectory()).unwrap();
    assert_eq!(got, ["navigate", "pick-up", "navigate"]);
    let seen = rx.recv().unwrap();
    assert_eq!(seen.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(seen.authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen.body["model"], "stub-model");
    assert_eq!(seen.body["temperature"], 0.0);
    assert_eq!(seen.body["messages"][0]["role"], "system");
    let user = seen.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("maze/classic") && user.contains("3. interact (reward 0)"));
    assert!(user.contains("Allowed abilities: navigate, pick-up, use-key"));
    assert!(rx.try_recv().is_err());
}

#[test]
fn malformed_answers_are_retried_a_bounded_number_of_times_then_reported() {
    let (url, rx) = stub(vec![
        Some(chat("The agent walked right and then interacted.")),
        Some(chat("[\"navigate\", 3]")),
        Some((200, "{\"not\": \"a chat completion\"}".into())),
        Some(chat("[\"navigate\"]")), // never requested: the segmenter gives up first
    ]);
    let seg = LlmSegmenter::new(config(&url)).unwrap();
    let e = seg.segment(&trajectory()).unwrap_err();
    match &e {
        SegmentError::Malformed {
            attempts, reason, ..
        } => {
            assert_eq!(*attempts, 3);
            assert!(reason.contains("chat-completions"), "{reason}");
        }
        other => panic!("expected a malformed-answer error, got {other}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("malformed answer after 3 attempt(s)"), "{msg}");
    assert_eq!(rx.try_iter().count(), 3);
}

#[test]
fn a_malformed_answer_then_a_good_one_succeeds_and_unknown_names_are_rejected() {
    let (url, rx) = stub(vec![
        Some(chat("[\"teleport\"]")),
        Some((503, "overloaded".into())),
        Some(chat("[\"use_key\"]")),
    ]);
    let seg = LlmSegmenter::new(config(&url)).unwrap();
    assert_eq!(seg.segment(&trajectory()).unwrap(), ["use-key"]);
    assert_eq!(rx.try_iter().count(), 3);

    let (url, _rx) = stub(vec![Some(chat("[\"teleport\"]"))]);
    let seg = LlmSegmenter::new(LlmConfig {
        max_attempts: 1,
        ..config(&url)
    })
    .unwrap();
    let e = seg.segment(&trajectory()).unwrap_err().to_string();
    assert!(e.contains("\"teleport\" is not one of the allowed"), "{e}");
}

#[test]
fn client_errors_fail_at_once_and_timeouts_and_refusals_are_bounded() {
    let (url, rx) = stub(vec![Some((401, "{\"error\":\"bad key\"}".into())), None]);
    let seg = LlmSegmenter::new(config(&url)).unwrap();
    let e = seg.segment(&trajectory()).unwrap_err();
    assert!(matches!(e, SegmentError::Http { attempts: 1, .. }), "{e}");
    assert!(e.to_string().contains("HTTP 401"), "{e}");
    assert_eq!(rx.try_iter().count(), 1);

    let (url, rx) = stub(vec![None, None]);
    let seg = LlmSegmenter::new(LlmConfig {
        timeout_s: 0.3,
        max_attempts: 2,
        ..config(&url)
    })
    .unwrap();
    let e = seg.segment(&trajectory()).unwrap_err();
    assert!(matches!(e, SegmentError::Http { attempts: 2, .. }), "{e}");
    assert_eq!(rx.try_iter().count(), 2);

    // A port with nothing listening: connection refused, retried, then reported.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let seg = LlmSegmenter::new(config(&format!("http://127.0.0.1:{port}/v1"))).unwrap();
    let e = seg.segment(&trajectory()).unwrap_err();
    assert!(matches!(e, SegmentError::Http { attempts: 3, .. }), "{e}");
}

#[test]
fn config_is_checked_before_any_request() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let e = LlmConfig::from_vars(vars(&[("ENVDIST_LLM_MODEL", "m")])).unwrap_err();
    assert!(e.to_string().contains("ENVDIST_LLM_URL"), "{e}");
    let c = LlmConfig::from_vars(vars(&[
        ("ENVDIST_LLM_URL", "http://127.0.0.1:1/v1"),
        ("ENVDIST_LLM_MODEL", "m"),
        ("ENVDIST_LLM_KEY", "k"),
        ("ENVDIST_LLM_ATTEMPTS", "5"),
    ]))
    .unwrap();
    assert_eq!((c.max_attempts, c.api_key.as_deref()), (5, Some("k")));
    let e = LlmConfig::from_vars(vars(&[
        ("ENVDIST_LLM_URL", "http://x"),
        ("ENVDIST_LLM_MODEL", "m"),
        ("ENVDIST_LLM_TIMEOUT_S", "soon"),
    ]))
    .unwrap_err();
    assert!(e.to_string().contains("ENVDIST_LLM_TIMEOUT_S"), "{e}");
    let e = LlmSegmenter::new(LlmConfig::new("ftp://x", "m")).unwrap_err();
    assert!(e.to_string().contains("base_url"), "{e}");
    let e = LlmSegmenter::new(LlmConfig {
        max_attempts: 0,
        ..LlmConfig::new("http://127.0.0.1:1", "m")
    })
    .unwrap_err();
    assert!(e.to_string().contains("max_attempts"), "{e}");
}
