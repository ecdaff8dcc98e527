//! Robust prioritized level replay (PLR⊥): replay the exact tasks with the largest learning
//! signal, mixed with new ones, and train only on the replays.
//!
//! References: facebookresearch/level-replay `level_replay/level_sampler.py` (Jiang et al.
//! 2021, PLR) and facebookresearch/dcd `level_replay/level_sampler.py` with
//! `arguments.py` and `train_scripts/grid_configs/minigrid/25_blocks/mg_25b_robust_plr.json`
//! (Jiang et al. 2021, "Replay-Guided Adversarial Environment Design", robust PLR). The rule,
//! in dcd's unbounded-level mode:
//! - A *level* is one replayable task; here `(environment, seed, harness level, scale)`, so a
//!   replay plays the identical episode again.
//! - Each draw is a replay when the buffer is at least `rho` full and a uniform draw falls
//!   below the replay rate (`replay_prob`, or `min(fill, replay_prob)` under the default
//!   `proportionate` schedule); otherwise a new level: a fresh seed, the environment uniform,
//!   the harness uniform over `harness_levels`, the scale uniform over the range.
//! - A replay draws buffer level `i` with `P = (1 - c) P_S + c P_C`: `P_S` from the scores
//!   (default `rank`: `h_i = 1 / rank_i`, `P_S ∝ h_i^(1/beta)`), `P_C ∝ staleness_i^(1/T_C)`,
//!   staleness counting replay draws since the level was last replayed (reset to 0 when
//!   drawn). Here the mixture is drawn in two stages (coin `c`, then `P_C` or `P_S`), the same
//!   distribution; rank ties go to the lower buffer slot.
//! - A played new level enters the buffer with its score and the staleness of the draws
//!   since it was drawn: in the next free slot, or, once full, in place of the level with the
//!   lowest replay probability (`replay_support`) if that level's score is not higher.
//!   A replayed level's score becomes `(1 - alpha) old + alpha new`.
//! - Robust: gradients only from replayed levels (`no_exploratory_grad_updates`). A sampler
//!   cannot skip gradients, so it says which tasks are replays: [`PlrSampler::is_replay`]
//!   (and [`envdist_core::TaskSampler::trains_on`], false for new levels when `robust`). A
//!   trainer asks when the episode ends, *before* reporting the outcome (the report moves a
//!   new level into the buffer), still reports every outcome so new levels get scored, and
//!   leaves the new-level episodes out of its loss. dcd decides replay or new per batch; here it is per
//!   task, so a batch mixes both and the trainer masks per episode.
//!
//! Scores: PLR's are value losses (L1 or positive part of the GAE), which an outcome does not
//! carry. With a sparse terminal reward and the value of the first state standing in for the
//! whole episode, the advantage is `x - V` for success `x`; `V` here is the running success
//! rate of the level's (environment, harness level, scale) category, an EMA taken before the
//! outcome joins it. `value_l1` (default, PLR's Procgen choice) scores `|x - V|`,
//! `positive_value_loss` (robust PLR's paper) `max(x - V, 0)`.

use std::collections::{HashMap, HashSet, VecDeque};

use envdist_core::{EpisodeOutcome, HarnessLevel, InvalidValue, Rng, Task};
use serde::{Deserialize, Serialize};

use super::RuleSampler;
use super::{
    ArmSpace, Carry, Draw, EnvScores, Located, Pick, Rule, RuleConfig, Saved, Seen, bad,
    check_arm_sums, check_at_most, check_len, check_levels, check_nonneg, check_positive,
    check_rate, check_unit, draw_index, h4_only, if_played,
};
#[cfg(test)]
use crate::PlrSampler;
use crate::error::CurriculumError;

/// New levels awaiting their outcome that the sampler remembers; beyond this the oldest is
/// forgotten (its outcome then only moves `V`). Far above any number of episodes in flight.
pub const MAX_PENDING: usize = 1 << 16;

/// When a draw is a replay (dcd `level_replay_schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReplaySchedule {
    /// Replay with probability `min(fill, replay_prob)` once `fill >= rho` (dcd default).
    #[default]
    Proportionate,
    /// Replay with probability `replay_prob` once `fill >= rho`.
    Fixed,
}

/// How scores become replay weights (dcd `level_replay_score_transform`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ScoreTransform {
    /// `1 / rank^(1/beta)` (PLR's choice).
    #[default]
    Rank,
    /// `(score + eps)^(1/beta)`, `eps = 1e-3` only without staleness (dcd).
    Power,
    /// `exp(score / beta)`.
    Softmax,
}

