//! Trajectory logs made elsewhere: reading them, replaying them for ability tags, and
//! checking them against known specs.
//!
//! The three accepted line formats (one JSON object per line, mixable in one file) are
//! documented in the crate README: a whole trajectory (core [`Trajectory`], recognised by its
//! `steps` field), one step (a [`StepRecord`]), both with `schema_version` =
//! [`TRAJECTORY_SCHEMA_VERSION`]; and an OpenAI-style chat episode as VLM trainers dump it (a
//! [`ChatRecord`], recognised by its `messages` field, no schema version: the format is not
//! ours), whose assistant turns are read as actions with [`ActionId::parse_text`].

use std::collections::BTreeMap;
use std::path::Path;

use envdist_core::env::EnvFactory;
use envdist_core::{
    ActionId, EnvId, EnvSpec, FileError, HarnessLevel, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory,
    TrajectoryStep,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// An episode key in a per-step log: any string or non-negative integer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EpisodeKey {
    /// A numeric key.
    Number(u64),
    /// A text key.
    Text(String),
}

impl EpisodeKey {
    fn as_string(&self) -> String {
        match self {
            Self::Number(n) => n.to_string(),
            Self::Text(s) => s.clone(),
        }
    }
}

/// One line of a per-step log. Steps of one episode share `env` and `episode`; they are
/// ordered by `t` when given, else by line order. Unknown extra fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Always [`TRAJECTORY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The environment id.
    pub env: EnvId,
    /// Which episode of that environment the step belongs to.
    pub episode: EpisodeKey,
    /// Step index within the episode (optional; must be unique within the episode).
    #[serde(default)]
    pub t: Option<u64>,
    /// The action, by its text name (`up`, `interact`, `answer_3`, ...).
    pub action: ActionId,
    /// Reward of the step (default 0).
    #[serde(default)]
    pub reward: f32,
    /// Atomic ability tags of the step (default none).
    #[serde(default)]
    pub abilities: Vec<String>,
    /// Task seed (default 0; the first step's value is used).
    #[serde(default)]
    pub seed: u64,
    /// Harness level (default H0; the first step's value is used).
    #[serde(default)]
    pub harness: HarnessLevel,
    /// State scale (default 0; the first step's value is used).
    #[serde(default)]
    pub scale: u32,
    /// Name of the agent (default `unknown`; the first value given is used).
    #[serde(default)]
    pub policy: Option<String>,
    /// Whether the episode ended solved at this step (the episode is solved if any step says so).
    #[serde(default)]
    pub success: Option<bool>,
}

/// One line of an OpenAI-style chat log: an episode (or a part of one: lines with the same
/// `env` and `episode` are joined in line order) as the message list a VLM trainer sends and
/// receives. Every `assistant` message is one step, its action read from its text with
/// [`ActionId::parse_text`]; other roles only carry observations and are skipped (images
/// included). Unknown extra fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRecord {
    /// The environment id (also accepted as `env_id`).
    #[serde(alias = "env_id")]
    pub env: EnvId,
    /// Which episode of that environment.
    pub episode: EpisodeKey,
    /// The chat messages, in order.
    pub messages: Vec<ChatMessage>,
    /// Task seed (default 0; the first line's value is used). Needed for an exact replay.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Harness level (default H0).
    #[serde(default)]
    pub harness: Option<HarnessLevel>,
    /// State scale (default 0, which a replay clamps to the env's smallest).
    #[serde(default)]
    pub scale: Option<u32>,
    /// Name of the agent (also accepted as `model`; default `unknown`).
    #[serde(default, alias = "model")]
    pub policy: Option<String>,
    /// Whether the episode ended solved (true if any line says so).
    #[serde(default)]
    pub success: Option<bool>,
    /// Episode return (default: the sum of the assistant messages' `reward`s).
    #[serde(default)]
    pub reward: Option<f32>,
}

