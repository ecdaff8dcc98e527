//! The HDC state machine: the per-environment learning state, drawing tasks (environment by
//! weight, level with decaying review, scale in the window) and moving the stage on each
//! reported outcome.

use envdist_core::{EpisodeOutcome, HarnessLevel, OutcomeError, Task, TaskSampler};
use serde::{Deserialize, Serialize};

use super::HdcSampler;
use crate::config::{FixedScale, LevelRule, Mode};

/// The learning state of one environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvState {
    /// Current harness level (in [`Mode::Global`] the shared level is kept separately).
    pub level: HarnessLevel,
    /// Bottom of the scale window.
    pub window_lo: u32,
    /// Uncorrected success EMA of the current stage (starts at 0; see
    /// [`EnvStatus::competence`](super::EnvStatus::competence)).
    pub ema: f32,
    /// Episodes counted in the current stage.
    pub stage_episodes: u32,
    /// Competent at the final stage of its mode (in [`Mode::Global`]: waiting for the others).
    pub ready: bool,
    /// Every outcome reported for this environment.
    pub episodes: u64,
    /// Every success reported for this environment.
    pub successes: u64,
    /// Stage advances forced by [`crate::HdcConfig::max_stage_episodes`] rather than earned by
    /// competence.
    #[serde(default)]
    pub capped_advances: u32,
}

/// What one reported outcome did to the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateEffect {
    /// An environment a retarget dropped (its task was in flight): counted apart, nothing
    /// else changed.
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

