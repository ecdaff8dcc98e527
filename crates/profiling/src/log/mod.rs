//! Trajectory logs made elsewhere: reading them, replaying them for ability tags, and
//! checking them against known specs.
//!
//! The three accepted line formats (one JSON object per line, mixable in one file) are
//! documented in the crate README: a whole trajectory (core [`Trajectory`], recognised by its
//! `steps` field), one step (a [`StepRecord`]), both with `schema_version` =
//! [`TRAJECTORY_SCHEMA_VERSION`]; and an OpenAI-style chat episode as VLM trainers dump it (a
//! [`ChatRecord`], recognised by its `messages` field, no schema version: the format is not
//! ours), whose assistant turns are read as actions with [`ActionId::parse_text`].
//!
//! This file reads envdist's own line formats and groups them into trajectories; `chat`
//! holds the chat-log format, `replay` fills in ability tags by replaying trajectories in an
//! environment, and `check` compares trajectories with the known specs.

mod chat;
mod check;
mod key;
mod replay;

use std::collections::BTreeMap;
use std::path::Path;

use envdist_core::{
    ActionId, EnvId, FileError, HarnessLevel, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory,
    TrajectoryStep,
};
use serde::{Deserialize, Serialize};

pub use chat::{ChatMessage, ChatRecord};
pub use check::{LogCheck, check_trajectories};
pub use replay::{ReplayReport, UnknownEnvId, replay_abilities};

use chat::chat_trajectory;
pub use key::EpisodeKey;

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
        let message = envdist_core::plain_serde_message(&e.into_inner().to_string());
        parse_error(path, line, field, message)
    })
}

enum Entry {
    Whole(Trajectory),
    Episode {
        first: StepRecord,
        steps: Vec<(Option<u64>, usize, StepRecord)>,
        /// The step indices seen, so that a long episode is checked in linear time.
        seen: std::collections::HashSet<u64>,
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
    let text = envdist_core::io::read_text(path)?;
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
            // `env` is the chat record's field name, but chat logs write `env_id` (its alias):
            // a line with neither is told about the name it most likely lacks.
            if value.get("env_id").is_none() && value.get("env").is_none() {
                return Err(parse_error(
                    path,
                    line,
                    "env_id".into(),
                    "missing: a chat episode line needs the id of its environment (`env_id`, or `env`), e.g. \"env_id\": \"maze/classic\"".into(),
                ));
            }
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
            // Neither a chat episode (`messages`) nor one of envdist's lines (`schema_version`):
            // a line with a chat log's `env_id` most likely lost its messages.
            None if value.get("schema_version").is_none() => {
                let keys: Vec<&str> = value
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let chat_like = value.get("env_id").is_some() || value.get("action").is_none();
                return Err(parse_error(
                    path,
                    line,
                    if chat_like {
                        "messages"
                    } else {
                        "schema_version"
                    }
                    .into(),
                    format!(
                        "missing: expected a chat episode line (with `messages`) or an envdist trajectory or step line (with `schema_version`: {TRAJECTORY_SCHEMA_VERSION}), found a line with neither (its fields: {})",
                        if keys.is_empty() {
                            "none".to_string()
                        } else {
                            keys.join(", ")
                        }
                    ),
                ));
            }
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
                let Entry::Episode { steps, seen, .. } = &mut entries[k] else {
                    unreachable!("episode_index only points at episodes");
                };
                if let Some(t) = step.t
                    && !seen.insert(t)
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
                    seen: step.t.into_iter().collect(),
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
            Entry::Episode {
                first, mut steps, ..
            } => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{chat_line, tmp_dir, traj};

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
            // A chat line without its messages names them, not schema_version.
            (
                "{\"env_id\":\"e/a\",\"episode\":1,\"seed\":3}\n",
                "line 1",
                "field `messages`: missing: expected a chat episode line (with `messages`) or an envdist trajectory or step line (with `schema_version`: 1), found a line with neither (its fields: env_id, episode, seed)",
            ),
            // A chat line without its environment names `env_id`, as chat logs write it.
            (
                "\n{\"episode\":1,\"messages\":[]}\n",
                "line 2",
                "field `env_id`: missing: a chat episode line needs the id of its environment (`env_id`, or `env`)",
            ),
            // serde's words are translated.
            (
                "{\"schema_version\":1,\"env\":\"e/a\",\"episode\":1,\"action\":\"up\",\"scale\":-2}\n",
                "line 1",
                "field `scale`: expected an integer from 0 to 4294967295, found -2",
            ),
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
}