/// One chat message. `content` is a string or a list of parts (`{"type": "text", "text":
/// ...}`, `{"type": "image_url", ...}`, ...); only text parts are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, `tool`, ...
    pub role: String,
    /// The content: a string, a list of parts, or null.
    #[serde(default)]
    pub content: serde_json::Value,
    /// Reward of the step (assistant messages; default 0).
    #[serde(default)]
    pub reward: Option<f32>,
    /// Ability tags of the step, when the trainer logged envdist's `info["abilities"]`.
    #[serde(default)]
    pub abilities: Vec<String>,
}

impl ChatMessage {
    /// The text of the message: the string content, or its text parts joined by newlines.
    pub fn text(&self) -> String {
        match &self.content {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    serde_json::Value::String(s) => Some(s.as_str()),
                    p if p.get("type").and_then(|t| t.as_str()) == Some("text") => {
                        p.get("text").and_then(|t| t.as_str())
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

/// What [`read_log`] read, and what it could not use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogRead {
    /// The trajectories, in order of their first line.
    pub trajectories: Vec<Trajectory>,
    /// Assistant turns of chat episodes whose text names no single action (skipped).
    pub unreadable_turns: u64,
    /// Chat episodes dropped because no assistant turn named an action (`env` / `episode`).
    pub dropped_episodes: Vec<String>,
}

fn parse_error(path: &Path, line: usize, field: String, message: String) -> FileError {
    FileError::Parse {
        path: path.to_path_buf(),
        line: Some(line),
        field,
        message,
    }
}

fn from_value<T: serde::de::DeserializeOwned>(
    path: &Path,
    line: usize,
    value: serde_json::Value,
) -> Result<T, FileError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        parse_error(path, line, field, e.into_inner().to_string())
    })
}

enum Entry {
    Whole(Trajectory),
    Episode {
        first: StepRecord,
        steps: Vec<(Option<u64>, usize, StepRecord)>,
    },
    Chat(Vec<ChatRecord>),
}

/// Read a trajectory log (see the module docs). Errors name the file, the 1-based line and
/// the field. Trajectories come out in order of their first line. A log without a single
/// step (an empty file, only blank lines, or chat episodes none of whose turns name an
/// action) is an error naming the file: there is nothing to profile.
pub fn read_trajectory_log(path: impl AsRef<Path>) -> Result<Vec<Trajectory>, FileError> {
    read_log(path).map(|r| r.trajectories)
}