/// Which buffer level a new one may replace when the buffer is full (dcd
/// `level_replay_seed_buffer_priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BufferPriority {
    /// The level least likely to be replayed (dcd default).
    #[default]
    ReplaySupport,
    /// The level with the lowest score.
    Score,
}

/// The outcome-based level score (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PlrScore {
    /// `|x - V|`: PLR's L1 value loss.
    #[default]
    ValueL1,
    /// `max(x - V, 0)`: robust PLR's positive value loss.
    PositiveValueLoss,
}

/// Parameters of [`PlrSampler`](crate::PlrSampler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlrConfig {
    /// Harness levels of new levels (uniform), strictly increasing. Default `[H4]`: levels
    /// are tasks at the evaluation level; list more to replay over (env, level) too.
    pub harness_levels: Vec<HarnessLevel>,
    /// Buffer capacity in levels. Default 4000: dcd `level_replay_seed_buffer_size`.
    pub buffer_size: u32,
    /// Replay rate. Default 0.5: dcd robust PLR configs `level_replay_prob`.
    pub replay_prob: f32,
    /// Buffer fill needed before any replay. Default 0.5: dcd robust PLR configs
    /// `level_replay_rho`.
    pub rho: f32,
    /// Replay schedule. Default proportionate: dcd `level_replay_schedule`.
    pub schedule: ReplaySchedule,
    /// Score transform. Default rank: dcd `level_replay_score_transform`.
    pub score_transform: ScoreTransform,
    /// Temperature `beta` of the score transform. Default 0.1: dcd
    /// `level_replay_temperature`.
    pub temperature: f32,
    /// Staleness mix `c`. Default 0.3: dcd `staleness_coef`.
    pub staleness_coef: f32,
    /// Temperature of the staleness power transform. Default 1.0: dcd
    /// `staleness_temperature`.
    pub staleness_temperature: f32,
    /// Score EWA on replays: `(1 - alpha) old + alpha new`. Default 1.0: dcd
    /// `level_replay_alpha`.
    pub alpha: f32,
    /// Which level a new one may replace. Default replay support: dcd
    /// `level_replay_seed_buffer_priority`.
    pub buffer_priority: BufferPriority,
    /// Outcome-based score. Default `value_l1`.
    pub score: PlrScore,
    /// EMA rate of the per-category success `V`. Default 0.1 (ours, as the other rivals).
    pub value_rate: f32,
    /// `V` of an unplayed category. Default 0.5 (ours).
    pub value_prior: f32,
    /// Train only on replays (robust PLR, dcd `no_exploratory_grad_updates`). Default true.
    pub robust: bool,
}

impl Default for PlrConfig {
    fn default() -> Self {
        Self {
            harness_levels: h4_only(),
            buffer_size: 4000,
            replay_prob: 0.5,
            rho: 0.5,
            schedule: ReplaySchedule::Proportionate,
            score_transform: ScoreTransform::Rank,
            temperature: 0.1,
            staleness_coef: 0.3,
            staleness_temperature: 1.0,
            alpha: 1.0,
            buffer_priority: BufferPriority::ReplaySupport,
            score: PlrScore::ValueL1,
            value_rate: 0.1,
            value_prior: 0.5,
            robust: true,
        }
    }
}

impl RuleConfig for PlrConfig {
    fn validate(&self) -> Result<(), CurriculumError> {
        check_levels("harness_levels", &self.harness_levels)?;
        if self.buffer_size == 0 || self.buffer_size > 1 << 20 {
            return Err(bad("buffer_size", "1..=1048576 levels", self.buffer_size));
        }
        check_rate("replay_prob", self.replay_prob, false)?;
        check_rate("rho", self.rho, false)?;
        for (field, v) in [
            ("temperature", self.temperature),
            ("staleness_temperature", self.staleness_temperature),
        ] {
            check_positive(field, v)?;
        }
        check_rate("staleness_coef", self.staleness_coef, false)?;
        check_rate("alpha", self.alpha, true)?;
        check_rate("value_rate", self.value_rate, true)?;
        check_rate("value_prior", self.value_prior, false)?;
        Ok(())
    }
    /// Every scale of every level is a category.
    fn arms(&self) -> (&[HarnessLevel], bool) {
        (&self.harness_levels, true)
    }
}

impl PlrConfig {
    /// The score of an outcome against the category's running success `v`.
    pub fn score_of(&self, v: f32, success: bool) -> f32 {
        let x = if success { 1.0 } else { 0.0 };
        match self.score {
            PlrScore::ValueL1 => (x - v).abs(),
            PlrScore::PositiveValueLoss => (x - v).max(0.0),
        }
    }
}

