//! Persistence of the HDC sampler: the saved state, its checks against the sampler's
//! configuration and environments, restore, and atomic save/load to a file.

use std::path::Path;

use envdist_core::io::{read_json, write_json_atomic};
use envdist_core::{HarnessLevel, InvalidValue, Rng};
use serde::{Deserialize, Serialize};

use super::{EnvEntry, EnvState, HdcSampler};
use crate::config::{HdcConfig, LevelRule, Mode};
use crate::error::CurriculumError;
use crate::rivals::{Retired, check_config, check_counters, check_schema, check_unit, parse_state};

/// Schema version of saved sampler states.
pub const STATE_SCHEMA_VERSION: u32 = 1;

/// The serialised sampler state ([`TaskSampler::state`](envdist_core::TaskSampler::state) /
/// [`HdcSampler::save`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedState {
    /// Always [`STATE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`HdcConfig::hash_hex`] of `config`.
    pub config_hash: String,
    /// The configuration the state was produced under (kept so a mismatch can be explained).
    pub config: HdcConfig,
    /// The environments, in sampler order.
    pub envs: Vec<EnvEntry>,
    /// The sampler's random stream.
    pub rng: Rng,
    /// The shared level of [`Mode::Global`](crate::Mode::Global) (the start level in other
    /// modes).
    pub global_level: HarnessLevel,
    /// Tasks sampled so far.
    pub samples: u64,
    /// Outcomes accepted so far (known environment).
    pub updates: u64,
    /// Outcomes ignored because their environment is unknown.
    pub unknown: u64,
    /// One state per environment, in `envs` order.
    pub per_env: Vec<EnvState>,
    /// [`HdcConfig::balance_turns`]: steps played by single-turn, then multi-turn
    /// environments (written only when the option is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_steps: Option<[u64; 2]>,
    /// Environments a retarget dropped (written only when there are some).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<Retired>,
}

impl HdcSampler {
    /// The full state, as written by [`HdcSampler::save`].
    pub fn saved_state(&self) -> SavedState {
        SavedState {
            schema_version: STATE_SCHEMA_VERSION,
            config_hash: self.config_hash.clone(),
            config: self.config.clone(),
            envs: self.envs.clone(),
            rng: self.rng.clone(),
            global_level: self.global_level,
            samples: self.samples,
            updates: self.updates,
            unknown: self.unknown,
            per_env: self.per_env.clone(),
            turn_steps: self.config.balance_turns.then_some(self.turns.steps),
            retired: self.retired.clone(),
        }
    }

