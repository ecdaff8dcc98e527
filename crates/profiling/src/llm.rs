//! The LLM segmenter: asks an OpenAI-compatible chat-completions endpoint to cut a trajectory
//! into atomic abilities, as the paper does with GPT-5.
//!
//! # Request
//! `POST {base_url}/chat/completions` with `Authorization: Bearer {api_key}` (when a key is
//! set) and the body
//! `{"model": M, "temperature": 0, "messages": [{"role":"system",...},{"role":"user",...}]}`.
//! The system message ([`SYSTEM_PROMPT`]) states the task and the answer format; the user
//! message ([`LlmSegmenter::user_prompt`]) gives the environment id, scale and harness level,
//! the allowed ability names (when a vocabulary is configured), the outcome, and the numbered
//! steps as `action (reward r)`, at most `max_prompt_steps` of them. Env step tags are *not*
//! sent: the point of an annotator is to work where no tags exist.
//!
//! # Answer
//! The first choice's `message.content` must contain one JSON array of strings (a Markdown
//! code fence around it is fine; text before or after the outermost `[` ... `]` is ignored).
//! Each name is normalised (trimmed, lowercase, spaces and underscores to `-`); with a
//! vocabulary, every name must be in it. Anything else is a malformed answer.
//!
//! # Retries and timeouts
//! Each request has a global timeout. Transport errors, timeouts, HTTP 429 and 5xx, and
//! malformed answers are retried, up to `max_attempts` requests in all, with a doubling pause
//! starting at `backoff`. Other HTTP statuses (401, 404, ...) fail at once: retrying cannot
//! fix a bad key or model name. The agent never uses a proxy, so a loopback URL stays on
//! loopback. Plain `http://` works in the default build; `https://` needs the crate's `tls`
//! feature.

use envdist_core::InvalidValue;
use std::time::Duration;

use envdist_core::Trajectory;
use serde::{Deserialize, Serialize};

use crate::segment::{SegmentError, Segmenter};

/// The system message sent with every request.
pub const SYSTEM_PROMPT: &str = "You annotate trajectories of an agent acting in a visual \
environment. Cut the trajectory into consecutive segments, one per atomic ability exercised \
(for example navigate, pick-up, count, compare-colour), in the order they happen; merge \
consecutive steps that exercise the same ability into one segment. Answer with only a JSON \
array of ability names, for example [\"navigate\", \"pick-up\", \"navigate\"], with no other \
text. Use lowercase names with hyphens. When a list of allowed abilities is given, use only \
names from it.";

/// Settings of the LLM segmenter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmConfig {
    /// Base URL of the OpenAI-compatible API, e.g. `http://127.0.0.1:8000/v1`; requests go to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    /// Model name sent in the request.
    pub model: String,
    /// Bearer token, if the endpoint wants one.
    #[serde(skip_serializing)]
    pub api_key: Option<String>,
    /// Timeout of one request, in seconds (default 60).
    pub timeout_s: f32,
    /// Requests per trajectory at most, first try included (default 3).
    pub max_attempts: u32,
    /// Pause before the first retry, in seconds, doubled each retry (default 0.5).
    pub backoff_s: f32,
    /// Allowed ability names; empty means free-form names.
    pub vocabulary: Vec<String>,
    /// Steps listed in the prompt at most; longer trajectories are cut (default 200).
    pub max_prompt_steps: usize,
}