/// One buffer level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Level {
    /// The replayable task.
    pub task: Task,
    /// Its score.
    pub score: f32,
    /// Replay clock at its last replay (staleness = clock - stamp; may be negative for a level
    /// that entered with staleness).
    pub stamp: i64,
    /// Times it was replayed.
    pub replays: u64,
}

/// A new level drawn and not yet reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    /// The task.
    pub task: Task,
    /// Draw number (1-based count of samples) at which it was drawn.
    pub drawn_at: u64,
}

/// The rule of [`PlrSampler`](crate::PlrSampler), and its saved state: the level buffer, the per-category values
/// and the new levels awaiting their outcome. Its arms are the categories (env x harness level
/// x scale) of the value estimates.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlrRule {
    /// The buffer, by slot.
    pub levels: Vec<Level>,
    /// Per-category success EMA `V`.
    pub values: Vec<f32>,
    /// Outcomes per category.
    pub value_n: Vec<u64>,
    /// New levels awaiting their outcome, oldest first (by draw number).
    pub pending: VecDeque<Pending>,
    /// The replay clock (replays drawn).
    pub clock: u64,
    /// Replays drawn.
    pub replays: u64,
    /// New levels drawn.
    pub new_levels: u64,
    /// New levels that entered the buffer.
    pub inserted: u64,
    /// New levels discarded.
    pub discarded: u64,
    /// What the state and the configuration determine, for fast draws (never saved).
    #[serde(skip)]
    pub(crate) index: PlrIndex,
}

/// The lookups [`PlrRule`] derives from its state and configuration ([`Rule::loaded`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct PlrIndex {
    /// Level slot of each buffer task.
    pub(crate) slot_of: HashMap<Task, usize>,
    /// Slots by score, highest first, ties by lower slot (the rank order).
    ranked: Vec<usize>,
    /// `rank_w[k]`: `1 / (k + 1)^(1/beta)`, the weight of the level ranked `k + 1`.
    rank_w: Vec<f64>,
    /// `rank_cum[k]`: sum of `rank_w[j]` for `j <= k`.
    rank_cum: Vec<f64>,
    /// The draw number of each pending new level.
    pending: HashMap<Task, u64>,
}

impl PlrRule {
    /// Replays drawn, new levels drawn, new levels that entered the buffer, new levels
    /// discarded (their score too low for a full buffer).
    pub fn counts(&self) -> (u64, u64, u64, u64) {
        (self.replays, self.new_levels, self.inserted, self.discarded)
    }

    /// Whether `task` is a replayed level (in the buffer, not a new level awaiting its
    /// outcome). Ask before reporting the outcome: the report files a new level into the
    /// buffer.
    pub fn is_replay(&self, task: &Task) -> bool {
        self.index.slot_of.contains_key(task) && !self.index.pending.contains_key(task)
    }

    /// Staleness of slot `i`.
    pub(crate) fn staleness(&self, i: usize) -> f64 {
        (self.clock as i64 - self.levels[i].stamp).max(0) as f64
    }

    /// Replay probability of every buffer slot (sums to 1 when the buffer is not empty).
    pub fn replay_probabilities(&self, cfg: &PlrConfig) -> Vec<f64> {
        let n = self.levels.len();
        if n == 0 {
            return Vec::new();
        }
        let c = cfg.staleness_coef as f64;
        let ps = self.score_probabilities(cfg);
        let pc = self.staleness_probabilities(cfg);
        (0..n).map(|i| (1.0 - c) * ps[i] + c * pc[i]).collect()
    }

    fn score_probabilities(&self, cfg: &PlrConfig) -> Vec<f64> {
        let n = self.levels.len();
        let inv = 1.0 / cfg.temperature as f64;
        let w: Vec<f64> = match cfg.score_transform {
            ScoreTransform::Rank => {
                let mut w = vec![0.0; n];
                for (k, &i) in self.index.ranked.iter().enumerate() {
                    w[i] = self.index.rank_w[k];
                }
                w
            }
            ScoreTransform::Power => {
                let eps = if cfg.staleness_coef > 0.0 { 0.0 } else { 1e-3 };
                self.levels
                    .iter()
                    .map(|l| (l.score as f64 + eps).powf(inv))
                    .collect()
            }
            ScoreTransform::Softmax => {
                let max = self
                    .levels
                    .iter()
                    .map(|l| l.score as f64)
                    .fold(f64::NEG_INFINITY, f64::max);
                self.levels
                    .iter()
                    .map(|l| ((l.score as f64 - max) * inv).exp())
                    .collect()
            }
        };
        normalise_or_uniform(w)
    }

    fn staleness_probabilities(&self, cfg: &PlrConfig) -> Vec<f64> {
        let inv = 1.0 / cfg.staleness_temperature as f64;
        let w = (0..self.levels.len())
            .map(|i| {
                let s = self.staleness(i);
                if inv == 1.0 { s } else { s.powf(inv) }
            })
            .collect();
        normalise_or_uniform(w)
    }

