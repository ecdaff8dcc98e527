//! Per-environment policy gradients for AES's conflict term, reduced by a seeded random
//! projection (the LESS recipe).
//!
//! For each environment, `M` instances (task seeds) at a fixed harness level (H4 by default:
//! where twins' identical pixels ask for different actions) and scale, and one of two
//! estimators of the policy gradient of the expected reward:
//!
//! * **Multi-turn envs** (and single-turn ones with [`SingleTurn::Sampled`]): one episode
//!   sampled from the policy per instance; the REINFORCE-with-baseline loss
//!   `-(1/T) sum_t A_t log pi(a_t|s_t)` over all their steps, with `A_t` the return-to-go
//!   minus the mean return-to-go over the env's steps ([`Baseline::Mean`], the default) or
//!   GAE(`gamma`, `lambda`) on the value head ([`Baseline::Value`]; `lambda = 1`: the
//!   return-to-go minus `V(s_t)`).
//! * **Single-turn envs** ([`SingleTurn::Exact`], the default): no sampled answer. Every legal
//!   answer `a` of the instance is played from a fresh reset for its reward `r(a)`, and the
//!   instance contributes `-sum_a pi(a|s) (r(a) - rbar(s)) log pi(a|s)` (weights held
//!   constant, `rbar(s) = sum_a pi(a|s) r(a)`), whose gradient is exactly that of the expected
//!   reward at `s`: no action-sampling noise is left, only the instances are sampled.
//!
//! The gradient is taken with respect to every parameter (or the policy head's alone) and
//! flattened. The projection `R` (`P x d`, entries `±1/sqrt(d)` or `N(0, 1/d)`) keeps inner
//! products in expectation, so cosines between projected gradients estimate the full ones with
//! error about `1/sqrt(d)`. `R` is never stored: rows are regenerated from `(seed, row
//! block)`, so any two runs with the same seed, parameter count and `d` project identically,
//! whatever the env set.
//!
//! Every env's gradient comes with the cosine of the gradients of its two halves of instances
//! (even and odd): the split-half reliability of its direction
//! ([`GradientReport`](crate::GradientReport)). What the estimators are worth, measured on the
//! study's base (docs/conflict-estimates.md): the exact single-turn estimator is as reliable
//! as about 1.8 times as many sampled episodes and agrees with the sampled one's expectation
//! (cosine 0.96 at 1,024 episodes on the same instances); the value baseline of a base whose
//! critic was warmed is *less* reliable than the mean baseline at `lambda = 1`, and `lambda <
//! 1` is more reproducible but biased (its pairwise cosines agree far less with a 1,024-episode
//! estimate than their reproducibility allows): the defaults stay mean, `lambda = 1`, and the
//! reliability comes from the episode count.
//!
//! Cheaper estimates of the same directions (measured against the full one by
//! `cargo xtask conflict-estimates`): fewer episodes (`rollouts_per_env`), a smaller `dim`,
//! episodes cut after a few steps (`max_episode_steps`), and the policy head's gradient alone
//! ([`GradientParams::PolicyHead`]: the trunk runs forward without autodiff, so backward stops
//! at the head).

mod estimate;
mod projection;
#[cfg(test)]
mod tests;

use envdist_core::{HarnessLevel, InvalidValue};
use serde::{Deserialize, Serialize};

use crate::error::TrainerError;
use crate::eval::ScaleChoice;

pub use envdist_core::cosine;
pub(crate) use estimate::{EnvGradient, each_env_gradient};
pub(crate) use projection::param_range;
pub use projection::project;

/// Distribution of the projection's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ProjectionKind {
    /// `±1/sqrt(d)` with equal probability (fast to generate; the default).
    Rademacher,
    /// `N(0, 1)/sqrt(d)`.
    Gaussian,
}

/// How per-environment gradients are taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradientConfig {
    /// Episodes per environment (`M`).
    pub rollouts_per_env: usize,
    /// Harness level the episodes are played at.
    pub harness: HarnessLevel,
    /// Scale the episodes are played at.
    pub scale: ScaleChoice,
    /// Projected dimension `d`.
    pub dim: usize,
    /// Projection entries.
    pub projection: ProjectionKind,
    /// Seed of episode seeds, action sampling and the projection.
    pub seed: u64,
    /// Discount of the returns `G_t`.
    pub gamma: f32,
    /// What is subtracted from `G_t`.
    pub baseline: Baseline,
    /// Parameters the gradient is taken with respect to (serde default: all of them).
    #[serde(default)]
    pub params: GradientParams,
    /// Cut every episode after this many steps (serde default: none, each env's own step
    /// limit). Returns then count only the rewards of the first steps: a shorter rollout
    /// budget, not the same estimator.
    #[serde(default)]
    pub max_episode_steps: Option<u32>,
    /// How single-turn environments' gradients are taken (serde default: exactly, over every
    /// answer).
    #[serde(default)]
    pub single_turn: SingleTurn,
    /// GAE's `lambda` for [`Baseline::Value`] (serde default 1: the return-to-go minus
    /// `V(s_t)`; below 1 the critic's later values stand in for part of the sampled return).
    /// Must be 1 with [`Baseline::Mean`].
    #[serde(default = "one")]
    pub lambda: f32,
}