    /// Check a saved state against this sampler's config and environments; the error names
    /// the field that differs. Nothing is changed.
    fn check_state(&self, s: &SavedState) -> Result<(), InvalidValue> {
        if s.schema_version != STATE_SCHEMA_VERSION {
            return Err(InvalidValue::new(
                "schema_version",
                STATE_SCHEMA_VERSION.to_string(),
                s.schema_version,
            ));
        }
        check_config(&s.config_hash, &s.config, &self.config_hash, &self.config)?;
        if s.envs.len() != self.envs.len() {
            return Err(InvalidValue::new(
                "envs",
                format!("{} environments (this sampler's)", self.envs.len()),
                format!("{} environments", s.envs.len()),
            ));
        }
        let show = |e: &EnvEntry| {
            format!(
                "{} (scale {}..={}, weight {})",
                e.id, e.scale.min, e.scale.max, e.weight
            )
        };
        if let Some((k, (a, b))) = s
            .envs
            .iter()
            .zip(&self.envs)
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            return Err(InvalidValue::new(format!("envs[{k}]"), show(b), show(a)));
        }
        if s.per_env.len() != self.envs.len() {
            return Err(InvalidValue::new(
                "per_env",
                format!("{} entries (one per environment)", self.envs.len()),
                s.per_env.len(),
            ));
        }
        if s.global_level < self.config.harness_start {
            return Err(InvalidValue::new(
                "global_level",
                format!("{} or weaker", self.config.harness_start),
                s.global_level,
            ));
        }
        if s.turn_steps.is_some() != self.config.balance_turns {
            return Err(InvalidValue::new(
                "turn_steps",
                if self.config.balance_turns {
                    "the steps per turn kind (balance_turns is on)"
                } else {
                    "nothing (balance_turns is off)"
                },
                format!("{:?}", s.turn_steps),
            ));
        }
        if self.config.mode.level_rule() != LevelRule::Shared
            && s.global_level != self.config.harness_start
        {
            return Err(InvalidValue::new(
                "global_level",
                format!(
                    "{} (harness_start: only mode global moves the shared level)",
                    self.config.harness_start
                ),
                s.global_level,
            ));
        }
        check_counters(
            s.updates,
            s.unknown,
            s.per_env.iter().map(|st| st.episodes),
            &s.retired,
        )?;
        for (k, st) in s.per_env.iter().enumerate() {
            self.check_env_state(k, st, s.global_level)?;
        }
        Ok(())
    }

    /// Check environment `k`'s saved state against what the state machine can reach under
    /// this configuration; the error names the field (`per_env[k].<field>`).
    fn check_env_state(
        &self,
        k: usize,
        st: &EnvState,
        global_level: HarnessLevel,
    ) -> Result<(), InvalidValue> {
        let mode = self.config.mode;
        let field = |f: &str| format!("per_env[{k}].{f}");
        let (lo, top) = (self.envs[k].scale.min, self.top_lo(k));
        if !(lo..=top).contains(&st.window_lo) {
            return Err(InvalidValue::new(
                field("window_lo"),
                format!("{lo}..={top}"),
                st.window_lo,
            ));
        }
        // The window starts at the bottom and moves by whole steps, stopping at the top.
        let step = self.window_step(k);
        let on_staircase = if mode.slides_scale() {
            st.window_lo == top || (st.window_lo - lo).is_multiple_of(step)
        } else {
            st.window_lo == lo
        };
        if !on_staircase {
            return Err(InvalidValue::new(
                field("window_lo"),
                if mode.slides_scale() {
                    format!("{lo} + a multiple of the window step ({step}), or {top}")
                } else {
                    format!("{lo} (mode {mode} does not slide the window)")
                },
                st.window_lo,
            ));
        }
        check_unit(&field("ema"), st.ema)?;
        if st.stage_episodes == 0 && st.ema != 0.0 {
            return Err(InvalidValue::new(
                field("ema"),
                "0 (no episode counted in the stage yet)",
                st.ema,
            ));
        }
        for (name, n) in [
            ("successes", st.successes),
            ("stage_episodes", u64::from(st.stage_episodes)),
            ("capped_advances", u64::from(st.capped_advances)),
        ] {
            if n > st.episodes {
                return Err(InvalidValue::new(
                    field(name),
                    format!("at most episodes ({})", st.episodes),
                    n,
                ));
            }
        }
        let level_ok = match mode.level_rule() {
            LevelRule::PerEnv => st.level >= self.config.harness_start,
            LevelRule::Shared => st.level == global_level,
            LevelRule::Fixed | LevelRule::Uniform => st.level == self.config.initial_level(),
        };
        if !level_ok {
            return Err(InvalidValue::new(
                field("level"),
                format!("a level mode {mode} can be at"),
                st.level,
            ));
        }
        // `ready` is set only at the mode's last stage.
        let last_stage = match mode {
            Mode::Full => st.level == HarnessLevel::H4 && st.window_lo == top,
            Mode::HarnessOnly => st.level == HarnessLevel::H4,
            Mode::ScaleOnly | Mode::Global => st.window_lo == top,
            Mode::None | Mode::BaselineUniform | Mode::BaselineH4 => false,
        };
        if st.ready && !last_stage {
            return Err(InvalidValue::new(
                field("ready"),
                format!("false (mode {mode}: ready only at its last stage)"),
                st.ready,
            ));
        }
        // In modes that move, a competent or capped stage moves on (or ends ready) at the
        // outcome that makes it so: a stage still open is neither.
        let moves = !matches!(mode, Mode::None | Mode::BaselineUniform | Mode::BaselineH4);
        if moves && !st.ready {
            if self.is_competent(st) {
                return Err(InvalidValue::new(
                    field("ema"),
                    format!(
                        "a competence below competence_threshold ({}) after {} episodes (a competent stage moves on)",
                        self.config.competence_threshold, st.stage_episodes
                    ),
                    st.ema,
                ));
            }
            let cap = self.config.max_stage_episodes;
            if cap > 0 && st.stage_episodes >= cap {
                return Err(InvalidValue::new(
                    field("stage_episodes"),
                    format!("below max_stage_episodes ({cap}): a capped stage moves on"),
                    st.stage_episodes,
                ));
            }
        }
        Ok(())
    }

    /// Restore from a parsed state; on error (which names the field that differs) nothing
    /// changes.
    pub fn restore_state(&mut self, s: SavedState) -> Result<(), CurriculumError> {
        self.check_state(&s).map_err(|e| CurriculumError::State {
            path: None,
            message: e.to_string(),
        })?;
        self.take_state(s);
        Ok(())
    }

    fn take_state(&mut self, s: SavedState) {
        self.rng = s.rng;
        self.global_level = s.global_level;
        self.samples = s.samples;
        self.updates = s.updates;
        self.unknown = s.unknown;
        self.per_env = s.per_env;
        self.turns.steps = s.turn_steps.unwrap_or_default();
        self.retired = s.retired;
    }

    pub(super) fn restore_value(&mut self, v: &serde_json::Value) -> Result<(), InvalidValue> {
        // A rival's state names its sampler; HDC's does not.
        if let Some(other) = v.get("sampler") {
            return Err(InvalidValue::new(
                "sampler",
                "an HDC state (no `sampler` field)",
                format!("{other}: the state belongs to another sampler"),
            ));
        }
        check_schema(v, STATE_SCHEMA_VERSION)?;
        let s: SavedState = parse_state(v, "a saved HDC state")?;
        self.check_state(&s)?;
        self.take_state(s);
        Ok(())
    }

    /// Write the state to `path` atomically (pretty JSON with `schema_version`).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CurriculumError> {
        write_json_atomic(path, &self.saved_state())?;
        Ok(())
    }

    /// Restore the state saved at `path`. A missing, truncated or corrupt file, or a state
    /// from another configuration, is an error naming the file; on error nothing changes.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<(), CurriculumError> {
        let path = path.as_ref();
        let v: serde_json::Value = read_json(path, Some(STATE_SCHEMA_VERSION))?;
        self.restore_value(&v).map_err(|e| CurriculumError::State {
            path: Some(path.to_path_buf()),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use envdist_core::TaskSampler;

    use crate::config::Mode;
    use crate::test_support::{hdc_with, played, sampler, specs};

    #[test]
    fn state_round_trips_and_mismatch_is_explained() {
        let mut s = sampler(Mode::Full);
        for _ in 0..10 {
            let t = s.sample_task();
            s.update(&played(t, true)).unwrap();
        }
        let json = s.state();
        let mut other = hdc_with(&specs(3, 2, 5), 999, |_| {});
        other.restore(&json).unwrap();
        for _ in 0..20 {
            assert_eq!(s.sample_task(), other.sample_task());
        }
        let mut different = hdc_with(&specs(3, 2, 5), 0, |c| c.lambda = 0.5);
        let e = different.restore(&json).unwrap_err().to_string();
        assert!(e.contains("lambda: 1.0 -> 0.5"), "{e}");
        let mut fewer = hdc_with(&specs(2, 2, 5), 0, |_| {});
        let e = fewer.restore(&json).unwrap_err().to_string();
        assert!(e.contains("envs"), "{e}");
    }
}