    /// Probability that the next draw is a replay.
    pub fn replay_rate(&self, cfg: &PlrConfig) -> f64 {
        if self.levels.is_empty() {
            return 0.0;
        }
        let fill = self.levels.len() as f64 / cfg.buffer_size as f64;
        if fill < cfg.rho as f64 {
            return 0.0;
        }
        let r = cfg.replay_prob as f64;
        match cfg.schedule {
            ReplaySchedule::Fixed => r,
            ReplaySchedule::Proportionate => fill.min(r),
        }
    }

    fn draw_replay_slot(&mut self, cfg: &PlrConfig, rng: &mut Rng) -> usize {
        let c = cfg.staleness_coef as f64;
        let stale = c > 0.0 && (c >= 1.0 || rng.next_f64() < c);
        if stale {
            let p = self.staleness_probabilities(cfg);
            return draw_index(rng, &p);
        }
        match cfg.score_transform {
            ScoreTransform::Rank => {
                let n = self.levels.len();
                let total = self.index.rank_cum[n - 1];
                let target = rng.next_f64() * total;
                let k = self.index.rank_cum[..n]
                    .partition_point(|&c| c <= target)
                    .min(n - 1);
                self.index.ranked[k]
            }
            _ => {
                let p = self.score_probabilities(cfg);
                draw_index(rng, &p)
            }
        }
    }

    /// Draw the next task: a replay (a buffer level, exactly) or a new level.
    fn draw_task(&mut self, cfg: &PlrConfig, draw: Draw<'_>) -> Task {
        let fill = self.levels.len() as f64 / cfg.buffer_size as f64;
        let replay = !self.levels.is_empty() && fill >= cfg.rho as f64 && {
            let u = draw.rng.next_f64();
            let r = cfg.replay_prob as f64;
            match cfg.schedule {
                ReplaySchedule::Fixed => u < r,
                ReplaySchedule::Proportionate => u < fill.min(r),
            }
        };
        if replay {
            let i = self.draw_replay_slot(cfg, draw.rng);
            self.clock = self.clock.saturating_add(1);
            self.levels[i].stamp = self.clock as i64;
            self.levels[i].replays = self.levels[i].replays.saturating_add(1);
            self.replays = self.replays.saturating_add(1);
            return self.levels[i].task.clone();
        }
        let (space, rng) = (draw.space, draw.rng);
        let e = rng.index(space.envs().len());
        let levels = space.levels();
        let harness = levels[rng.index(levels.len())];
        let r = space.envs()[e].scale;
        let scale = rng.range_inclusive(r.min, r.max);
        let task = Task {
            env: space.envs()[e].id.clone(),
            seed: rng.next_u64(),
            harness,
            scale,
        };
        self.new_levels = self.new_levels.saturating_add(1);
        // Bound the pending set: a new level whose outcome never comes back is forgotten
        // after `MAX_PENDING` younger ones.
        if self.index.pending.len() >= MAX_PENDING
            && let Some(oldest) = self.pending.pop_front()
        {
            self.index.pending.remove(&oldest.task);
        }
        // (A fresh 64-bit seed repeats a pending task practically never; if it does, the
        // task is pending once, from its latest draw.)
        if let Some(old) = self.index.pending.insert(task.clone(), draw.samples) {
            self.forget_pending(old);
        }
        // The newest draw: the list stays ordered by draw number.
        self.pending.push_back(Pending {
            task: task.clone(),
            drawn_at: draw.samples,
        });
        task
    }

    /// Drop the pending level drawn at `drawn_at` from the list (its index entry is gone).
    fn forget_pending(&mut self, drawn_at: u64) {
        if let Ok(k) = self.pending.binary_search_by_key(&drawn_at, |p| p.drawn_at) {
            self.pending.remove(k);
        }
    }

    /// Position of slot `i` in the rank order (by its current score).
    fn rank_position(&self, i: usize) -> usize {
        let s = self.levels[i].score;
        self.index.ranked.partition_point(|&j| {
            let t = self.levels[j].score;
            t > s || (t == s && j < i)
        })
    }

    fn unrank(&mut self, i: usize) {
        let k = self.rank_position(i);
        debug_assert_eq!(self.index.ranked.get(k), Some(&i));
        self.index.ranked.remove(k);
    }

    fn rerank(&mut self, i: usize) {
        let k = self.rank_position(i);
        self.index.ranked.insert(k, i);
    }