fn one() -> f32 {
    1.0
}

/// How the gradient of a single-turn environment (one observation, one answer, episode over)
/// is estimated from its sampled instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum SingleTurn {
    /// Like a multi-turn env: one sampled answer per instance, REINFORCE with the config's
    /// baseline.
    Sampled,
    /// The exact expectation over the answers (the default): per instance `s`, every legal
    /// answer `a` is played from a fresh reset of the same task for its reward `r(a)`, and the
    /// instance contributes `sum_a pi(a|s) (r(a) - rbar(s)) grad log pi(a|s)` with
    /// `rbar(s) = sum_a pi(a|s) r(a)`: the gradient of the expected reward at `s`, with no
    /// action-sampling noise left (only the instances are sampled). An env whose legal answer
    /// leaves the episode running is an error (use `sampled` for it).
    #[default]
    Exact,
}

/// Which parameters a per-environment gradient is taken with respect to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum GradientParams {
    /// Every parameter of the network (the default).
    #[default]
    All,
    #[cfg_attr(feature = "clap", value(name = "head", alias = "policy-head"))]
    /// Only the policy head, the last linear layer from the fused features to the action
    /// logits (`hidden x NUM_ACTIONS` weights and `NUM_ACTIONS` biases). The trunk runs
    /// forward on the inner (non-autodiff) backend and its output enters the head as a
    /// constant, so nothing of the trunk is recorded or differentiated: backward is one small
    /// matrix product, and the projection reads a few thousand values instead of every
    /// parameter. The result is exactly the head's slice of the full gradient
    /// ([`crate::PolicyModel::gradient_param_range`]); whether its cosines rank env pairs
    /// like the full gradient's is an empirical question (docs/conflict-estimates.md).
    PolicyHead,
}

impl GradientConfig {
    /// Check the fields a gradient run cannot start without.
    pub fn validate(&self) -> Result<(), TrainerError> {
        let bad = |field: &str, expected: &str, found: String| {
            Err(TrainerError::Config(InvalidValue::new(
                format!("gradients.{field}"),
                expected,
                found,
            )))
        };
        if self.rollouts_per_env == 0 {
            return bad("rollouts_per_env", "at least 1", "0".into());
        }
        if self.dim == 0 {
            return bad("dim", "at least 1", "0".into());
        }
        if !(self.gamma.is_finite() && (0.0..=1.0).contains(&self.gamma)) {
            return bad("gamma", "a number in [0, 1]", self.gamma.to_string());
        }
        if self.max_episode_steps == Some(0) {
            return bad(
                "max_episode_steps",
                "at least 1 step (or none: each env's own limit)",
                "0".into(),
            );
        }
        if !(self.lambda.is_finite() && (0.0..=1.0).contains(&self.lambda)) {
            return bad("lambda", "a number in [0, 1]", self.lambda.to_string());
        }
        if self.baseline == Baseline::Mean && self.lambda != 1.0 {
            return bad(
                "lambda",
                "1 with baseline mean (GAE's lambda needs the value baseline)",
                self.lambda.to_string(),
            );
        }
        Ok(())
    }
}

/// What computing a set of per-environment gradients took: the work done and where the wall
/// time went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GradientCost {
    /// Environments.
    pub envs: usize,
    /// Episodes played.
    pub episodes: usize,
    /// Environment steps played (each one is also differentiated).
    pub env_steps: usize,
    /// Backward passes (one per chunk of at most 512 steps of each half of an env's episodes).
    pub backward_passes: usize,
    /// Parameters differentiated: the length of one unprojected gradient.
    pub params: usize,
    /// Seconds playing the episodes (batched forward passes without autodiff, env steps).
    pub play_seconds: f64,
    /// Seconds in the gradient passes (forward with autodiff, backward, flattening).
    pub backward_seconds: f64,
    /// Seconds projecting the gradients (0 for [`full_gradients`](crate::full_gradients)).
    pub project_seconds: f64,
}

/// Baseline of the per-env policy gradient of sampled episodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// The mean return-to-go over the env's sampled steps (the default: measured more reliable
    /// than the value baseline on the study's base, even with its critic warmed).
    Mean,
    /// The value head's estimate `V(s_t)`, with GAE's `lambda` ([`GradientConfig::lambda`]).
    Value,
}

impl Default for GradientConfig {
    fn default() -> Self {
        Self {
            // Per-env REINFORCE estimates are noisy: below a few hundred episodes the cosine
            // of a twin pair can change sign with the episode seed (measured on maze/collect).
            rollouts_per_env: 512,
            harness: HarnessLevel::H4,
            scale: ScaleChoice::Min,
            dim: 1024,
            projection: ProjectionKind::Rademacher,
            seed: 0,
            // Undiscounted: every step of a solved episode gets the same return, so the
            // gradient carries "what led to success" rather than "how late in the episode".
            gamma: 1.0,
            baseline: Baseline::Mean,
            params: GradientParams::All,
            max_episode_steps: None,
            single_turn: SingleTurn::Exact,
            lambda: 1.0,
        }
    }
}