impl LlmConfig {
    /// A config with the documented defaults.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout_s: 60.0,
            max_attempts: 3,
            backoff_s: 0.5,
            vocabulary: Vec::new(),
            max_prompt_steps: 200,
        }
    }

    /// Read `ENVDIST_LLM_URL`, `ENVDIST_LLM_MODEL` (both required), `ENVDIST_LLM_KEY`,
    /// `ENVDIST_LLM_TIMEOUT_S` and `ENVDIST_LLM_ATTEMPTS` from the process environment.
    pub fn from_env() -> Result<Self, SegmentError> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// As [`LlmConfig::from_env`], reading variables through `get`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, SegmentError> {
        let required = |k: &str, what: &str| {
            get(k)
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| SegmentError::Config(InvalidValue::new(k, what, "nothing")))
        };
        let mut c = Self::new(
            required(
                "ENVDIST_LLM_URL",
                "a base URL such as http://127.0.0.1:8000/v1",
            )?,
            required("ENVDIST_LLM_MODEL", "a model name")?,
        );
        c.api_key = get("ENVDIST_LLM_KEY").filter(|k| !k.is_empty());
        if let Some(t) = get("ENVDIST_LLM_TIMEOUT_S") {
            c.timeout_s = t.trim().parse().map_err(|_| {
                SegmentError::Config(InvalidValue::new(
                    "ENVDIST_LLM_TIMEOUT_S",
                    "seconds as a number",
                    t.clone(),
                ))
            })?;
        }
        if let Some(a) = get("ENVDIST_LLM_ATTEMPTS") {
            c.max_attempts = a.trim().parse().map_err(|_| {
                SegmentError::Config(InvalidValue::new(
                    "ENVDIST_LLM_ATTEMPTS",
                    "a positive integer",
                    a.clone(),
                ))
            })?;
        }
        Ok(c)
    }

    fn validate(&self) -> Result<(), SegmentError> {
        let bad = |field: &str, expected: &str, found: String| {
            SegmentError::Config(InvalidValue::new(field, expected, found))
        };
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(bad("base_url", "an http:// or https:// URL", url.into()));
        }
        if url.starts_with("https://") && !cfg!(feature = "tls") {
            return Err(bad(
                "base_url",
                "an http:// URL (build envdist-profiling with the `tls` feature for https)",
                url.into(),
            ));
        }
        if self.model.trim().is_empty() {
            return Err(bad("model", "a model name", "an empty string".into()));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(bad(
                "timeout_s",
                "a positive number of seconds",
                self.timeout_s.to_string(),
            ));
        }
        if self.max_attempts == 0 {
            return Err(bad("max_attempts", "at least 1", "0".into()));
        }
        if !(self.backoff_s.is_finite() && self.backoff_s >= 0.0) {
            return Err(bad(
                "backoff_s",
                "a non-negative number of seconds",
                self.backoff_s.to_string(),
            ));
        }
        Ok(())
    }
}

/// Segments trajectories by asking an LLM (see the module docs for the protocol).
pub struct LlmSegmenter {
    config: LlmConfig,
    url: String,
    agent: ureq::Agent,
    name: String,
    vocabulary: Vec<String>,
}

impl std::fmt::Debug for LlmSegmenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSegmenter")
            .field("url", &self.url)
            .field("model", &self.config.model)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct ChatMessage<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    temperature: f32,
    messages: [ChatMessage<'a>; 2],
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<ChatChoice>,
}

#[derive(Deserialize)]
struct ChatChoice {
    message: ChatAnswer,
}

#[derive(Deserialize)]
struct ChatAnswer {
    content: Option<String>,
}

enum Attempt {
    Done(Vec<String>),
    Retry(SegmentError),
    Fatal(SegmentError),
}

/// `Navigate`, ` pick up`, `pick_up` -> `navigate`, `pick-up`.
fn normalise(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "..."
    }
}