    /// The slot a new level may take: the next free one, else the least supported (or
    /// lowest scored) one, first slot on ties.
    fn candidate_slot(&self, cfg: &PlrConfig) -> usize {
        if self.levels.len() < cfg.buffer_size as usize {
            return self.levels.len();
        }
        let key: Vec<f64> = match cfg.buffer_priority {
            BufferPriority::ReplaySupport => self.replay_probabilities(cfg),
            BufferPriority::Score => self.levels.iter().map(|l| l.score as f64).collect(),
        };
        let mut best = 0;
        for (i, &k) in key.iter().enumerate() {
            if k < key[best] {
                best = i;
            }
        }
        best
    }

    /// Score an outcome, move its category's `V`, then file a new level into the buffer or
    /// update a replayed level's score (`samples`: draws so far).
    fn take(
        &mut self,
        cfg: &PlrConfig,
        samples: u64,
        at: Located,
        outcome: &EpisodeOutcome,
    ) -> bool {
        let Located::Arm(_, a) = at else {
            return false;
        };
        let score = cfg.score_of(self.values[a], outcome.success);
        let x = if outcome.success { 1.0 } else { 0.0 };
        self.values[a] += cfg.value_rate * (x - self.values[a]);
        self.value_n[a] = self.value_n[a].saturating_add(1);
        let task = &outcome.task;
        let pending = self.index.pending.remove(task);
        if let Some(drawn_at) = pending {
            self.forget_pending(drawn_at);
        }
        // A new level whose task the buffer already holds (a seed that repeated a buffered
        // task's, or a state edited so) is scored as that level's replay: the buffer never
        // holds one task twice, which its saved state's check requires.
        if let Some(&i) = self.index.slot_of.get(task) {
            let al = cfg.alpha;
            self.unrank(i);
            self.levels[i].score = (1.0 - al) * self.levels[i].score + al * score;
            self.rerank(i);
        } else if let Some(drawn_at) = pending {
            let slot = self.candidate_slot(cfg);
            let staleness = samples.saturating_sub(drawn_at) as i64;
            let level = Level {
                task: task.clone(),
                score,
                stamp: self.clock as i64 - staleness,
                replays: 0,
            };
            if slot == self.levels.len() {
                self.levels.push(level);
                self.index.slot_of.insert(task.clone(), slot);
                self.rerank(slot);
                self.inserted = self.inserted.saturating_add(1);
            } else if self.levels[slot].score <= score {
                self.unrank(slot);
                self.index.slot_of.remove(&self.levels[slot].task);
                self.levels[slot] = level;
                self.index.slot_of.insert(task.clone(), slot);
                self.rerank(slot);
                self.inserted = self.inserted.saturating_add(1);
            } else {
                self.discarded = self.discarded.saturating_add(1);
            }
        }
        true
    }

