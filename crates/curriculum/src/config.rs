//! The one configuration of the HDC sampler, its ablation modes and its validation.
//!
//! The paper publishes none of the curriculum's numbers (decay rate, window size, competence
//! threshold); every default below is our documented choice.

use envdist_core::InvalidValue;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use envdist_core::{EnvId, HarnessLevel};
use serde::{Deserialize, Serialize};

use crate::checks::{bad, check_at_least, check_rate};
use crate::error::CurriculumError;

/// Which curriculum (or ablation, or baseline) the sampler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Full HDC: per environment, the scale window climbs to the top, then the harness
    /// weakens one level and the window restarts at the bottom.
    #[default]
    Full,
    /// Harness weakening only: scale is not progressed (see [`HdcConfig::harness_only_scale`]);
    /// the harness weakens once the environment is competent at its current level.
    HarnessOnly,
    /// Scale progression only: harness fixed at H4, the window climbs to the top and stays.
    ScaleOnly,
    /// No curriculum: harness fixed at [`HdcConfig::fixed_harness`], scale uniform over the
    /// environment's range.
    None,
    /// HDC with one harness level shared by all environments: each environment's window
    /// climbs on its own; the shared level weakens once [`HdcConfig::global_fraction`] of the
    /// environments (with positive weight) are competent at their top window.
    Global,
    /// Baseline: harness uniform over H0..=H4, scale uniform over the range.
    BaselineUniform,
    /// Baseline: harness H4 (bare vision), scale uniform over the range.
    BaselineH4,
}

impl Mode {
    /// Every mode, in documentation order.
    pub const ALL: [Mode; 7] = [
        Mode::Full,
        Mode::HarnessOnly,
        Mode::ScaleOnly,
        Mode::None,
        Mode::Global,
        Mode::BaselineUniform,
        Mode::BaselineH4,
    ];

    /// The mode's name as written in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::HarnessOnly => "harness_only",
            Mode::ScaleOnly => "scale_only",
            Mode::None => "none",
            Mode::Global => "global",
            Mode::BaselineUniform => "baseline_uniform",
            Mode::BaselineH4 => "baseline_h4",
        }
    }

    /// Whether this mode moves harness levels (per env or globally).
    pub fn weakens_harness(self) -> bool {
        matches!(self, Mode::Full | Mode::HarnessOnly | Mode::Global)
    }

    /// Whether this mode slides a scale window.
    pub fn slides_scale(self) -> bool {
        matches!(self, Mode::Full | Mode::ScaleOnly | Mode::Global)
    }

    /// How this mode sets the harness level of a task.
    pub(crate) fn level_rule(self) -> LevelRule {
        match self {
            Mode::Full | Mode::HarnessOnly => LevelRule::PerEnv,
            Mode::Global => LevelRule::Shared,
            Mode::ScaleOnly | Mode::None | Mode::BaselineH4 => LevelRule::Fixed,
            Mode::BaselineUniform => LevelRule::Uniform,
        }
    }
}

/// How a [`Mode`] sets the harness level of a task: the one decision the sampler's level
/// code (current level, draws, state checks) needs from the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LevelRule {
    /// Each environment's own level weakens ([`Mode::Full`], [`Mode::HarnessOnly`]).
    PerEnv,
    /// One level shared by every environment weakens ([`Mode::Global`]).
    Shared,
    /// The level never moves from [`HdcConfig::initial_level`] ([`Mode::ScaleOnly`],
    /// [`Mode::None`], [`Mode::BaselineH4`]).
    Fixed,
    /// Every task draws H0..=H4 uniformly; the recorded level stays H4
    /// ([`Mode::BaselineUniform`]).
    Uniform,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = CurriculumError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == norm)
            .ok_or_else(|| {
                CurriculumError::Config(InvalidValue::new(
                    "mode",
                    Mode::ALL.map(Mode::name).join(" | "),
                    format!("{s:?}"),
                ))
            })
    }
}

/// How [`Mode::HarnessOnly`] chooses the scale, since it does not progress it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FixedScale {
    /// Uniform over the environment's whole scale range (default).
    #[default]
    Uniform,
    /// Always the middle of the range (`ScaleRange::mid`): `EnvSpec` declares no default
    /// scale, so the middle stands in for it.
    Mid,
}