/// [`read_trajectory_log`], also saying what it skipped.
pub fn read_log(path: impl AsRef<Path>) -> Result<LogRead, FileError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut entries: Vec<Entry> = Vec::new();
    let mut episode_index: BTreeMap<(EnvId, String), usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(raw)
            .map_err(|e| parse_error(path, line, ".".into(), format!("not valid JSON: {e}")))?;
        if !value.is_object() {
            return Err(parse_error(
                path,
                line,
                ".".into(),
                "expected a JSON object (a trajectory, a step or a chat episode)".into(),
            ));
        }
        if value.get("messages").is_some() {
            let chat: ChatRecord = from_value(path, line, value)?;
            let key = (
                chat.env.clone(),
                format!("chat:{}", chat.episode.as_string()),
            );
            match episode_index.get(&key) {
                Some(&k) => {
                    let Entry::Chat(parts) = &mut entries[k] else {
                        unreachable!("chat keys only point at chat episodes");
                    };
                    parts.push(chat);
                }
                None => {
                    episode_index.insert(key, entries.len());
                    entries.push(Entry::Chat(vec![chat]));
                }
            }
            continue;
        }
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            Some(v) if v == TRAJECTORY_SCHEMA_VERSION as u64 => {}
            _ => {
                let found = value
                    .get("schema_version")
                    .map_or_else(|| "nothing".to_string(), |v| v.to_string());
                return Err(parse_error(
                    path,
                    line,
                    "schema_version".into(),
                    format!("expected {TRAJECTORY_SCHEMA_VERSION}, found {found}"),
                ));
            }
        }
        if value.get("steps").is_some() {
            entries.push(Entry::Whole(from_value(path, line, value)?));
            continue;
        }
        let step: StepRecord = from_value(path, line, value)?;
        let key = (step.env.clone(), step.episode.as_string());
        match episode_index.get(&key) {
            Some(&k) => {
                let Entry::Episode { steps, .. } = &mut entries[k] else {
                    unreachable!("episode_index only points at episodes");
                };
                if let Some(t) = step.t
                    && steps.iter().any(|(u, _, _)| *u == Some(t))
                {
                    return Err(parse_error(
                        path,
                        line,
                        "t".into(),
                        format!(
                            "expected a step index unique within episode {:?} of {}, found {t} again",
                            key.1, key.0
                        ),
                    ));
                }
                steps.push((step.t, line, step));
            }
            None => {
                episode_index.insert(key, entries.len());
                entries.push(Entry::Episode {
                    first: step.clone(),
                    steps: vec![(step.t, line, step)],
                });
            }
        }
    }
    let mut read = LogRead::default();
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    for e in entries {
        let t = match e {
            Entry::Whole(t) => t,
            Entry::Chat(parts) => match chat_trajectory(parts, &mut read.unreadable_turns) {
                Ok(t) => t,
                Err(dropped) => {
                    read.dropped_episodes.push(dropped);
                    continue;
                }
            },
            Entry::Episode { first, mut steps } => {
                // Steps without `t` keep their line order after those with one.
                steps.sort_by_key(|(t, line, _)| (t.is_none(), *t, *line));
                let policy = steps
                    .iter()
                    .find_map(|(_, _, s)| s.policy.clone())
                    .unwrap_or_else(|| "unknown".into());
                let success = steps.iter().any(|(_, _, s)| s.success == Some(true));
                let steps: Vec<TrajectoryStep> = steps
                    .into_iter()
                    .map(|(_, _, s)| TrajectoryStep {
                        action: s.action,
                        reward: s.reward,
                        abilities: s.abilities,
                    })
                    .collect();
                Trajectory {
                    schema_version: TRAJECTORY_SCHEMA_VERSION,
                    task: Task {
                        env: first.env,
                        seed: first.seed,
                        harness: first.harness,
                        scale: first.scale,
                    },
                    policy,
                    episode_return: steps.iter().map(|s| s.reward).sum(),
                    steps,
                    success,
                }
            }
        };
        read.trajectories.push(t);
    }
    if read.trajectories.iter().all(|t| t.steps.is_empty()) {
        let mut found = format!(
            "none in {lines} non-empty lines ({} trajectories without a step",
            read.trajectories.len()
        );
        if !read.dropped_episodes.is_empty() || read.unreadable_turns > 0 {
            found.push_str(&format!(
                "; {} chat episodes without an assistant turn naming an action, {} unreadable turns",
                read.dropped_episodes.len(),
                read.unreadable_turns
            ));
        }
        found.push(')');
        return Err(FileError::invalid(
            path,
            ".",
            "at least one trajectory with a step (a trajectory line, step lines, or a chat episode with an assistant turn naming an action)",
            found,
        ));
    }
    Ok(read)
}

/// Join the lines of one chat episode into a trajectory; `Err` names a dropped episode.
fn chat_trajectory(parts: Vec<ChatRecord>, unreadable: &mut u64) -> Result<Trajectory, String> {
    let first = &parts[0];
    let name = format!("{} / {}", first.env, first.episode.as_string());
    let task = Task {
        env: first.env.clone(),
        seed: first.seed.unwrap_or(0),
        harness: first.harness.unwrap_or_default(),
        scale: first.scale.unwrap_or(0),
    };
    let policy = parts
        .iter()
        .find_map(|p| p.policy.clone())
        .unwrap_or_else(|| "unknown".into());
    let success = parts.iter().any(|p| p.success == Some(true));
    let line_return: Option<f32> = parts.iter().filter_map(|p| p.reward).reduce(|a, b| a + b);
    let mut steps = Vec::new();
    for m in parts.iter().flat_map(|p| &p.messages) {
        if m.role != "assistant" {
            continue;
        }
        match ActionId::parse_text(&m.text()) {
            Ok(action) => steps.push(TrajectoryStep {
                action,
                reward: m.reward.unwrap_or(0.0),
                abilities: m.abilities.clone(),
            }),
            Err(_) => *unreadable += 1,
        }
    }
    if steps.is_empty() {
        return Err(name);
    }
    Ok(Trajectory {
        schema_version: TRAJECTORY_SCHEMA_VERSION,
        task,
        policy,
        episode_return: line_return.unwrap_or_else(|| steps.iter().map(|s| s.reward).sum()),
        steps,
        success,
    })
}