    fn check_state(&self, cfg: &PlrConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        let space = saved.space;
        let n = space.len();
        // Every draw is a replay or a new level, and the replay clock counts replays.
        let drawn = self.replays.checked_add(self.new_levels);
        if drawn != Some(saved.samples) || saved.samples > i64::MAX as u64 {
            return Err(InvalidValue::new(
                "samples",
                format!(
                    "body.replays + body.new_levels ({}), below 2^63",
                    drawn.map_or_else(|| "more than 2^64".into(), |d| d.to_string())
                ),
                saved.samples,
            ));
        }
        if self.clock != self.replays {
            return Err(InvalidValue::new(
                "body.clock",
                format!("body.replays ({}): the clock counts replays", self.replays),
                self.clock,
            ));
        }
        let filed = self
            .inserted
            .saturating_add(self.discarded)
            .saturating_add(self.pending.len() as u64);
        check_at_most(
            "body.inserted + body.discarded + pending",
            filed,
            self.new_levels,
            &format!("the new levels drawn ({})", self.new_levels),
        )?;
        check_at_most(
            "body.levels",
            self.levels.len() as u64,
            self.inserted,
            &format!("the levels inserted ({})", self.inserted),
        )?;
        let replayed = self
            .levels
            .iter()
            .map(|l| l.replays)
            .fold(0, u64::saturating_add);
        check_at_most(
            "body.levels[..].replays",
            replayed,
            self.replays,
            &format!("the replays drawn ({}) in all", self.replays),
        )?;
        if self.levels.len() > cfg.buffer_size as usize {
            return Err(InvalidValue::new(
                "body.levels",
                format!("at most buffer_size ({}) levels", cfg.buffer_size),
                self.levels.len(),
            ));
        }
        check_len("body.values", "one per category", n, self.values.len())?;
        check_len("body.value_n", "one per category", n, self.value_n.len())?;
        for (k, &v) in self.values.iter().enumerate() {
            check_unit(&format!("body.values[{k}]"), v)?;
        }
        let mut seen = HashSet::new();
        for (k, l) in self.levels.iter().enumerate() {
            let field = |f: &str| format!("body.levels[{k}].{f}");
            if !matches!(space.locate(&l.task), Located::Arm(..)) {
                return Err(InvalidValue::new(
                    field("task"),
                    "a task of this sampler (known environment, level and scale)",
                    format!(
                        "{} at {} scale {}",
                        l.task.env, l.task.harness, l.task.scale
                    ),
                ));
            }
            check_nonneg(&field("score"), l.score)?;
            // A level enters stamped at most `new_levels` draws before the clock (its
            // staleness since it was drawn) and is restamped with the clock when replayed.
            let oldest = -(self.new_levels.min(i64::MAX as u64) as i64);
            if l.stamp > self.clock as i64 || l.stamp < oldest {
                return Err(InvalidValue::new(
                    field("stamp"),
                    format!("{oldest}..={} (-new_levels..=clock)", self.clock),
                    l.stamp,
                ));
            }
            if !seen.insert(&l.task) {
                return Err(InvalidValue::new(
                    field("task"),
                    "a task no other level holds",
                    "a duplicate of another level",
                ));
            }
        }
        let mut tasks = HashSet::new();
        let mut draws = HashSet::new();
        for (k, p) in self.pending.iter().enumerate() {
            if !tasks.insert(&p.task) || !draws.insert(p.drawn_at) {
                return Err(InvalidValue::new(
                    format!("body.pending[{k}]"),
                    "a task and draw number no other pending level holds",
                    "a duplicate task or draw number",
                ));
            }
            if !matches!(space.locate(&p.task), Located::Arm(..)) {
                return Err(InvalidValue::new(
                    format!("body.pending[{k}].task"),
                    "a task of this sampler (known environment, level and scale)",
                    &p.task,
                ));
            }
            if p.drawn_at == 0 || p.drawn_at > saved.samples {
                return Err(InvalidValue::new(
                    format!("body.pending[{k}].drawn_at"),
                    format!("a draw number in 1..={}", saved.samples),
                    p.drawn_at,
                ));
            }
        }
        let prior = cfg.value_prior;
        if let Some(k) = (0..n).find(|&a| self.value_n[a] == 0 && self.values[a] != prior) {
            return Err(InvalidValue::new(
                format!("body.values[{k}]"),
                format!("the prior ({prior}): the category was never played"),
                self.values[k],
            ));
        }
        check_arm_sums(saved, "value_n", |a| self.value_n[a])?;
        if self.pending.len() > MAX_PENDING {
            return Err(InvalidValue::new(
                "body.pending",
                format!("at most {MAX_PENDING} entries"),
                self.pending.len(),
            ));
        }
        Ok(())
    }

    /// Rebuild the lookups from the state and `cfg`: slots by task, the rank order, the rank
    /// weights and the pending levels by task (their list put in draw order).
    fn reindex(&mut self, cfg: &PlrConfig) {
        let inv = 1.0 / cfg.temperature as f64;
        let rank_w: Vec<f64> = (1..=cfg.buffer_size as usize)
            .map(|k| (k as f64).powf(-inv))
            .collect();
        let mut acc = 0.0;
        let rank_cum = rank_w
            .iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        let slot_of = self
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.task.clone(), i))
            .collect();
        let mut ranked: Vec<usize> = (0..self.levels.len()).collect();
        ranked.sort_by(|&a, &b| {
            self.levels[b]
                .score
                .total_cmp(&self.levels[a].score)
                .then(a.cmp(&b))
        });
        self.pending.make_contiguous().sort_by_key(|p| p.drawn_at);
        let pending = self
            .pending
            .iter()
            .map(|p| (p.task.clone(), p.drawn_at))
            .collect();
        self.index = PlrIndex {
            slot_of,
            ranked,
            rank_w,
            rank_cum,
            pending,
        };
    }
}

fn normalise_or_uniform(mut w: Vec<f64>) -> Vec<f64> {
    let z: f64 = w.iter().sum();
    let n = w.len() as f64;
    if z > 0.0 && z.is_finite() {
        w.iter_mut().for_each(|x| *x /= z);
    } else {
        w.iter_mut().for_each(|x| *x = 1.0 / n);
    }
    w
}

impl Rule for PlrRule {
    const KIND: &'static str = "plr";
    type Config = PlrConfig;

    fn init(cfg: &PlrConfig, space: &ArmSpace) -> Self {
        let n = space.len();
        let mut rule = Self {
            levels: Vec::new(),
            values: vec![cfg.value_prior; n],
            value_n: vec![0; n],
            pending: VecDeque::new(),
            clock: 0,
            replays: 0,
            new_levels: 0,
            inserted: 0,
            discarded: 0,
            index: PlrIndex::default(),
        };
        rule.reindex(cfg);
        rule
    }