/// Every parameter of the HDC sampler. Build with `..Default::default()` and call
/// [`HdcConfig::validate`] (the sampler's constructor does it for you).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HdcConfig {
    /// Curriculum or ablation. Default [`Mode::Full`].
    pub mode: Mode,
    /// Scales the window moves up by when a stage is mastered (clipped at the top). Default 1
    /// (the window slides one scale at a time); a study with a small budget per environment
    /// moves it by its width to pass the range in fewer stages.
    pub window_step: u32,
    /// A stage that has counted this many episodes without reaching competence advances
    /// anyway (0: never; competence alone moves the curriculum). A safety valve that sizes
    /// HDC to a training budget; every such advance is counted per environment
    /// ([`crate::EnvState::capped_advances`]) and reported. Default 0.
    pub max_stage_episodes: u32,
    /// When above 0, every environment passes its scale range in this many windows at each
    /// level, whatever the range's length: its window is `ceil(range / n)` scales wide and
    /// moves by its width, so the windows partition the range (and `window_width` and
    /// `window_step` are ignored). Every environment then has the same number of stages, which
    /// is what sizes HDC to a budget of episodes per environment: with a fixed width, an
    /// environment with 12 scales has 3 times the stages of one with 4. Default 0 (off).
    pub windows_per_level: u32,
    /// Number of consecutive scales in the sliding window (clipped to the env's range).
    /// Default 2: narrow enough that the window's position tracks competence, wide enough
    /// that neighbouring scales are mixed.
    pub window_width: u32,
    /// Success-rate EMA at or above which a stage counts as mastered. Default 0.7.
    pub competence_threshold: f32,
    /// EMA rate: `ema += rate * (success - ema)`. Default 0.05 (an effective memory of about
    /// 20 episodes).
    pub ema_rate: f32,
    /// Episodes that must be counted in the current stage (level + window) before competence
    /// can be declared; the EMA restarts at every stage change. Default 20.
    pub min_episodes: u32,
    /// Decay rate of review sampling: after a level change, level `j <= current` is drawn
    /// with probability proportional to `exp(-lambda * (current - j))`. Default 1.0
    /// (at H2: 67% H2, 24% H1, 9% H0).
    pub lambda: f32,
    /// For how many levels after the start level the decay sampling applies: it is active
    /// while `1 <= current - start <= decay_span`, and at later levels only the current
    /// level is drawn. The paper applies it "in the early levels"; default 2 (H1 and H2
    /// when starting at H0). 0 disables review; 4 keeps it at every level.
    pub decay_span: u32,
    /// Level every environment starts at (the harness schedule's first level). Default H0.
    pub harness_start: HarnessLevel,
    /// [`Mode::Global`]: fraction of environments (with positive weight) that must be
    /// competent at their top window before the shared level weakens. Default 0.8.
    pub global_fraction: f32,
    /// [`Mode::HarnessOnly`]: how the scale is drawn. Default uniform over the range.
    pub harness_only_scale: FixedScale,
    /// [`Mode::None`]: the fixed harness level. Default H4, the level evaluation uses.
    pub fixed_harness: HarnessLevel,
    /// Sampling weight per environment id; ids not listed weigh 1.0, so the default (empty)
    /// is uniform. Weights passed to the sampler's constructor replace this map.
    pub env_weights: BTreeMap<EnvId, f32>,
    /// Give single-turn and multi-turn environments equal shares of the *steps*: each draw
    /// first picks the kind that has played fewer steps so far (counted from the outcomes),
    /// then an environment of that kind by weight. Without it the draw is per episode, and
    /// one-step single-turn tasks get a few percent of a trainer's samples. Default false.
    /// (Not written when false, so the hashes of configurations without it are unchanged.)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub balance_turns: bool,
    /// Once an environment has mastered its last stage (the top window at the final level),
    /// draw its scale from its whole range instead of the top window: the end of training
    /// then covers every scale, as an evaluation over several scales does, instead of the
    /// hardest ones alone. The paper does not say what follows the last stage; default false
    /// (the top window stays). Modes with a shared level ([`Mode::Global`]) are unaffected.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub consolidate: bool,
}

impl Default for HdcConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Full,
            window_width: 2,
            window_step: 1,
            windows_per_level: 0,
            max_stage_episodes: 0,
            competence_threshold: 0.7,
            ema_rate: 0.05,
            min_episodes: 20,
            lambda: 1.0,
            decay_span: 2,
            harness_start: HarnessLevel::H0,
            global_fraction: 0.8,
            harness_only_scale: FixedScale::Uniform,
            fixed_harness: HarnessLevel::H4,
            env_weights: BTreeMap::new(),
            balance_turns: false,
            consolidate: false,
        }
    }
}

