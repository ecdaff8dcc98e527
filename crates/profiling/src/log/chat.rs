//! The OpenAI-style chat-log line format ([`ChatRecord`]) and how one chat episode's lines
//! become a trajectory: every assistant turn that names an action is a step.

use envdist_core::{
    ActionId, EnvId, HarnessLevel, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory, TrajectoryStep,
};
use serde::{Deserialize, Serialize};

use super::key::EpisodeKey;

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

/// Join the lines of one chat episode into a trajectory; `Err` names a dropped episode.
pub(super) fn chat_trajectory(
    parts: Vec<ChatRecord>,
    unreadable: &mut u64,
) -> Result<Trajectory, String> {
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

#[cfg(test)]
mod tests {
    use envdist_core::ActionId;

    use crate::log::{ReplayReport, read_log, replay_abilities};
    use crate::test_support::{chat_line, tmp_dir, traj};

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
                ended_early: 0,
                unknown_env_ids: [(
                    "other/env".to_string(),
                    crate::log::UnknownEnvId {
                        trajectories: 1,
                        nearest: vec!["toy/mirror".into(), "toy/walk".into()],
                    }
                )]
                .into()
            }
        );
        let tags: Vec<Vec<String>> = ts[0].steps.iter().map(|s| s.abilities.clone()).collect();
        assert_eq!(tags[0], ["navigate"]);
        assert_eq!(tags[2], ["navigate", "reach-goal"]);
        // The mirror episode logged no scale: the toy plays scale 0, ending at the first move.
        assert_eq!(ts[1].steps[0].abilities, ["navigate", "reach-goal"]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
