//! The HDC state machine: per environment a harness level and a scale window, moved by a
//! success-rate EMA; sampling with exponentially decaying review of earlier levels.

use std::collections::HashMap;
use std::path::Path;

use envdist_core::io::{read_json, write_json_atomic};
use envdist_core::{
    EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, Rng, SamplerStateError, ScaleRange, Task,
    TaskSampler,
};
use serde::{Deserialize, Serialize};

use crate::config::{FixedScale, HdcConfig, Mode};
use crate::error::CurriculumError;

/// Schema version of saved sampler states.
pub const STATE_SCHEMA_VERSION: u32 = 1;
/// Schema version of [`TraceEvent`] lines.
pub const TRACE_SCHEMA_VERSION: u32 = 1;

/// The learning state of one environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvState {
    /// Current harness level (in [`Mode::Global`] the shared level is kept separately).
    pub level: HarnessLevel,
    /// Bottom of the scale window.
    pub window_lo: u32,
    /// Uncorrected success EMA of the current stage (starts at 0; see [`EnvStatus::competence`]).
    pub ema: f32,
    /// Episodes counted in the current stage.
    pub stage_episodes: u32,
    /// Competent at the final stage of its mode (in [`Mode::Global`]: waiting for the others).
    pub ready: bool,
    /// Every outcome reported for this environment.
    pub episodes: u64,
    /// Every success reported for this environment.
    pub successes: u64,
}

/// One environment as the sampler knows it: id, scale range, sampling weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvEntry {
    /// The environment.
    pub id: EnvId,
    /// Its declared scale range.
    pub scale: ScaleRange,
    /// Its (unnormalised) sampling weight.
    pub weight: f32,
}

/// The serialised sampler state ([`TaskSampler::state`] / [`HdcSampler::save`]).
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
    /// The shared level of [`Mode::Global`] (the start level in other modes).
    pub global_level: HarnessLevel,
    /// Tasks sampled so far.
    pub samples: u64,
    /// Outcomes accepted so far (known environment).
    pub updates: u64,
    /// Outcomes ignored because their environment is unknown.
    pub unknown: u64,
    /// One state per environment, in `envs` order.
    pub per_env: Vec<EnvState>,
}

/// What one reported outcome did to the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateEffect {
    /// Unknown environment: nothing changed.
    Unknown,
    /// Counted in the env's totals only: a review level or a stale window, not the current stage.
    OffStage,
    /// Counted toward the current stage's competence.
    Counted,
    /// The environment's window slid up by one scale.
    WindowUp,
    /// The environment's harness weakened one level (window back at the bottom).
    LevelUp,
    /// The shared level of [`Mode::Global`] weakened; every window is back at the bottom.
    GlobalLevelUp,
}

/// A snapshot of one environment for plots and reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvStatus {
    /// The environment.
    pub env: EnvId,
    /// Current harness level (the shared one in [`Mode::Global`]; the fixed one in modes
    /// that do not move it; H4 for [`Mode::BaselineUniform`], which draws every level).
    pub harness: HarnessLevel,
    /// Current scale window, inclusive.
    pub window: (u32, u32),
    /// Bias-corrected success EMA of the current stage (0 before any episode).
    pub competence: f32,
    /// Episodes counted in the current stage.
    pub stage_episodes: u32,
    /// Whether the current stage is mastered (enough episodes and competence >= threshold).
    pub competent: bool,
    /// Finished its mode's last stage (in [`Mode::Global`]: waiting for the shared level).
    pub ready: bool,
    /// Outcomes reported in total.
    pub episodes: u64,
    /// Successes reported in total.
    pub successes: u64,
}

/// One line of a curriculum trace: what was played and where the env's curriculum stood
/// after the outcome was reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Always [`TRACE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Step number (0-based count of outcomes).
    pub step: u64,
    /// Environment played.
    pub env: EnvId,
    /// Harness level of the task played (may be a review level).
    pub harness: HarnessLevel,
    /// Scale of the task played.
    pub scale: u32,
    /// Whether it was solved.
    pub success: bool,
    /// The env's current level after the update.
    pub level: HarnessLevel,
    /// Bottom of the env's window after the update.
    pub window_lo: u32,
    /// Top of the env's window after the update.
    pub window_hi: u32,
}

