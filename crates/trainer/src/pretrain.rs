//! Behaviour cloning from the environments' solvers: how the study's base model gets real but
//! partial competence before any RL, as a pretrained VLM arrives with priors (the paper's base
//! is Qwen3-VL, not a random network).
//!
//! Demonstrations are played by the solver with a little noise (a random legal action with
//! probability `noise`, still labelled with the solver's action, so the clone also sees and
//! learns to recover from states off the solver's path); each step's observation at the task's
//! harness level is one cross-entropy sample. Only the policy head and trunk learn; the value
//! head stays as initialised and PPO fits it from the first update.
//!
//! This module holds what a caller names (the configuration and the summary); the cloning
//! loop is the engine's (`engine/behaviour_clone.rs`).

use envdist_core::InvalidValue;
use serde::{Deserialize, Serialize};

/// How much and how to clone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CloneConfig {
    /// Demonstration steps (samples) in all.
    pub samples: u64,
    /// Environments played side by side while collecting.
    pub parallel: usize,
    /// Samples per gradient step.
    pub minibatch: usize,
    /// Adam learning rate.
    pub lr: f32,
    /// Probability of a random legal action in place of the solver's (the label stays the
    /// solver's).
    pub noise: f32,
    /// Seed of the noise.
    pub seed: u64,
}

impl Default for CloneConfig {
    fn default() -> Self {
        Self {
            samples: 50_000,
            parallel: 64,
            minibatch: 256,
            lr: 1e-3,
            noise: 0.2,
            seed: 0,
        }
    }
}

impl CloneConfig {
    pub(crate) fn validate(&self) -> Result<(), InvalidValue> {
        if self.parallel == 0 || self.minibatch == 0 {
            return Err(InvalidValue::new(
                "parallel, minibatch",
                "positive counts",
                format!("{}, {}", self.parallel, self.minibatch),
            ));
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(InvalidValue::new("lr", "a finite positive rate", self.lr));
        }
        if !(0.0..=1.0).contains(&self.noise) {
            return Err(InvalidValue::new(
                "noise",
                "a probability in [0, 1]",
                self.noise,
            ));
        }
        Ok(())
    }
}

/// What a cloning run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloneSummary {
    /// Samples trained on.
    pub samples: u64,
    /// Gradient steps.
    pub steps: u64,
    /// Mean cross-entropy of the last tenth of the steps.
    pub final_loss: f32,
    /// Share of the last tenth's samples whose most likely action was the solver's.
    pub final_accuracy: f32,
    /// Demonstration episodes the solver finished successfully (noise included).
    pub demo_success: f32,
    /// Steps played but not learned from: the solver had no legal action there.
    #[serde(default)]
    pub unlabelled_steps: u64,
}
