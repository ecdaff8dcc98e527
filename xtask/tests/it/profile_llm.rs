//! `xtask profile --segmenter llm` end to end against a stub chat-completions server on
//! 127.0.0.1 (real HTTP over loopback, no network).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::mpsc;
use std::thread;

use crate::{assert_succeeded, temp_dir};

/// Answer `n` requests with the given content, reporting each request body.
fn stub(n: usize, content: &'static str) -> (String, mpsc::Receiver<serde_json::Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for _ in 0..n {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let _ = tx.send(serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null));
            let answer = serde_json::json!({
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, rx)
}

#[test]
fn llm_segmenter_profiles_a_log_through_the_cli() {
    let d = temp_dir("profile-llm");
    std::fs::create_dir_all(&d).unwrap();
    let log = d.join("log.jsonl");
    let step = |episode: u32, action: &str| {
        serde_json::json!({"schema_version": 1, "env": "maze/classic", "episode": episode, "action": action})
            .to_string()
    };
    std::fs::write(
        &log,
        [step(1, "up"), step(1, "right"), step(2, "left")].join("\n"),
    )
    .unwrap();
    let (url, rx) = stub(2, "```json\n[\"navigate\", \"goal-localise\"]\n```");
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["profile", "--segmenter", "llm", "--json", "--from-jsonl"])
        .arg(&log)
        .arg("--out")
        .arg(d.join("out"))
        .env("ENVDIST_LLM_URL", &url)
        .env("ENVDIST_LLM_MODEL", "stub")
        .env("ENVDIST_LLM_KEY", "k")
        .output()
        .unwrap();
    assert_succeeded(&out);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["segmenter"], "llm:stub");
    assert_eq!(s["trajectories"], 2);
    assert_eq!(s["atomic_abilities"], 2);
    let bodies: Vec<serde_json::Value> = rx.try_iter().collect();
    assert_eq!(bodies.len(), 2);
    let user = bodies[0]["messages"][1]["content"].as_str().unwrap();
    // The suite's ability catalogue is the vocabulary.
    assert!(
        user.contains("Allowed abilities:") && user.contains("wall-follow"),
        "{user}"
    );

    // Without the required variables the command fails before doing any work.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["profile", "--segmenter", "llm", "--from-jsonl"])
        .arg(&log)
        .arg("--out")
        .arg(d.join("out2"))
        .env_remove("ENVDIST_LLM_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ENVDIST_LLM_URL"));
    let _ = std::fs::remove_dir_all(&d);
}