/// The HDC sampler. Deterministic: the same environments, weights, config, seed and order of
/// `sample`/`update` calls give the same tasks; [`TaskSampler::state`] captures all of it.
#[derive(Debug, Clone)]
pub struct HdcSampler {
    config: HdcConfig,
    config_hash: String,
    envs: Vec<EnvEntry>,
    index: HashMap<EnvId, usize>,
    /// Cumulative weights; `None` when all weights are equal (then one `Rng::index` suffices).
    env_cumulative: Option<Vec<f64>>,
    /// `decay_cumulative[back][d]`: P(level = current - d' for some d' <= d) when `back`
    /// earlier levels are reviewable.
    decay_cumulative: [[f64; 5]; 5],
    rng: Rng,
    global_level: HarnessLevel,
    samples: u64,
    updates: u64,
    unknown: u64,
    per_env: Vec<EnvState>,
}

fn decay_tables(lambda: f32) -> [[f64; 5]; 5] {
    let mut t = [[1.0; 5]; 5];
    for (back, row) in t.iter_mut().enumerate() {
        let w: Vec<f64> = (0..=back)
            .map(|d| (-(lambda as f64) * d as f64).exp())
            .collect();
        let z: f64 = w.iter().sum();
        let mut acc = 0.0;
        for (d, slot) in row.iter_mut().enumerate() {
            if d <= back {
                acc += w[d] / z;
            }
            *slot = if d >= back { 1.0 } else { acc };
        }
    }
    t
}

impl HdcSampler {
    /// A sampler over `envs` (their ids and scale ranges). `weights`, aligned with `envs`,
    /// replaces `config.env_weights` when given; otherwise that map (default 1.0) applies.
    /// Errors name the bad config field, a duplicate id, an unknown id in the weight map, a
    /// wrong weight count, or all-zero weights.
    pub fn new(
        envs: &[EnvSpec],
        weights: Option<&[f32]>,
        config: HdcConfig,
        seed: u64,
    ) -> Result<Self, CurriculumError> {
        config.validate()?;
        if envs.is_empty() {
            return Err(CurriculumError::Envs(
                "expected at least one environment, found none".into(),
            ));
        }
        let mut index = HashMap::with_capacity(envs.len());
        for (i, e) in envs.iter().enumerate() {
            if e.scale.min > e.scale.max {
                return Err(CurriculumError::Envs(format!(
                    "{}: scale range expected min <= max, found {}..={}",
                    e.id, e.scale.min, e.scale.max
                )));
            }
            if index.insert(e.id.clone(), i).is_some() {
                return Err(CurriculumError::Envs(format!(
                    "duplicate environment id {:?}",
                    e.id.as_str()
                )));
            }
        }
        for id in config.env_weights.keys() {
            if !index.contains_key(id) {
                return Err(CurriculumError::Config {
                    field: format!("env_weights.{id}"),
                    expected: "an id among the sampler's environments".into(),
                    found: "an unknown id".into(),
                });
            }
        }
        let weights: Vec<f32> = match weights {
            Some(w) => {
                if w.len() != envs.len() {
                    return Err(CurriculumError::Envs(format!(
                        "weights: expected one per environment ({}), found {}",
                        envs.len(),
                        w.len()
                    )));
                }
                if let Some((i, bad)) = w
                    .iter()
                    .enumerate()
                    .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
                {
                    return Err(CurriculumError::Envs(format!(
                        "weights[{i}] ({}): expected a finite weight >= 0, found {bad}",
                        envs[i].id
                    )));
                }
                w.to_vec()
            }
            None => envs
                .iter()
                .map(|e| config.env_weights.get(&e.id).copied().unwrap_or(1.0))
                .collect(),
        };
        let entries: Vec<EnvEntry> = envs
            .iter()
            .zip(&weights)
            .map(|(e, &weight)| EnvEntry {
                id: e.id.clone(),
                scale: e.scale,
                weight,
            })
            .collect();
        let env_cumulative = Self::cumulative(&entries)?;
        let initial_level = match config.mode {
            Mode::Full | Mode::HarnessOnly | Mode::Global => config.harness_start,
            Mode::ScaleOnly | Mode::BaselineH4 | Mode::BaselineUniform => HarnessLevel::H4,
            Mode::None => config.fixed_harness,
        };
        let per_env = entries
            .iter()
            .map(|e| EnvState {
                level: initial_level,
                window_lo: e.scale.min,
                ema: 0.0,
                stage_episodes: 0,
                ready: false,
                episodes: 0,
                successes: 0,
            })
            .collect();
        Ok(Self {
            config_hash: config.hash_hex(),
            decay_cumulative: decay_tables(config.lambda),
            global_level: config.harness_start,
            config,
            index,
            env_cumulative,
            envs: entries,
            rng: Rng::seed_from_u64(seed),
            samples: 0,
            updates: 0,
            unknown: 0,
            per_env,
        })
    }

