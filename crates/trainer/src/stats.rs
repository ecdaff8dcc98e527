//! What one update reports: [`UpdateStats`], one line of a run's training log, and the names
//! its numbers take in TensorBoard.

use serde::{Deserialize, Serialize};

/// Statistics of one update (one rollout plus its PPO epochs); one line of the training log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    /// Updates done so far (this one included).
    pub update: u64,
    /// Environment steps so far.
    pub env_steps: u64,
    /// Episodes that ended during this rollout.
    pub episodes: u32,
    /// Their success rate (sampled actions), `None` if none ended.
    pub success_rate: Option<f32>,
    /// Their mean return.
    pub mean_return: Option<f32>,
    /// Mean clipped-surrogate policy loss.
    pub policy_loss: f32,
    /// Mean value loss.
    pub value_loss: f32,
    /// Mean policy entropy (nats).
    pub entropy: f32,
    /// Mean approximate KL between the rollout policy and the updated one.
    pub approx_kl: f32,
    /// Fraction of samples whose ratio was clipped.
    pub clip_fraction: f32,
    /// Mean global gradient norm before clipping.
    pub grad_norm: f32,
    /// Learning rate used.
    pub lr: f32,
    /// Seconds spent in the rollout (acting and stepping).
    pub rollout_seconds: f32,
    /// Of `rollout_seconds`, the batched inference (encoding the batch, uploading it, the
    /// forward pass and reading the logits back); the rest is env stepping and restarts.
    #[serde(default)]
    pub rollout_infer_seconds: f32,
    /// Seconds spent learning (forward, backward and Adam over every epoch).
    #[serde(default)]
    pub learn_seconds: f32,
    /// Seconds for the whole update.
    pub seconds: f32,
    /// Environment steps per second over the whole update, learning included.
    pub env_steps_per_second: f32,
    /// Whether this update fitted the value head alone (critic warm-up).
    #[serde(default)]
    pub value_only: bool,
    /// Mean KL divergence `KL(start || now)` between the policy the run started from and the
    /// updated one, over this rollout's last 256 states (runs started from a policy only).
    #[serde(default)]
    pub kl_to_start: Option<f32>,
    /// With a KL penalty (`kl_coef` > 0): the penalty's KL, `KL(now || start)` over each
    /// minibatch's states before its step, averaged over the minibatches (the loss adds it
    /// times `kl_coef`). `None` without a penalty, and then not written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl_loss: Option<f32>,
    /// Mean harness level (0 for H0 to 4 for H4) of the episodes that ended in this rollout:
    /// where a curriculum stands. `None` if none ended.
    #[serde(default)]
    pub mean_harness_level: Option<f32>,
    /// Their mean scale.
    #[serde(default)]
    pub mean_scale: Option<f32>,
    /// Per environment, the mean harness level and mean scale of its episodes that ended in
    /// this rollout (`[level, scale]`; the environments of `env_outcomes`).
    #[serde(default)]
    pub env_level_scale: std::collections::BTreeMap<envdist_core::EnvId, [f32; 2]>,
    /// Per environment, the episodes that ended in this rollout and how many succeeded
    /// (`[episodes, successes]`).
    #[serde(default)]
    pub env_outcomes: std::collections::BTreeMap<envdist_core::EnvId, [u32; 2]>,
}

impl UpdateStats {
    /// The update's numbers as TensorBoard scalars `(tag, value)`, at step `env_steps`: every
    /// number of its training-log line, under the tags RL users know (CleanRL's and SB3's
    /// groups). Statistics of ended episodes are left out when none ended.
    ///
    /// | tag | field |
    /// |---|---|
    /// | `train/success_rate`, `train/mean_return`, `train/episodes` | `success_rate`, `mean_return`, `episodes` |
    /// | `train/update`, `train/value_only` (0 or 1) | `update`, `value_only` |
    /// | `loss/policy`, `loss/value`, `loss/entropy`, `loss/kl` | `policy_loss`, `value_loss`, `entropy` (nats), `kl_loss` |
    /// | `policy/approx_kl`, `policy/kl_to_start`, `policy/clip_fraction` | `approx_kl`, `kl_to_start`, `clip_fraction` |
    /// | `optim/grad_norm`, `optim/lr` | `grad_norm`, `lr` |
    /// | `curriculum/mean_harness_level`, `curriculum/mean_scale` | `mean_harness_level`, `mean_scale` |
    /// | `env/<id>/episodes`, `env/<id>/success_rate` | `env_outcomes` |
    /// | `env/<id>/harness_level`, `env/<id>/scale` | `env_level_scale` |
    /// | `perf/env_steps_per_second`, `perf/update_seconds`, `perf/rollout_seconds`, `perf/rollout_infer_seconds`, `perf/learn_seconds` | `env_steps_per_second`, `seconds`, `rollout_seconds`, `rollout_infer_seconds`, `learn_seconds` |
    pub fn tensorboard_scalars(&self) -> Vec<(String, f32)> {
        let mut out: Vec<(String, f32)> = Vec::new();
        let mut put = |tag: &str, v: Option<f32>| {
            if let Some(v) = v {
                out.push((tag.to_string(), v));
            }
        };
        put("train/success_rate", self.success_rate);
        put("train/mean_return", self.mean_return);
        put("train/episodes", Some(self.episodes as f32));
        put("train/update", Some(self.update as f32));
        put(
            "train/value_only",
            Some(f32::from(u8::from(self.value_only))),
        );
        put("loss/policy", Some(self.policy_loss));
        put("loss/value", Some(self.value_loss));
        put("loss/entropy", Some(self.entropy));
        put("policy/approx_kl", Some(self.approx_kl));
        put("policy/kl_to_start", self.kl_to_start);
        put("loss/kl", self.kl_loss);
        put("policy/clip_fraction", Some(self.clip_fraction));
        put("optim/grad_norm", Some(self.grad_norm));
        put("optim/lr", Some(self.lr));
        put("curriculum/mean_harness_level", self.mean_harness_level);
        put("curriculum/mean_scale", self.mean_scale);
        for (env, [episodes, successes]) in &self.env_outcomes {
            put(&format!("env/{env}/episodes"), Some(*episodes as f32));
            put(
                &format!("env/{env}/success_rate"),
                (*episodes > 0).then(|| *successes as f32 / *episodes as f32),
            );
        }
        for (env, [level, scale]) in &self.env_level_scale {
            put(&format!("env/{env}/harness_level"), Some(*level));
            put(&format!("env/{env}/scale"), Some(*scale));
        }
        put("perf/env_steps_per_second", Some(self.env_steps_per_second));
        put("perf/update_seconds", Some(self.seconds));
        put("perf/rollout_seconds", Some(self.rollout_seconds));
        put(
            "perf/rollout_infer_seconds",
            Some(self.rollout_infer_seconds),
        );
        put("perf/learn_seconds", Some(self.learn_seconds));
        out
    }

    /// The update as one TensorBoard event at step `env_steps`.
    pub fn tensorboard_event(&self, wall_time: f64) -> crate::tensorboard::Event {
        crate::tensorboard::Event {
            wall_time,
            step: i64::try_from(self.env_steps).unwrap_or(i64::MAX),
            body: crate::tensorboard::EventBody::Scalars(self.tensorboard_scalars()),
        }
    }
}

/// Schema version of training-log lines.
pub const LOG_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
pub(crate) struct LogLine {
    pub schema_version: u32,
    #[serde(flatten)]
    pub stats: UpdateStats,
}