    /// The replay rate x each level's replay probability on its category, plus the
    /// new-level rate spread as new levels are drawn (environment uniform, then its
    /// categories evenly).
    fn distribution(&self, cfg: &PlrConfig, space: &ArmSpace) -> Vec<f64> {
        let n_envs = space.envs().len();
        let replay = self.replay_rate(cfg);
        let mut p = vec![0.0; space.len()];
        for e in 0..n_envs {
            let arms = space.arms_of(e);
            let k = arms.len() as f64;
            for a in arms {
                p[a] += (1.0 - replay) / n_envs as f64 / k;
            }
        }
        for (i, q) in self.replay_probabilities(cfg).into_iter().enumerate() {
            if let Located::Arm(_, a) = space.locate(&self.levels[i].task) {
                p[a] += replay * q;
            }
        }
        p
    }

    /// A replay (a buffer level, exactly) or a new level.
    fn pick(&mut self, cfg: &PlrConfig, draw: Draw<'_>) -> Pick {
        Pick::Task(self.draw_task(cfg, draw))
    }

    fn observe(&mut self, cfg: &PlrConfig, seen: Seen<'_>) -> bool {
        self.take(cfg, seen.clock.samples, seen.at, seen.outcome)
    }

    /// Score: mean score of the env's buffer levels (NaN if none). Success: the categories'
    /// `V`, for categories played.
    fn scores(&self, _: &PlrConfig, space: &ArmSpace, p: &[f64]) -> EnvScores {
        let n_envs = space.envs().len();
        let mut sum = vec![0.0; n_envs];
        let mut cnt = vec![0usize; n_envs];
        for l in &self.levels {
            if let Located::Arm(e, _) = space.locate(&l.task) {
                sum[e] += l.score as f64;
                cnt[e] += 1;
            }
        }
        let played = if_played(
            self.value_n
                .iter()
                .zip(&self.values)
                .map(|(&n, &v)| (n > 0, v)),
        );
        EnvScores {
            score: sum
                .iter()
                .zip(&cnt)
                .map(|(s, &c)| if c > 0 { s / c as f64 } else { f64::NAN })
                .collect(),
            success: space.env_mean(p, &played),
        }
    }

    fn check(&self, cfg: &PlrConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        self.check_state(cfg, saved)
    }

    fn loaded(&mut self, cfg: &PlrConfig) {
        self.reindex(cfg);
    }

    /// Kept categories keep `V`; buffer levels and pending new levels of kept environments
    /// stay; the replay clock and counts carry on.
    fn carry(&mut self, cfg: &PlrConfig, from: &Self, carry: &Carry<'_>) {
        let kept = |t: &Task| {
            carry
                .old
                .env_index(&t.env)
                .is_some_and(|j| carry.keeps_old(j))
        };
        let mut next = from.clone();
        next.levels.retain(|l| kept(&l.task));
        next.pending.retain(|p| kept(&p.task));
        next.values = carry.per_arm(&from.values, cfg.value_prior);
        next.value_n = carry.per_arm(&from.value_n, 0);
        next.reindex(cfg);
        *self = next;
    }

    /// False for new levels when `robust`: robust PLR trains on replays only.
    fn trains_on(&self, cfg: &PlrConfig, task: &Task) -> bool {
        !cfg.robust || self.is_replay(task)
    }
}

impl RuleSampler<PlrRule> {
    /// The buffer, by slot.
    pub fn levels(&self) -> &[Level] {
        &self.rule.levels
    }

    /// Replays drawn, new levels drawn, new levels that entered the buffer, new levels
    /// discarded (their score too low for a full buffer).
    pub fn counts(&self) -> (u64, u64, u64, u64) {
        self.rule.counts()
    }

    /// Whether `task` is a replayed level (in the buffer, not a new level awaiting its
    /// outcome). Ask before reporting the outcome: the report files a new level into the
    /// buffer.
    pub fn is_replay(&self, task: &Task) -> bool {
        self.rule.is_replay(task)
    }

    /// Replay probability of every buffer slot (sums to 1 when the buffer is not empty).
    pub fn replay_probabilities(&self) -> Vec<f64> {
        self.rule.replay_probabilities(&self.config)
    }

    /// Probability that the next draw is a replay.
    pub fn replay_rate(&self) -> f64 {
        self.rule.replay_rate(&self.config)
    }