    fn cumulative(entries: &[EnvEntry]) -> Result<Option<Vec<f64>>, CurriculumError> {
        let total: f64 = entries.iter().map(|e| e.weight as f64).sum();
        if total.is_nan() || total <= 0.0 {
            return Err(CurriculumError::Envs(
                "weights: expected at least one positive weight, found all zero".into(),
            ));
        }
        let first = entries[0].weight;
        if entries.iter().all(|e| e.weight == first) {
            return Ok(None);
        }
        let mut acc = 0.0;
        Ok(Some(
            entries
                .iter()
                .map(|e| {
                    acc += e.weight as f64;
                    acc
                })
                .collect(),
        ))
    }

    /// The configuration.
    pub fn config(&self) -> &HdcConfig {
        &self.config
    }

    /// The environments in sampler order, with their weights.
    pub fn envs(&self) -> &[EnvEntry] {
        &self.envs
    }

    /// Position of `id` in [`HdcSampler::envs`].
    pub fn env_index(&self, id: &EnvId) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The shared level of [`Mode::Global`].
    pub fn global_level(&self) -> HarnessLevel {
        self.global_level
    }

    /// Tasks sampled so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Outcomes of known environments reported so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The raw state of environment `i`.
    pub fn env_state(&self, i: usize) -> Option<&EnvState> {
        self.per_env.get(i)
    }

    /// The current harness level of environment `i` (see [`EnvStatus::harness`]).
    pub fn current_level(&self, i: usize) -> HarnessLevel {
        match self.config.mode {
            Mode::Global => self.global_level,
            _ => self.per_env[i].level,
        }
    }

    fn top_lo(&self, i: usize) -> u32 {
        let r = self.envs[i].scale;
        let w = self.config.window_width;
        // `max - min < w` rather than `len() <= w`: len() overflows on a full u32 range.
        if r.max - r.min < w {
            r.min
        } else {
            r.max - (w - 1)
        }
    }

    /// The current scale window of environment `i`, inclusive.
    pub fn window(&self, i: usize) -> (u32, u32) {
        let r = self.envs[i].scale;
        match self.config.mode {
            Mode::Full | Mode::ScaleOnly | Mode::Global => {
                let lo = self.per_env[i].window_lo;
                let hi = lo.saturating_add(self.config.window_width - 1).min(r.max);
                (lo, hi)
            }
            Mode::HarnessOnly if self.config.harness_only_scale == FixedScale::Mid => {
                (r.mid(), r.mid())
            }
            _ => (r.min, r.max),
        }
    }

    fn competence_of(&self, st: &EnvState) -> f32 {
        if st.stage_episodes == 0 {
            return 0.0;
        }
        // The EMA starts at 0; dividing by the weight it has accumulated removes that bias.
        let mass = 1.0 - (1.0 - self.config.ema_rate).powf(st.stage_episodes as f32);
        (st.ema / mass).clamp(0.0, 1.0)
    }

    fn is_competent(&self, st: &EnvState) -> bool {
        st.stage_episodes >= self.config.min_episodes
            && self.competence_of(st) >= self.config.competence_threshold
    }