pub(super) fn decay_tables(lambda: f32) -> [[f64; 5]; 5] {
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
    /// The current harness level of environment `i` (see
    /// [`EnvStatus::harness`](super::EnvStatus::harness)).
    pub fn current_level(&self, i: usize) -> HarnessLevel {
        match self.config.mode.level_rule() {
            LevelRule::Shared => self.global_level,
            _ => self.per_env[i].level,
        }
    }

    /// Width of environment `i`'s scale window (see [`HdcConfig::windows_per_level`]).
    pub(super) fn window_width(&self, i: usize) -> u32 {
        match self.config.windows_per_level {
            0 => self.config.window_width,
            n => {
                let r = self.envs[i].scale;
                // Scales in the range, saturating (a full u32 range has 2^32 of them).
                let len = (r.max - r.min).saturating_add(1);
                len.div_ceil(n).max(1)
            }
        }
    }

    /// How far environment `i`'s window moves when a stage is passed.
    pub(super) fn window_step(&self, i: usize) -> u32 {
        match self.config.windows_per_level {
            0 => self.config.window_step,
            _ => self.window_width(i),
        }
    }

    pub(super) fn top_lo(&self, i: usize) -> u32 {
        let r = self.envs[i].scale;
        let w = self.window_width(i);
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
            mode if self.config.consolidate && mode != Mode::Global && self.per_env[i].ready => {
                (r.min, r.max)
            }
            mode if mode.slides_scale() => {
                let lo = self.per_env[i].window_lo;
                let hi = lo.saturating_add(self.window_width(i) - 1).min(r.max);
                (lo, hi)
            }
            Mode::HarnessOnly if self.config.harness_only_scale == FixedScale::Mid => {
                (r.mid(), r.mid())
            }
            _ => (r.min, r.max),
        }
    }

    pub(super) fn competence_of(&self, st: &EnvState) -> f32 {
        if st.stage_episodes == 0 {
            return 0.0;
        }
        // The EMA starts at 0; dividing by the weight it has accumulated removes that bias.
        let mass = 1.0 - (1.0 - self.config.ema_rate).powf(st.stage_episodes as f32);
        (st.ema / mass).clamp(0.0, 1.0)
    }

    pub(super) fn is_competent(&self, st: &EnvState) -> bool {
        st.stage_episodes >= self.config.min_episodes
            && self.competence_of(st) >= self.config.competence_threshold
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
        match self.config.mode.level_rule() {
            LevelRule::Uniform => p = [0.2; 5],
            LevelRule::PerEnv | LevelRule::Shared => {
                let cur = self.current_level(i).index();
                let back = self.review_depth(self.current_level(i));
                let cum = &self.decay_cumulative[back];
                let mut prev = 0.0;
                for (d, &c) in cum.iter().enumerate().take(back + 1) {
                    p[cur - d] = c - prev;
                    prev = c;
                }
            }
            LevelRule::Fixed => {
                p[self.current_level(i).index()] = 1.0;
            }
        }
        p
    }

    fn draw_env(&mut self) -> usize {
        let t = &self.turns;
        if self.config.balance_turns && t.members.iter().all(|m| !m.is_empty()) {
            // The kind behind in steps (single-turn on a tie), then one of its environments
            // by weight.
            let kind = usize::from(t.steps[1] < t.steps[0]);
            let members = &t.members[kind];
            let weights: Vec<f64> = members
                .iter()
                .map(|&i| self.envs[i].weight as f64)
                .collect();
            let j = if weights.iter().all(|w| *w == weights[0]) {
                self.rng.index(members.len())
            } else {
                self.rng
                    .weighted_index(&weights)
                    .unwrap_or_else(|| self.rng.index(members.len()))
            };
            return members[j];
        }
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
        match self.config.mode.level_rule() {
            LevelRule::Uniform => HarnessLevel::ALL[self.rng.index(5)],
            LevelRule::PerEnv | LevelRule::Shared => {
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
            LevelRule::Fixed => self.current_level(i),
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
        self.samples = self.samples.saturating_add(1);
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

    /// Report an outcome and say what it changed. An outcome this sampler could not have
    /// been told is refused ([`TaskSampler::check_outcome`]) and changes nothing. Outcomes of
    /// dropped environments, of review levels and of scales outside the current window (e.g.
    /// sampled by another worker before the window moved) only count in the totals:
    /// competence is measured on the current stage alone.
    pub fn record(&mut self, outcome: &EpisodeOutcome) -> Result<UpdateEffect, OutcomeError> {
        self.check_outcome(outcome)?;
        Ok(self.apply(outcome))
    }

    /// [`HdcSampler::record`] of a checked outcome.
    fn apply(&mut self, outcome: &EpisodeOutcome) -> UpdateEffect {
        let Some(&i) = self.index.get(&outcome.task.env) else {
            self.unknown = self.unknown.saturating_add(1);
            return UpdateEffect::Unknown;
        };
        self.updates = self.updates.saturating_add(1);
        let kind = self.turns.kind_of(i);
        self.turns.steps[kind] = self.turns.steps[kind].saturating_add(u64::from(outcome.steps));
        let level = self.current_level(i);
        let (lo, hi) = self.window(i);
        let rate = self.config.ema_rate;
        let st = &mut self.per_env[i];
        st.episodes = st.episodes.saturating_add(1);
        st.successes = st.successes.saturating_add(outcome.success as u64);
        if outcome.task.harness != level || !(lo..=hi).contains(&outcome.task.scale) {
            return UpdateEffect::OffStage;
        }
        let x = if outcome.success { 1.0 } else { 0.0 };
        st.ema += rate * (x - st.ema);
        st.stage_episodes = st.stage_episodes.saturating_add(1);
        let cap = self.config.max_stage_episodes;
        let competent = self.is_competent(&self.per_env[i]);
        let capped = !competent && cap > 0 && self.per_env[i].stage_episodes >= cap;
        if !competent && !capped {
            return UpdateEffect::Counted;
        }
        let top = self.top_lo(i);
        let min = self.envs[i].scale.min;
        let step = self.window_step(i);
        let st = &mut self.per_env[i];
        let was_ready = st.ready;
        let effect = match self.config.mode {
            mode if mode.slides_scale() && st.window_lo < top => {
                st.window_lo = st.window_lo.saturating_add(step).min(top);
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
        };
        // A capped stage counts once, when the cap moves the environment on (a window or
        // level up, or its first "ready" at the last stage): an environment that sits at its
        // last stage past the cap advances nowhere and is not counted again.
        let st = &mut self.per_env[i];
        let moved = matches!(effect, UpdateEffect::WindowUp | UpdateEffect::LevelUp)
            || (!was_ready && st.ready);
        if capped && moved {
            st.capped_advances = st.capped_advances.saturating_add(1);
        }
        effect
    }

    fn maybe_advance_global(&mut self) -> UpdateEffect {
        let Some(next) = self.global_level.weaker() else {
            return UpdateEffect::Counted;
        };
        let (mut eligible, mut ready) = (0usize, 0usize);
        for (e, st) in self.envs.iter().zip(&self.per_env) {
            if e.weight > 0.0 {
                eligible = eligible.saturating_add(1);
                ready = ready.saturating_add(st.ready as usize);
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
}

#[cfg(test)]
mod tests {
    use envdist_core::{EnvId, HarnessLevel, ScaleRange};
    use serde_json::json;

    use super::*;
    use crate::config::HdcConfig;
    use crate::test_support::{config, hdc_with, outcome, played, sampler, specs};

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
    fn windows_per_level_give_short_and_long_ranges_the_same_number_of_stages() {
        let cfg: HdcConfig = config(json!({"min_episodes": 2, "competence_threshold": 0.5,
            "ema_rate": 0.5, "windows_per_level": 2}));
        for (min, max, first, second) in [(1, 4, (1, 2), (3, 4)), (1, 12, (1, 6), (7, 12))] {
            let mut s = HdcSampler::new(&specs(1, min, max), None, cfg.clone(), 1).unwrap();
            let id = EnvId::new("fam/e0");
            assert_eq!(s.window(0), first, "range {min}..={max}");
            s.record(&outcome(&id, HarnessLevel::H0, min, true))
                .unwrap();
            s.record(&outcome(&id, HarnessLevel::H0, min, true))
                .unwrap();
            assert_eq!(s.window(0), second, "range {min}..={max}");
            s.record(&outcome(&id, HarnessLevel::H0, max, true))
                .unwrap();
            let effect = s
                .record(&outcome(&id, HarnessLevel::H0, max, true))
                .unwrap();
            assert_eq!(effect, UpdateEffect::LevelUp, "range {min}..={max}");
            assert_eq!(
                s.window(0),
                first,
                "back at the bottom, range {min}..={max}"
            );
        }
    }

    #[test]
    fn window_steps_jump_and_a_capped_stage_advances_and_is_counted() {
        // Range 2..=5, window 2: the window jumps 2 -> 4 (the top), then the level weakens.
        let mut s = hdc_with(&specs(1, 2, 5), 1, |c| {
            (c.window_step, c.max_stage_episodes) = (2, 4);
        });
        let id = EnvId::new("fam/e0");
        for _ in 0..3 {
            s.record(&outcome(&id, HarnessLevel::H0, 2, true)).unwrap();
        }
        assert_eq!(s.window(0), (4, 5), "jumped by the window step");
        // Four failures at the top: not competent, but the cap moves the stage on.
        let effects: Vec<_> = (0..4)
            .map(|_| s.record(&outcome(&id, HarnessLevel::H0, 4, false)).unwrap())
            .collect();
        assert_eq!(effects[..3], [UpdateEffect::Counted; 3]);
        assert_eq!(effects[3], UpdateEffect::LevelUp);
        assert_eq!(s.current_level(0), HarnessLevel::H1);
        assert_eq!(s.env_state(0).unwrap().capped_advances, 1);
        // At the last stage (H4, top window) the cap can move nothing: however many failures
        // follow, it is counted once (the stage's first "ready"), not once per episode.
        let mut last = hdc_with(&specs(1, 2, 3), 1, |c| {
            (c.max_stage_episodes, c.harness_start) = (4, HarnessLevel::H4);
        });
        for _ in 0..40 {
            last.record(&outcome(&id, HarnessLevel::H4, 2, false))
                .unwrap();
        }
        assert_eq!(last.current_level(0), HarnessLevel::H4);
        assert_eq!(last.env_state(0).unwrap().capped_advances, 1);
    }

    #[test]
    fn full_mode_walks_the_staircase() {
        let mut s = sampler(Mode::Full);
        let id = EnvId::new("fam/e0");
        let mut effects = Vec::new();
        // Scale range 2..=5, window 2: lo 2 -> 3 -> 4, then H1 at lo 2.
        for _ in 0..12 {
            let (lo, _) = s.window(0);
            let lvl = s.current_level(0);
            effects.push(s.record(&outcome(&id, lvl, lo, true)).unwrap());
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
            s.record(&outcome(&id, HarnessLevel::H0, 3, true)).unwrap(),
            UpdateEffect::OffStage
        );
        assert_eq!(
            s.record(&outcome(&id, HarnessLevel::H1, 2, true)).unwrap(),
            UpdateEffect::OffStage
        );
        // What the sampler could not have drawn is refused and changes nothing: an unknown
        // environment, a scale out of range, a non-finite return.
        let before = s.saved_state();
        let unknown = outcome(&EnvId::new("nope/x"), HarnessLevel::H1, 2, true);
        let e = s.record(&unknown).unwrap_err().to_string();
        assert!(
            e.contains("nope/x|H1|2|0") && e.contains("field `env`"),
            "{e}"
        );
        let e = s
            .record(&outcome(&id, HarnessLevel::H1, 6, true))
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected 2..=5"), "{e}");
        let mut nan = outcome(&id, HarnessLevel::H1, 2, true);
        nan.episode_return = f32::NAN;
        assert!(s.record(&nan).is_err());
        assert_eq!(s.saved_state(), before);
        assert_eq!(s.env_status(0).unwrap().episodes, 14);
    }

    #[test]
    fn failures_keep_the_stage() {
        let mut s = sampler(Mode::Full);
        let id = EnvId::new("fam/e1");
        for _ in 0..50 {
            assert_eq!(
                s.record(&outcome(&id, HarnessLevel::H0, 2, false)).unwrap(),
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
        let mut s = hdc_with(&specs(3, 2, 5), 1, |c| {
            (c.mode, c.min_episodes, c.window_width) = (Mode::Global, 1, 4);
            c.global_fraction = 0.6;
        });
        let (a, b) = (EnvId::new("fam/e0"), EnvId::new("fam/e1"));
        // Window width 4 covers 2..=5, so one success makes an env ready.
        assert_eq!(
            s.record(&outcome(&a, HarnessLevel::H0, 2, true)).unwrap(),
            UpdateEffect::Counted
        );
        assert_eq!(s.global_level(), HarnessLevel::H0);
        assert_eq!(
            s.record(&outcome(&b, HarnessLevel::H0, 2, true)).unwrap(),
            UpdateEffect::GlobalLevelUp
        );
        assert!(
            s.status()
                .iter()
                .all(|e| e.harness == HarnessLevel::H1 && !e.ready)
        );
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
            s.record(&played(t, true)).unwrap();
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
            assert_eq!(s.sample_task().env.as_str(), "fam/e1");
        }
        assert_eq!(s.env_probabilities(), vec![0.0, 1.0, 0.0]);
    }
}