/// What [`replay_abilities`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Trajectories whose steps got the environment's tags.
    pub replayed: u64,
    /// Trajectories left as they were because they already carry tags.
    pub tagged: u64,
    /// Trajectories of environments the factory cannot make (left without tags).
    pub unknown_env: u64,
    /// Replays in which the episode ended before the logged steps did (the log's seed or
    /// scale is probably not the episode's): the steps after the end have no tags.
    pub ended_early: u64,
}

/// Fill in the ability tags of trajectories that have none (a trainer's chat log rarely has
/// them) by replaying their actions in the environment `factory` makes: reset with the
/// trajectory's task, then step. Exact when the log records the episode's seed, harness and
/// scale (envdist's tickets do); otherwise the tags are those of a similar episode.
/// Deterministic and independent of the number of threads.
pub fn replay_abilities(trajectories: &mut [Trajectory], factory: &dyn EnvFactory) -> ReplayReport {
    #[derive(Clone, Copy)]
    enum Outcome {
        Tagged,
        Unknown,
        Replayed { ended_early: bool },
    }
    let outcomes: Vec<Outcome> = trajectories
        .par_iter_mut()
        .map(|t| {
            if t.steps.iter().any(|s| !s.abilities.is_empty()) {
                return Outcome::Tagged;
            }
            let Ok(mut env) = factory.make(&t.task.env) else {
                return Outcome::Unknown;
            };
            env.reset(&t.task);
            let mut ended_early = false;
            let len = t.steps.len();
            for (i, step) in t.steps.iter_mut().enumerate() {
                let s = env.step(step.action);
                step.abilities = s.abilities.iter().map(|a| a.to_string()).collect();
                if (s.done || s.truncated) && i + 1 < len {
                    ended_early = true;
                    break;
                }
            }
            Outcome::Replayed { ended_early }
        })
        .collect();
    let mut report = ReplayReport::default();
    for o in outcomes {
        match o {
            Outcome::Tagged => report.tagged += 1,
            Outcome::Unknown => report.unknown_env += 1,
            Outcome::Replayed { ended_early } => {
                report.replayed += 1;
                report.ended_early += ended_early as u64;
            }
        }
    }
    report
}

/// What in a set of trajectories does not match the known environment specs. Nothing is
/// dropped from profiling because of it; it is reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogCheck {
    /// Environment ids not among the specs, with their number of trajectories.
    pub unknown_envs: BTreeMap<String, u64>,
    /// For known environments: step tags their spec does not declare, with occurrence counts.
    pub unknown_abilities: BTreeMap<String, BTreeMap<String, u64>>,
}

impl LogCheck {
    /// Whether everything matched.
    pub fn is_clean(&self) -> bool {
        self.unknown_envs.is_empty() && self.unknown_abilities.is_empty()
    }

    /// One human-readable line per finding.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (env, n) in &self.unknown_envs {
            out.push(format!(
                "unknown environment {env:?} ({n} trajectories): not in the known specs; profiled anyway"
            ));
        }
        for (env, abilities) in &self.unknown_abilities {
            for (a, n) in abilities {
                out.push(format!(
                    "environment {env:?}: ability {a:?} ({n} occurrences) is not declared in its spec; profiled anyway"
                ));
            }
        }
        out
    }
}