    /// A snapshot of environment `i`, or `None` if out of range.
    pub fn env_status(&self, i: usize) -> Option<EnvStatus> {
        let st = self.per_env.get(i)?;
        Some(EnvStatus {
            env: self.envs[i].id.clone(),
            harness: self.current_level(i),
            window: self.window(i),
            competence: self.competence_of(st),
            stage_episodes: st.stage_episodes,
            competent: self.is_competent(st),
            ready: st.ready,
            episodes: st.episodes,
            successes: st.successes,
        })
    }

    /// Snapshots of every environment, in sampler order.
    pub fn status(&self) -> Vec<EnvStatus> {
        (0..self.envs.len())
            .filter_map(|i| self.env_status(i))
            .collect()
    }

    /// The probability of drawing each environment (sums to 1).
    pub fn env_probabilities(&self) -> Vec<f64> {
        let total: f64 = self.envs.iter().map(|e| e.weight as f64).sum();
        self.envs.iter().map(|e| e.weight as f64 / total).collect()
    }

    /// Number of earlier levels environment `i` currently reviews (0 = only the current one).
    fn review_depth(&self, level: HarnessLevel) -> usize {
        let back = level
            .index()
            .saturating_sub(self.config.harness_start.index());
        if back >= 1 && back <= self.config.decay_span as usize {
            back
        } else {
            0
        }
    }

    /// The probability of each harness level (index 0..=4) for the next task of
    /// environment `i` (sums to 1).
    pub fn level_probabilities(&self, i: usize) -> [f64; 5] {
        let mut p = [0.0; 5];
        match self.config.mode {
            Mode::BaselineUniform => p = [0.2; 5],
            Mode::Full | Mode::HarnessOnly | Mode::Global => {
                let cur = self.current_level(i).index();
                let back = self.review_depth(self.current_level(i));
                let cum = &self.decay_cumulative[back];
                let mut prev = 0.0;
                for (d, &c) in cum.iter().enumerate().take(back + 1) {
                    p[cur - d] = c - prev;
                    prev = c;
                }
            }
            Mode::ScaleOnly | Mode::BaselineH4 | Mode::None => {
                p[self.current_level(i).index()] = 1.0;
            }
        }
        p
    }

    fn draw_env(&mut self) -> usize {
        match &self.env_cumulative {
            None => self.rng.index(self.envs.len()),
            Some(cum) => {
                let total = cum[cum.len() - 1];
                let target = self.rng.next_f64() * total;
                let i = cum.partition_point(|&c| c <= target);
                // Rounding can put `target` at `total`: fall back to the last positive weight.
                if i < cum.len() {
                    i
                } else {
                    self.envs.iter().rposition(|e| e.weight > 0.0).unwrap_or(0)
                }
            }
        }
    }

    fn draw_level(&mut self, i: usize) -> HarnessLevel {
        match self.config.mode {
            Mode::BaselineUniform => HarnessLevel::ALL[self.rng.index(5)],
            Mode::Full | Mode::HarnessOnly | Mode::Global => {
                let cur = self.current_level(i);
                let back = self.review_depth(cur);
                if back == 0 {
                    return cur;
                }
                let u = self.rng.next_f64();
                let cum = &self.decay_cumulative[back];
                let d = cum[..back].iter().position(|&c| u < c).unwrap_or(back);
                HarnessLevel::ALL[cur.index() - d]
            }
            Mode::ScaleOnly | Mode::BaselineH4 | Mode::None => self.current_level(i),
        }
    }

    /// Draw the next task: environment by weight, harness level (with decaying review),
    /// scale uniform in the window, and a fresh episode seed.
    pub fn sample_task(&mut self) -> Task {
        let i = self.draw_env();
        let harness = self.draw_level(i);
        let (lo, hi) = self.window(i);
        let scale = self.rng.range_inclusive(lo, hi);
        let seed = self.rng.next_u64();
        self.samples += 1;
        Task {
            env: self.envs[i].id.clone(),
            seed,
            harness,
            scale,
        }
    }

    fn reset_stage(st: &mut EnvState) {
        st.ema = 0.0;
        st.stage_episodes = 0;
    }