    /// The score of an outcome against the category's running success `v`.
    pub fn score_of(&self, v: f32, success: bool) -> f32 {
        self.config.score_of(v, success)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CurriculumSampler;
    use crate::test_support::specs;
    use envdist_core::TaskSampler;

    fn play(task: &Task, success: bool) -> EpisodeOutcome {
        EpisodeOutcome {
            task: task.clone(),
            success,
            episode_return: success as u32 as f32,
            steps: 1,
        }
    }

    #[test]
    fn buffer_scores_staleness_and_replacement_follow_dcd() {
        // One env with one scale at H4: one category, V from 0.5 with rate 0.5. A buffer of
        // 2 levels, replays only once full (rho 1), then always (fixed, replay_prob 1).
        let cfg = PlrConfig {
            buffer_size: 2,
            rho: 1.0,
            replay_prob: 1.0,
            schedule: ReplaySchedule::Fixed,
            value_rate: 0.5,
            ..Default::default()
        };
        let mut s = PlrSampler::new(&specs(1, 3, 3), cfg, 9).unwrap();
        let t: Vec<Task> = (0..3).map(|_| s.sample_task()).collect();
        assert_eq!(s.counts(), (0, 3, 0, 0));
        assert!(t.iter().all(|t| !s.is_replay(t) && !s.trains_on(t)));
        // t1 wins: score |1 - 0.5| = 0.5, V -> 0.75; slot 0, staleness 3 - 1 = 2.
        s.record(&play(&t[0], true)).unwrap();
        // t2 wins: score |1 - 0.75| = 0.25, V -> 0.875; slot 1, staleness 3 - 2 = 1.
        s.record(&play(&t[1], true)).unwrap();
        assert_eq!((s.rule.staleness(0), s.rule.staleness(1)), (2.0, 1.0));
        // Full. Replay support: ranks [1, 2] -> P_S = [1, 2^-10] / (1 + 2^-10); staleness
        // [2, 1] -> P_C = [2/3, 1/3]; P = 0.7 P_S + 0.3 P_C.
        let ps1 = 2f64.powi(-10) / (1.0 + 2f64.powi(-10));
        let p = s.replay_probabilities();
        assert!((p[1] - (0.7 * ps1 + 0.1)).abs() < 1e-6, "{p:?}");
        // t3 fails: score |0 - 0.875| = 0.875 >= slot 1's 0.25 (the least supported): it
        // replaces t2, staleness 3 - 3 = 0. V -> 0.4375.
        s.record(&play(&t[2], false)).unwrap();
        assert_eq!(s.levels()[1].task, t[2]);
        assert!((s.rule.values[0] - 0.4375).abs() < 1e-6);
        assert!(s.is_replay(&t[0]) && s.is_replay(&t[2]) && !s.is_replay(&t[1]));
        // Scores [0.5, 0.875]: slot 1 ranks first. Staleness [2, 0] -> P_C = [1, 0].
        // P = [0.7 x 2^-10 / (1 + 2^-10) + 0.3, 0.7 / (1 + 2^-10)].
        let p = s.replay_probabilities();
        assert!((p[0] - (0.7 * ps1 + 0.3)).abs() < 1e-6, "{p:?}");
        assert!((p[1] - 0.7 * (1.0 - ps1)).abs() < 1e-6, "{p:?}");
        assert_eq!(s.counts(), (0, 3, 3, 0));
        // Full and rho reached: every draw replays; the drawn level's staleness resets.
        let r = s.sample_task();
        assert!(s.is_replay(&r) && s.trains_on(&r));
        let i = s.rule.index.slot_of[&r];
        assert_eq!(s.rule.staleness(i), 0.0);
        assert_eq!(s.rule.staleness(1 - i), if i == 0 { 1.0 } else { 3.0 });
        // A replay's score is replaced (alpha 1): r against V 0.4375.
        s.record(&play(&r, true)).unwrap();
        assert!((s.levels()[i].score - 0.5625).abs() < 1e-6);
    }

    #[test]
    fn a_full_buffer_discards_a_weaker_new_level() {
        let cfg = PlrConfig {
            buffer_size: 1,
            rho: 1.0,
            replay_prob: 0.0,
            buffer_priority: BufferPriority::Score,
            ..Default::default()
        };
        let mut s = PlrSampler::new(&specs(1, 3, 3), cfg, 1).unwrap();
        let (a, b) = (s.sample_task(), s.sample_task());
        s.record(&play(&a, true)).unwrap(); // score 0.5, V -> 0.55
        s.record(&play(&b, true)).unwrap(); // score 0.45 < 0.5: discarded
        assert_eq!(s.counts(), (0, 2, 1, 1));
        assert_eq!(s.levels()[0].task, a);
        assert!((s.snapshot()[0].probability - 1.0).abs() < 1e-6);
    }
}