impl HdcConfig {
    /// The sizing the study runs HDC with (its preset `study_hdc`, and the benches'): a
    /// curriculum climbs on earned competence and most of its environments reach H4 before the
    /// budget ends (the paper publishes none of these numbers).
    pub fn study_sizing() -> Self {
        // Early pilots (an older, smaller budget: about 57 episodes per env for 30 envs; one
        // seed): fixed 2-scale windows moving by 2 with a 16-episode cap left 0-3% of the envs
        // at H4; with 2- or 3-scale windows and a 3-4 episode cap, 8 of 30 (count-objects,
        // maze, collect: up to 12 scales, 3x the stages of the others) still never reached H4.
        // Two windows per level give every env 8 stages before H4: all 30 reached it, half of
        // them within the first 58% of the episodes.
        HdcConfig {
            windows_per_level: 2,
            // Sized so that the competence gate, not the stage cap, moves an env up the
            // harness (the study's `preconditions.hdc_reach`): a 3-episode minimum, a 4-episode
            // cap and a 0.6 gate let the cap force most advances; 30 / 120 / 0.7 earned about
            // 90% of them (the pilots: docs/experiments/HISTORY.md).
            min_episodes: 30,
            competence_threshold: 0.7,
            ema_rate: 0.5,
            max_stage_episodes: 120,
            // Evaluation plays each env's smallest and middle scale: once an env has mastered
            // its top window at H4, it plays its whole range (a pilot without it trained the
            // HDC arms on the top half alone and left them below the arms without a
            // curriculum).
            consolidate: true,
            ..HdcConfig::default()
        }
    }

    /// Check every field once; the error names the first bad field and what it accepts.
    pub fn validate(&self) -> Result<(), CurriculumError> {
        check_at_least("window_step", self.window_step, 1)?;
        if self.max_stage_episodes != 0 && self.max_stage_episodes < self.min_episodes {
            return Err(bad(
                "max_stage_episodes",
                "0 (no cap) or at least min_episodes",
                self.max_stage_episodes,
            ));
        }
        check_at_least("window_width", self.window_width, 1)?;
        check_rate("competence_threshold", self.competence_threshold, true)?;
        check_rate("ema_rate", self.ema_rate, true)?;
        check_at_least("min_episodes", self.min_episodes, 1)?;
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(bad("lambda", "a finite value >= 0", self.lambda));
        }
        if self.decay_span > 4 {
            return Err(bad("decay_span", "0..=4 (levels)", self.decay_span));
        }
        check_rate("global_fraction", self.global_fraction, true)?;
        for (id, w) in &self.env_weights {
            if !(w.is_finite() && *w >= 0.0) {
                return Err(bad(&format!("env_weights.{id}"), "a finite weight >= 0", w));
            }
        }
        Ok(())
    }

    /// The level every environment starts at: the schedule's start in modes that weaken the
    /// harness, otherwise the level the mode keeps.
    pub(crate) fn initial_level(&self) -> HarnessLevel {
        match self.mode {
            Mode::Full | Mode::HarnessOnly | Mode::Global => self.harness_start,
            Mode::ScaleOnly | Mode::BaselineH4 | Mode::BaselineUniform => HarnessLevel::H4,
            Mode::None => self.fixed_harness,
        }
    }

    /// A stable 64-bit FNV-1a hash of the configuration's JSON, written as 16 hex digits
    /// ([`crate::rivals::config_hash`]). Saved states carry it so that a restore under
    /// another configuration is refused.
    pub fn hash_hex(&self) -> String {
        crate::checks::config_hash(self)
    }

    /// The fields whose values differ from `other`, as `field: this -> other` lines
    /// (empty when the configurations are equal).
    pub fn diff(&self, other: &HdcConfig) -> Vec<String> {
        crate::checks::config_diff(self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_their_names_and_serde_agrees() {
        for m in Mode::ALL {
            assert_eq!(m.name().parse::<Mode>().unwrap(), m);
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.name())
            );
        }
        assert_eq!("Scale-Only".parse::<Mode>().unwrap(), Mode::ScaleOnly);
        let e = "fast".parse::<Mode>().unwrap_err().to_string();
        assert!(e.contains("mode") && e.contains("baseline_h4"), "{e}");
    }

    #[test]
    fn level_rules_agree_with_weakens_harness() {
        for m in Mode::ALL {
            let moves = matches!(m.level_rule(), LevelRule::PerEnv | LevelRule::Shared);
            assert_eq!(moves, m.weakens_harness(), "{m}");
        }
    }

    #[test]
    fn hash_and_diff_see_every_change() {
        let a = HdcConfig::default();
        let b = HdcConfig {
            lambda: 2.0,
            ..Default::default()
        };
        assert_eq!(a.hash_hex(), HdcConfig::default().hash_hex());
        assert_ne!(a.hash_hex(), b.hash_hex());
        assert_eq!(a.diff(&b), vec!["lambda: 1.0 -> 2.0".to_string()]);
        assert!(a.diff(&a).is_empty());
        let json = r#"{"lambda": 0.5, "mode": "global"}"#;
        let c: HdcConfig = serde_json::from_str(json).unwrap();
        assert_eq!((c.lambda, c.mode, c.window_width), (0.5, Mode::Global, 2));
        assert!(serde_json::from_str::<HdcConfig>(r#"{"lamda": 1}"#).is_err());
    }
}