    /// Report an outcome and say what it changed. Outcomes of unknown environments, of
    /// review levels and of scales outside the current window (e.g. sampled by another
    /// worker before the window moved) only count in the totals: competence is measured on
    /// the current stage alone.
    pub fn record(&mut self, outcome: &EpisodeOutcome) -> UpdateEffect {
        let Some(&i) = self.index.get(&outcome.task.env) else {
            self.unknown += 1;
            return UpdateEffect::Unknown;
        };
        self.updates += 1;
        let level = self.current_level(i);
        let (lo, hi) = self.window(i);
        let rate = self.config.ema_rate;
        let st = &mut self.per_env[i];
        st.episodes += 1;
        st.successes += outcome.success as u64;
        if outcome.task.harness != level || !(lo..=hi).contains(&outcome.task.scale) {
            return UpdateEffect::OffStage;
        }
        let x = if outcome.success { 1.0 } else { 0.0 };
        st.ema += rate * (x - st.ema);
        st.stage_episodes = st.stage_episodes.saturating_add(1);
        if !self.is_competent(&self.per_env[i]) {
            return UpdateEffect::Counted;
        }
        let top = self.top_lo(i);
        let min = self.envs[i].scale.min;
        let st = &mut self.per_env[i];
        match self.config.mode {
            Mode::Full | Mode::ScaleOnly | Mode::Global if st.window_lo < top => {
                st.window_lo += 1;
                Self::reset_stage(st);
                UpdateEffect::WindowUp
            }
            Mode::Full | Mode::HarnessOnly => match st.level.weaker() {
                Some(next) => {
                    st.level = next;
                    st.window_lo = min;
                    Self::reset_stage(st);
                    UpdateEffect::LevelUp
                }
                None => {
                    st.ready = true;
                    UpdateEffect::Counted
                }
            },
            Mode::Global => {
                st.ready = true;
                self.maybe_advance_global()
            }
            Mode::ScaleOnly => {
                st.ready = true;
                UpdateEffect::Counted
            }
            Mode::None | Mode::BaselineUniform | Mode::BaselineH4 => UpdateEffect::Counted,
        }
    }

    fn maybe_advance_global(&mut self) -> UpdateEffect {
        let Some(next) = self.global_level.weaker() else {
            return UpdateEffect::Counted;
        };
        let (mut eligible, mut ready) = (0usize, 0usize);
        for (e, st) in self.envs.iter().zip(&self.per_env) {
            if e.weight > 0.0 {
                eligible += 1;
                ready += st.ready as usize;
            }
        }
        if (ready as f64) < self.config.global_fraction as f64 * eligible as f64 {
            return UpdateEffect::Counted;
        }
        self.global_level = next;
        for (e, st) in self.envs.iter().zip(self.per_env.iter_mut()) {
            st.level = next;
            st.window_lo = e.scale.min;
            st.ready = false;
            Self::reset_stage(st);
        }
        UpdateEffect::GlobalLevelUp
    }