/// Compare the envs and step tags of `trajectories` with `specs`.
pub fn check_trajectories(trajectories: &[Trajectory], specs: &[EnvSpec]) -> LogCheck {
    let by_id: BTreeMap<&EnvId, &EnvSpec> = specs.iter().map(|s| (&s.id, s)).collect();
    let mut check = LogCheck::default();
    for t in trajectories {
        let Some(spec) = by_id.get(&t.task.env) else {
            *check
                .unknown_envs
                .entry(t.task.env.to_string())
                .or_default() += 1;
            continue;
        };
        for step in &t.steps {
            for a in &step.abilities {
                if !spec.abilities.contains(a) {
                    *check
                        .unknown_abilities
                        .entry(t.task.env.to_string())
                        .or_default()
                        .entry(a.clone())
                        .or_default() += 1;
                }
            }
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{tmp_dir, traj};

    #[test]
    fn reads_both_formats_and_groups_steps_by_episode() {
        let d = tmp_dir("log-both");
        let p = d.join("log.jsonl");
        let whole =
            serde_json::to_string(&traj("toy/walk", &[&["navigate"], &["reach-goal"]])).unwrap();
        let text = format!(
            "{whole}\n\
             {{\"schema_version\":1,\"env\":\"toy/mirror\",\"episode\":\"a\",\"t\":1,\"action\":\"left\",\"abilities\":[\"reach-goal\"],\"reward\":1.0,\"success\":true,\"policy\":\"me\"}}\n\
             \n\
             {{\"schema_version\":1,\"env\":\"toy/mirror\",\"episode\":7,\"action\":\"wait\",\"extra\":\"ignored\"}}\n\
             {{\"schema_version\":1,\"env\":\"toy/mirror\",\"episode\":\"a\",\"t\":0,\"action\":\"left\",\"abilities\":[\"navigate\"],\"scale\":5,\"seed\":3}}\n"
        );
        std::fs::write(&p, text).unwrap();
        let ts = read_trajectory_log(&p).unwrap();
        assert_eq!(ts.len(), 3);
        assert_eq!(ts[0].steps.len(), 2);
        let a = &ts[1];
        assert_eq!(a.task.env.as_str(), "toy/mirror");
        // The first line seen sets the task (t=1 came first in the file).
        assert_eq!(a.task.scale, 0);
        let tags: Vec<&str> = a.steps.iter().map(|s| s.abilities[0].as_str()).collect();
        assert_eq!(tags, ["navigate", "reach-goal"]);
        assert!(a.success);
        assert_eq!(a.policy, "me");
        assert_eq!(a.episode_return, 1.0);
        assert_eq!(ts[2].policy, "unknown");
        assert!(!ts[2].success);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn malformed_lines_name_file_line_and_field() {
        let d = tmp_dir("log-bad");
        let cases = [
            (
                "{\"schema_version\":1,\"env\":\"e/a\",\"episode\":1,\"action\":\"up\"}\n{not json\n",
                "line 2",
                "not valid JSON",
            ),
            (
                "\n\n{\"schema_version\":1,\"env\":\"e/a\",\"episode\":1,\"action\":\"jump\"}\n",
                "line 3",
                "action",
            ),
            (
                "{\"schema_version\":2,\"env\":\"e/a\",\"episode\":1,\"action\":\"up\"}\n",
                "line 1",
                "schema_version",
            ),
            (
                "{\"schema_version\":1,\"env\":\"e/a\",\"action\":\"up\"}\n",
                "line 1",
                "episode",
            ),
            (
                "{\"schema_version\":1,\"task\":{},\"steps\":[]}\n",
                "line 1",
                "task",
            ),
            ("[1,2]\n", "line 1", "JSON object"),
            (
                "{\"schema_version\":1,\"env\":\"e/a\",\"episode\":1,\"t\":0,\"action\":\"up\"}\n{\"schema_version\":1,\"env\":\"e/a\",\"episode\":1,\"t\":0,\"action\":\"up\"}\n",
                "line 2",
                "`t`",
            ),
        ];
        for (k, (text, line, what)) in cases.iter().enumerate() {
            let p = d.join(format!("bad{k}.jsonl"));
            std::fs::write(&p, text).unwrap();
            let e = read_trajectory_log(&p).unwrap_err().to_string();
            assert!(
                e.contains(&format!("bad{k}.jsonl {line}")) && e.contains(what),
                "case {k}: {e}"
            );
        }
        let e = read_trajectory_log(d.join("missing.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.jsonl"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A chat episode line as a VLM trainer dumps it.
    fn chat_line(env: &str, episode: u32, turns: &[&str], extra: &str) -> String {
        let mut messages =
            vec![serde_json::json!({"role": "system", "content": "You play a grid game."})];
        for t in turns {
            messages.push(serde_json::json!({"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "text", "text": "What do you do?"}
            ]}));
            messages.push(serde_json::json!({"role": "assistant", "content": t}));
        }
        format!(
            "{{\"env_id\":\"{env}\",\"episode\":{episode},\"messages\":{}{extra}}}",
            serde_json::Value::Array(messages)
        )
    }

    #[test]
    fn chat_logs_become_trajectories_and_replay_fills_tags() {
        let d = tmp_dir("log-chat");
        let p = d.join("chat.jsonl");
        let text = [
            chat_line(
                "toy/walk",
                0,
                &["<answer>right</answer>", "I think so. Action: right"],
                ",\"seed\":0,\"scale\":4,\"success\":true,\"model\":\"vlm\"",
            ),
            // The same episode continues on a later line; garbage turns are skipped.
            chat_line("toy/mirror", 3, &["no idea", "left"], ""),
            chat_line("toy/walk", 0, &["right"], ""),
            chat_line("toy/mirror", 4, &["hmm", "left or right"], ""),
        ]
        .join("\n");
        std::fs::write(&p, text).unwrap();
        let read = read_log(&p).unwrap();
        assert_eq!(read.trajectories.len(), 2);
        assert_eq!(read.unreadable_turns, 3);
        assert_eq!(read.dropped_episodes, ["toy/mirror / 4"]);
        let walk = &read.trajectories[0];
        assert_eq!(
            (walk.task.scale, walk.policy.as_str(), walk.success),
            (4, "vlm", true)
        );
        let actions: Vec<ActionId> = walk.steps.iter().map(|s| s.action).collect();
        assert_eq!(actions, [ActionId::RIGHT; 3]);
        assert!(walk.steps.iter().all(|s| s.abilities.is_empty()));

        let mut ts = read.trajectories;
        ts.push(traj("other/env", &[&[]]));
        ts.push(traj("toy/walk", &[&["navigate"]]));
        let report = replay_abilities(&mut ts, &crate::toy::ToyFactory);
        assert_eq!(
            report,
            ReplayReport {
                replayed: 2,
                tagged: 1,
                unknown_env: 1,
                ended_early: 0
            }
        );
        let tags: Vec<Vec<String>> = ts[0].steps.iter().map(|s| s.abilities.clone()).collect();
        assert_eq!(tags[0], ["navigate"]);
        assert_eq!(tags[2], ["navigate", "reach-goal"]);
        // The mirror episode logged no scale: the toy plays scale 0, ending at the first move.
        assert_eq!(ts[1].steps[0].abilities, ["navigate", "reach-goal"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_log_without_a_usable_step_is_an_error_naming_the_file() {
        let d = tmp_dir("log-empty");
        for (name, text, what) in [
            ("empty.jsonl", String::new(), "none in 0 non-empty lines"),
            (
                "blank.jsonl",
                "\n  \n".to_string(),
                "none in 0 non-empty lines",
            ),
            (
                "garbage-chat.jsonl",
                chat_line("toy/walk", 1, &["no idea"], ""),
                "1 chat episodes without an assistant turn",
            ),
        ] {
            let p = d.join(name);
            std::fs::write(&p, text).unwrap();
            let e = read_trajectory_log(&p).unwrap_err().to_string();
            assert!(e.contains(name) && e.contains(what), "{e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn unknown_envs_and_abilities_are_reported() {
        let specs = envdist_core::env::EnvFactory::specs(&crate::toy::ToyFactory);
        let ts = vec![
            traj("toy/walk", &[&["navigate", "teleport"], &["teleport"]]),
            traj("other/env", &[&["navigate"]]),
            traj("other/env", &[]),
        ];
        let c = check_trajectories(&ts, &specs);
        assert_eq!(c.unknown_envs["other/env"], 2);
        assert_eq!(c.unknown_abilities["toy/walk"]["teleport"], 2);
        assert!(!c.is_clean());
        let lines = c.describe();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("other/env") && lines[1].contains("teleport"));
        assert!(
            check_trajectories(&ts[..1], &[])
                .unknown_envs
                .contains_key("toy/walk")
        );
    }
}