impl LlmSegmenter {
    /// A segmenter for `config`; fails on an unusable config (no request is made).
    pub fn new(config: LlmConfig) -> Result<Self, SegmentError> {
        config.validate()?;
        let url = format!(
            "{}/chat/completions",
            config.base_url.trim().trim_end_matches('/')
        );
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs_f32(config.timeout_s)))
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .into();
        let vocabulary = config.vocabulary.iter().map(|v| normalise(v)).collect();
        Ok(Self {
            name: format!("llm:{}", config.model),
            url,
            agent,
            vocabulary,
            config,
        })
    }

    /// The user message for `trajectory` (documented in the module docs).
    pub fn user_prompt(&self, trajectory: &Trajectory) -> String {
        use std::fmt::Write;
        let t = &trajectory.task;
        let mut p = format!(
            "Environment: {} (state scale {}, harness level {})\n",
            t.env, t.scale, t.harness
        );
        if self.vocabulary.is_empty() {
            p.push_str("Allowed abilities: any (lowercase, hyphenated names)\n");
        } else {
            let _ = writeln!(p, "Allowed abilities: {}", self.vocabulary.join(", "));
        }
        let _ = writeln!(
            p,
            "Outcome: {} with return {} after {} steps",
            if trajectory.success {
                "solved"
            } else {
                "not solved"
            },
            trajectory.episode_return,
            trajectory.steps.len()
        );
        p.push_str("Steps:\n");
        for (i, s) in trajectory
            .steps
            .iter()
            .take(self.config.max_prompt_steps)
            .enumerate()
        {
            let _ = writeln!(p, "{}. {} (reward {})", i + 1, s.action, s.reward);
        }
        if trajectory.steps.len() > self.config.max_prompt_steps {
            let _ = writeln!(
                p,
                "... ({} more steps not shown)",
                trajectory.steps.len() - self.config.max_prompt_steps
            );
        }
        p
    }

    /// Parse an answer's text into ability names (documented in the module docs).
    pub fn parse_answer(&self, content: &str) -> Result<Vec<String>, String> {
        let (Some(start), Some(end)) = (content.find('['), content.rfind(']')) else {
            return Err("no JSON array in the answer".into());
        };
        if end < start {
            return Err("no JSON array in the answer".into());
        }
        let names: Vec<String> = serde_json::from_str(&content[start..=end])
            .map_err(|e| format!("the array is not a JSON list of strings: {e}"))?;
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            let n = normalise(&n);
            if n.is_empty() {
                return Err("an empty ability name".into());
            }
            if !self.vocabulary.is_empty() && !self.vocabulary.contains(&n) {
                return Err(format!(
                    "ability {n:?} is not one of the allowed abilities ({})",
                    self.vocabulary.join(", ")
                ));
            }
            out.push(n);
        }
        Ok(out)
    }

    fn attempt(&self, body: &ChatRequest<'_>, attempts: u32) -> Attempt {
        let http = |message: String| SegmentError::Http {
            url: self.url.clone(),
            attempts,
            message,
        };
        let mut req = self.agent.post(&self.url);
        if let Some(key) = &self.config.api_key {
            req = req.header("Authorization", format!("Bearer {key}"));
        }
        let mut resp = match req.send_json(body) {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(http(e.to_string())),
        };
        let status = resp.status().as_u16();
        let text = match resp.body_mut().read_to_string() {
            Ok(t) => t,
            Err(e) => return Attempt::Retry(http(format!("reading the answer: {e}"))),
        };
        if status != 200 {
            let err = http(format!("HTTP {status}: {}", truncate(&text, 300)));
            return if status == 429 || status >= 500 {
                Attempt::Retry(err)
            } else {
                Attempt::Fatal(err)
            };
        }
        let malformed = |reason: String, answer: &str| {
            Attempt::Retry(SegmentError::Malformed {
                url: self.url.clone(),
                attempts,
                reason,
                answer: truncate(answer, 300),
            })
        };
        let content = match serde_json::from_str::<ChatResponse>(&text) {
            Ok(r) => match r.choices.into_iter().next().and_then(|c| c.message.content) {
                Some(c) => c,
                None => return malformed("no choices[0].message.content".into(), &text),
            },
            Err(e) => {
                return malformed(
                    format!("the body is not a chat-completions response: {e}"),
                    &text,
                );
            }
        };
        match self.parse_answer(&content) {
            Ok(v) => Attempt::Done(v),
            Err(reason) => malformed(reason, &content),
        }
    }
}

impl Segmenter for LlmSegmenter {
    fn name(&self) -> &str {
        &self.name
    }

    fn segment(&self, trajectory: &Trajectory) -> Result<Vec<String>, SegmentError> {
        let user = self.user_prompt(trajectory);
        let body = ChatRequest {
            model: &self.config.model,
            temperature: 0.0,
            messages: [
                ChatMessage {
                    role: "system",
                    content: SYSTEM_PROMPT,
                },
                ChatMessage {
                    role: "user",
                    content: &user,
                },
            ],
        };
        let mut pause = self.config.backoff_s;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.attempt(&body, attempts) {
                Attempt::Done(v) => return Ok(v),
                Attempt::Fatal(e) => return Err(e),
                Attempt::Retry(e) if attempts >= self.config.max_attempts => return Err(e),
                Attempt::Retry(_) => {
                    if pause > 0.0 {
                        std::thread::sleep(Duration::from_secs_f32(pause));
                    }
                    pause *= 2.0;
                }
            }
        }
    }
}