    /// A trace line for `outcome` at `step`, with the env's curriculum position as it is now
    /// (call after [`HdcSampler::record`]). `None` for an unknown environment.
    pub fn trace_event(&self, step: u64, outcome: &EpisodeOutcome) -> Option<TraceEvent> {
        let i = self.env_index(&outcome.task.env)?;
        let (window_lo, window_hi) = self.window(i);
        Some(TraceEvent {
            schema_version: TRACE_SCHEMA_VERSION,
            step,
            env: outcome.task.env.clone(),
            harness: outcome.task.harness,
            scale: outcome.task.scale,
            success: outcome.success,
            level: self.current_level(i),
            window_lo,
            window_hi,
        })
    }

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
        }
    }

    /// Check a saved state against this sampler's config and environments; the error says
    /// what differs. Nothing is changed.
    fn check_state(&self, s: &SavedState) -> Result<(), String> {
        if s.schema_version != STATE_SCHEMA_VERSION {
            return Err(format!(
                "schema_version: expected {STATE_SCHEMA_VERSION}, found {}",
                s.schema_version
            ));
        }
        if s.config.hash_hex() != s.config_hash {
            return Err(format!(
                "config_hash: expected {} (the hash of the saved config), found {}: the state was edited or is corrupt",
                s.config.hash_hex(),
                s.config_hash
            ));
        }
        if s.config_hash != self.config_hash {
            let diff = s.config.diff(&self.config);
            return Err(format!(
                "it was saved under a different configuration (hash {} vs {}); differing fields (saved -> current): {}",
                s.config_hash,
                self.config_hash,
                diff.join("; ")
            ));
        }
        if s.envs.len() != self.envs.len() {
            return Err(format!(
                "envs: the state has {} environments, this sampler {}",
                s.envs.len(),
                self.envs.len()
            ));
        }
        for (k, (a, b)) in s.envs.iter().zip(&self.envs).enumerate() {
            if a != b {
                return Err(format!(
                    "envs[{k}]: saved {} (scale {}..={}, weight {}), current {} (scale {}..={}, weight {})",
                    a.id,
                    a.scale.min,
                    a.scale.max,
                    a.weight,
                    b.id,
                    b.scale.min,
                    b.scale.max,
                    b.weight
                ));
            }
        }
        if s.per_env.len() != self.envs.len() {
            return Err(format!(
                "per_env: expected {} entries (one per environment), found {}",
                self.envs.len(),
                s.per_env.len()
            ));
        }
        if s.global_level < self.config.harness_start {
            return Err(format!(
                "global_level: expected {} or weaker, found {}",
                self.config.harness_start, s.global_level
            ));
        }
        for (k, st) in s.per_env.iter().enumerate() {
            let r = self.envs[k].scale;
            if !(st.window_lo >= r.min && st.window_lo <= self.top_lo(k)) {
                return Err(format!(
                    "per_env[{k}].window_lo: expected {}..={}, found {}",
                    r.min,
                    self.top_lo(k),
                    st.window_lo
                ));
            }
            if !(st.ema.is_finite() && (0.0..=1.0).contains(&st.ema)) {
                return Err(format!(
                    "per_env[{k}].ema: expected a value in [0, 1], found {}",
                    st.ema
                ));
            }
            if st.successes > st.episodes {
                return Err(format!(
                    "per_env[{k}].successes: expected at most episodes ({}), found {}",
                    st.episodes, st.successes
                ));
            }
            let level_ok = match self.config.mode {
                Mode::Full | Mode::HarnessOnly => st.level >= self.config.harness_start,
                Mode::Global => st.level == s.global_level,
                Mode::ScaleOnly | Mode::BaselineH4 | Mode::BaselineUniform => {
                    st.level == HarnessLevel::H4
                }
                Mode::None => st.level == self.config.fixed_harness,
            };
            if !level_ok {
                return Err(format!(
                    "per_env[{k}].level: {} is not a level mode {} can be at",
                    st.level, self.config.mode
                ));
            }
        }
        Ok(())
    }

    /// Restore from a parsed state; on error (which says what differs) nothing changes.
    pub fn restore_state(&mut self, s: SavedState) -> Result<(), CurriculumError> {
        self.check_state(&s)
            .map_err(|message| CurriculumError::State {
                path: None,
                message,
            })?;
        self.rng = s.rng;
        self.global_level = s.global_level;
        self.samples = s.samples;
        self.updates = s.updates;
        self.unknown = s.unknown;
        self.per_env = s.per_env;
        Ok(())
    }

    fn restore_value(&mut self, v: &serde_json::Value) -> Result<(), String> {
        // A rival's state names its sampler; HDC's does not.
        if let Some(other) = v.get("sampler") {
            return Err(format!(
                "sampler: expected an HDC state (no `sampler` field), found {other}: the state belongs to another sampler"
            ));
        }
        let found = v.get("schema_version");
        if found.and_then(|x| x.as_u64()) != Some(STATE_SCHEMA_VERSION as u64) {
            return Err(format!(
                "schema_version: expected {STATE_SCHEMA_VERSION}, found {}",
                found.map_or_else(|| "nothing".into(), |x| x.to_string())
            ));
        }
        let s: SavedState = serde_path_to_error::deserialize(v)
            .map_err(|e| format!("field `{}`: {}", e.path(), e.inner()))?;
        self.restore_state(s).map_err(|e| match e {
            CurriculumError::State { message, .. } => message,
            other => other.to_string(),
        })
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
        self.restore_value(&v)
            .map_err(|message| CurriculumError::State {
                path: Some(path.to_path_buf()),
                message,
            })
    }
}

impl TaskSampler for HdcSampler {
    fn sample(&mut self) -> Task {
        self.sample_task()
    }

    fn update(&mut self, outcome: &EpisodeOutcome) {
        self.record(outcome);
    }

    fn state(&self) -> serde_json::Value {
        serde_json::to_value(self.saved_state()).unwrap_or(serde_json::Value::Null)
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        self.restore_value(state).map_err(SamplerStateError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{outcome, specs};

    fn sampler(mode: Mode) -> HdcSampler {
        let cfg = HdcConfig {
            mode,
            min_episodes: 3,
            ..Default::default()
        };
        HdcSampler::new(&specs(3, 2, 5), None, cfg, 11).unwrap()
    }

    #[test]
    fn decay_tables_are_cumulative_and_end_at_one() {
        let t = decay_tables(1.0);
        assert_eq!(t[0], [1.0; 5]);
        let e = (-1.0f64).exp();
        assert!((t[1][0] - 1.0 / (1.0 + e)).abs() < 1e-12);
        for row in t {
            assert!(row.windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(row[4], 1.0);
        }
    }

    #[test]
    fn full_mode_walks_the_staircase() {
        let mut s = sampler(Mode::Full);
        let id = EnvId::new("fam/v0");
        let mut effects = Vec::new();
        // Scale range 2..=5, window 2: lo 2 -> 3 -> 4, then H1 at lo 2.
        for _ in 0..12 {
            let (lo, _) = s.window(0);
            let lvl = s.current_level(0);
            effects.push(s.record(&outcome(&id, lvl, lo, true)));
        }
        let ups: Vec<_> = effects
            .iter()
            .filter(|e| **e != UpdateEffect::Counted)
            .collect();
        assert_eq!(
            ups,
            [
                &UpdateEffect::WindowUp,
                &UpdateEffect::WindowUp,
                &UpdateEffect::LevelUp,
                &UpdateEffect::WindowUp
            ]
        );
        assert_eq!(s.current_level(0), HarnessLevel::H1);
        assert_eq!(s.window(0), (3, 4));
        // Review outcomes at H0 and stale windows do not count toward the stage.
        assert_eq!(
            s.record(&outcome(&id, HarnessLevel::H0, 3, true)),
            UpdateEffect::OffStage
        );
        assert_eq!(
            s.record(&outcome(&id, HarnessLevel::H1, 2, true)),
            UpdateEffect::OffStage
        );
        assert_eq!(
            s.record(&outcome(&EnvId::new("nope/x"), HarnessLevel::H1, 2, true)),
            UpdateEffect::Unknown
        );
        assert_eq!(s.env_status(0).unwrap().episodes, 14);
    }

    #[test]
    fn failures_keep_the_stage() {
        let mut s = sampler(Mode::Full);
        let id = EnvId::new("fam/v1");
        for _ in 0..50 {
            assert_eq!(
                s.record(&outcome(&id, HarnessLevel::H0, 2, false)),
                UpdateEffect::Counted
            );
        }
        let st = s.env_status(1).unwrap();
        assert_eq!(
            (st.harness, st.window, st.competent),
            (HarnessLevel::H0, (2, 3), false)
        );
    }

    #[test]
    fn global_mode_waits_for_the_fraction() {
        let cfg = HdcConfig {
            mode: Mode::Global,
            min_episodes: 1,
            window_width: 4,
            global_fraction: 0.6,
            ..Default::default()
        };
        let mut s = HdcSampler::new(&specs(3, 2, 5), None, cfg, 1).unwrap();
        let a = EnvId::new("fam/v0");
        let b = EnvId::new("fam/v1");
        // Window width 4 covers 2..=5, so one success makes an env ready.
        assert_eq!(
            s.record(&outcome(&a, HarnessLevel::H0, 2, true)),
            UpdateEffect::Counted
        );
        assert_eq!(s.global_level(), HarnessLevel::H0);
        assert_eq!(
            s.record(&outcome(&b, HarnessLevel::H0, 2, true)),
            UpdateEffect::GlobalLevelUp
        );
        assert!(
            s.status()
                .iter()
                .all(|e| e.harness == HarnessLevel::H1 && !e.ready)
        );
    }

    #[test]
    fn state_round_trips_and_mismatch_is_explained() {
        let mut s = sampler(Mode::Full);
        for _ in 0..10 {
            let t = s.sample_task();
            s.update(&EpisodeOutcome {
                task: t,
                success: true,
                episode_return: 1.0,
                steps: 3,
            });
        }
        let json = s.state();
        let mut other = HdcSampler::new(
            &specs(3, 2, 5),
            None,
            HdcConfig {
                min_episodes: 3,
                ..Default::default()
            },
            999,
        )
        .unwrap();
        other.restore(&json).unwrap();
        for _ in 0..20 {
            assert_eq!(s.sample_task(), other.sample_task());
        }
        let mut different = HdcSampler::new(
            &specs(3, 2, 5),
            None,
            HdcConfig {
                min_episodes: 3,
                lambda: 0.5,
                ..Default::default()
            },
            0,
        )
        .unwrap();
        let e = different.restore(&json).unwrap_err().to_string();
        assert!(e.contains("lambda: 1.0 -> 0.5"), "{e}");
        let mut fewer = HdcSampler::new(
            &specs(2, 2, 5),
            None,
            HdcConfig {
                min_episodes: 3,
                ..Default::default()
            },
            0,
        )
        .unwrap();
        let e = fewer.restore(&json).unwrap_err().to_string();
        assert!(e.contains("envs"), "{e}");
    }

    #[test]
    fn construction_errors_name_the_problem() {
        let e = HdcSampler::new(&[], None, HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least one environment"), "{e}");
        let mut dup = specs(2, 1, 3);
        dup[1].id = dup[0].id.clone();
        let e = HdcSampler::new(&dup, None, HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("duplicate"), "{e}");
        let e = HdcSampler::new(&specs(2, 1, 3), Some(&[1.0]), HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one per environment"), "{e}");
        let e = HdcSampler::new(&specs(2, 1, 3), Some(&[0.0, 0.0]), HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("positive"), "{e}");
        let cfg = HdcConfig {
            env_weights: [(EnvId::new("zzz/q"), 1.0)].into_iter().collect(),
            ..Default::default()
        };
        let e = HdcSampler::new(&specs(2, 1, 3), None, cfg, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("env_weights.zzz/q"), "{e}");
    }

    #[test]
    fn extreme_scale_ranges_do_not_overflow() {
        let mut envs = specs(2, 0, u32::MAX);
        envs[1].scale = ScaleRange { min: 7, max: 7 };
        let cfg = HdcConfig {
            min_episodes: 1,
            window_width: u32::MAX,
            ..Default::default()
        };
        let mut s = HdcSampler::new(&envs, None, cfg, 2).unwrap();
        // A window of u32::MAX scales covers all but one of the 2^32 scales.
        assert_eq!((s.window(0), s.window(1)), ((0, u32::MAX - 1), (7, 7)));
        for _ in 0..50 {
            let t = s.sample_task();
            let o = EpisodeOutcome {
                task: t,
                success: true,
                episode_return: 1.0,
                steps: 1,
            };
            s.record(&o);
        }
        assert!(s.status().iter().all(|e| e.harness > HarnessLevel::H0));
    }

    #[test]
    fn zero_weight_envs_are_never_drawn() {
        let mut s = HdcSampler::new(
            &specs(3, 1, 3),
            Some(&[0.0, 2.0, 0.0]),
            HdcConfig::default(),
            5,
        )
        .unwrap();
        for _ in 0..500 {
            assert_eq!(s.sample_task().env.as_str(), "fam/v1");
        }
        assert_eq!(s.env_probabilities(), vec![0.0, 1.0, 0.0]);
    }
}
