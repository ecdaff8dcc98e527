//! The one generic rival sampler: [`RuleSampler`] runs any [`Rule`] over an [`ArmSpace`]
//! and implements [`TaskSampler`] and [`CurriculumSampler`] once for all of them.

use std::fmt;

use envdist_core::{
    EnvSpec, EpisodeOutcome, HarnessLevel, InvalidValue, OutcomeError, Rng, SamplerStateError,
    Task, TaskSampler, check_issued,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{
    ArmSpace, EnvRange, EnvTotals, Located, RIVAL_STATE_SCHEMA_VERSION, Retired, check_config,
    check_counters, check_len, check_schema, config_hash, draw_index, issued_range, parse_state,
    retire,
};
use crate::error::CurriculumError;
use crate::{CurriculumSampler, EnvSnapshot, TraceEvent};

/// What makes one rival different from another: its state, how it draws, how an outcome
/// moves it, how a saved state is checked, and what it reports, each under the rule's
/// configuration (kept by the sampler and passed in). Everything else (the arms, the random
/// stream, counters, the state envelope, snapshots, trace lines, retargeting) is
/// [`RuleSampler`]'s.
///
/// A rule is its state and nothing else: what it serialises to is the saved state's `body`,
/// and a body read back is a rule, checked ([`Rule::check`]) before it is used.
///
/// Determinism is the sampler's contract, so a rule draws randomness only in
/// [`Rule::pick`] and never in [`Rule::observe`].
pub trait Rule: Clone + fmt::Debug + Send + Serialize + DeserializeOwned {
    /// Name in configs and saved states.
    const KIND: &'static str;
    /// The rule's parameters.
    type Config: RuleConfig;

    /// The fresh state over `space`.
    fn init(config: &Self::Config, space: &ArmSpace) -> Self;
    /// The probability of each arm holding the next task (sums to 1): what snapshots show,
    /// and what the default [`Rule::pick`] draws from.
    fn distribution(&self, config: &Self::Config, space: &ArmSpace) -> Vec<f64>;
    /// Choose the next task: an arm (a fresh task of it is drawn) or an exact task (a
    /// replay). Default: an arm from [`Rule::distribution`], kept until
    /// [`Rule::observe`] says it changed.
    fn pick(&mut self, config: &Self::Config, draw: Draw<'_>) -> Pick {
        Pick::Arm(draw.weighted(|space| self.distribution(config, space)))
    }
    /// Take an outcome in (the sampler's counters already count it). Returns whether the
    /// distribution may have changed.
    fn observe(&mut self, config: &Self::Config, seen: Seen<'_>) -> bool;
    /// Per-environment score and success estimate for snapshots, given the distribution.
    fn scores(&self, config: &Self::Config, space: &ArmSpace, arm_probs: &[f64]) -> EnvScores;
    /// Check a state just read against the configuration, the arms and the saved envelope's
    /// counters (`saved`): its lengths, its estimates' ranges, and that its counts agree with
    /// each other and with the envelope's; the error names the field.
    fn check(&self, config: &Self::Config, saved: &Saved<'_>) -> Result<(), InvalidValue>;
    /// Rebuild what the state derives and does not save (indexes), once it is checked.
    /// Default: nothing to rebuild.
    fn loaded(&mut self, _config: &Self::Config) {}
    /// Take over the state `from` had for the arms and environments that `carry` keeps
    /// (`self` is fresh over the new arms).
    fn carry(&mut self, config: &Self::Config, from: &Self, carry: &Carry<'_>);
    /// Whether a trainer should learn from `task`'s episode ([`TaskSampler::trains_on`]).
    fn trains_on(&self, _config: &Self::Config, _task: &Task) -> bool {
        true
    }
}

/// A rule's parameters, checked once, and the arms they ask for.
pub trait RuleConfig: Clone + fmt::Debug + PartialEq + Send + Serialize + DeserializeOwned {
    /// Check every field once; the error names the first bad field and what it accepts.
    fn validate(&self) -> Result<(), CurriculumError>;
    /// The harness levels of the arms (validated: non-empty, strictly increasing), and
    /// whether each scale is an arm of its own.
    fn arms(&self) -> (&[HarnessLevel], bool);
}

/// An outcome as [`Rule::observe`] takes it in.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// The arms.
    pub space: &'a ArmSpace,
    /// The sampler's counters, this outcome counted.
    pub clock: Clock,
    /// Where its task falls in the arms.
    pub at: Located,
    /// The outcome.
    pub outcome: &'a EpisodeOutcome,
}

/// What [`Rule::pick`] chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// A fresh task of this arm.
    Arm(usize),
    /// Exactly this task.
    Task(Task),
}

/// What [`Rule::pick`] draws with.
pub struct Draw<'a> {
    /// The arms.
    pub space: &'a ArmSpace,
    /// The sampler's random stream.
    pub rng: &'a mut Rng,
    /// This draw's number (1-based count of samples, this one included).
    pub samples: u64,
    cache: &'a mut Option<Vec<f64>>,
}

impl Draw<'_> {
    /// An arm drawn from `distribution`, computed only when the last one may be stale.
    pub fn weighted(self, distribution: impl FnOnce(&ArmSpace) -> Vec<f64>) -> usize {
        let p = self.cache.get_or_insert_with(|| distribution(self.space));
        draw_index(self.rng, p)
    }
}

/// The sampler's counters after an outcome was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Tasks drawn so far.
    pub samples: u64,
    /// Outcomes of known environments so far (this one included when known).
    pub updates: u64,
}

/// The counters of a saved envelope, already checked against each other, and the arms, that a
/// rule's saved state must agree with ([`Rule::check`]).
#[derive(Debug, Clone, Copy)]
pub struct Saved<'a> {
    /// The arms.
    pub space: &'a ArmSpace,
    /// Tasks drawn.
    pub samples: u64,
    /// Outcomes of known environments.
    pub updates: u64,
    /// Outcomes per environment.
    pub totals: &'a [EnvTotals],
    /// Whether a retarget ever dropped an environment (its arms' counts went with it, so
    /// sums over the arms may fall short of the counters that carried on).
    pub retargeted: bool,
}

impl Saved<'_> {
    /// A rule's saved per-arm list (`body.arms`) holds one entry per arm.
    pub fn check_arms(&self, entries: usize) -> Result<(), InvalidValue> {
        check_len("body.arms", "one per arm", self.space.len(), entries)
    }
}

/// Per-environment statistics of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvScores {
    /// The rule's priority statistic per environment.
    pub score: Vec<f64>,
    /// Its success estimate per environment (NaN when none).
    pub success: Vec<f64>,
}

impl EnvScores {
    /// Per-environment means, under `arm_probs`, of a per-arm score and a per-arm success
    /// estimate (NaN where an arm has none; see [`ArmSpace`]'s weighting).
    pub fn of_arms(space: &ArmSpace, arm_probs: &[f64], score: &[f64], success: &[f64]) -> Self {
        Self {
            score: space.env_mean(arm_probs, score),
            success: space.env_mean(arm_probs, success),
        }
    }
}

/// Per arm, its estimate where it was played and NaN elsewhere: `(played, estimate)` pairs.
pub(crate) fn if_played(arms: impl Iterator<Item = (bool, f32)>) -> Vec<f64> {
    arms.map(|(played, v)| if played { v as f64 } else { f64::NAN })
        .collect()
}

/// Which environments and arms of an old arm space a new one keeps (same id, same scale
/// range; the harness levels and `per_scale` are the config's, so the arms line up).
pub struct Carry<'a> {
    /// The arms before.
    pub old: &'a ArmSpace,
    /// The arms after.
    pub new: &'a ArmSpace,
    /// Per new environment, its index in the old space if kept.
    env: Vec<Option<usize>>,
}

impl<'a> Carry<'a> {
    fn new(old: &'a ArmSpace, new: &'a ArmSpace) -> Self {
        let env = new
            .envs()
            .iter()
            .map(|e| old.env_index(&e.id).filter(|&j| old.envs()[j] == *e))
            .collect();
        Self { old, new, env }
    }

    /// Kept environments as (new index, old index).
    pub fn envs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.env
            .iter()
            .enumerate()
            .filter_map(|(i, j)| j.map(|j| (i, j)))
    }

    /// Kept arms as (new index, old index).
    pub fn arms(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.envs()
            .flat_map(|(i, j)| self.new.arms_of(i).zip(self.old.arms_of(j)))
    }

    /// Whether the old environment `j` is kept.
    pub fn keeps_old(&self, j: usize) -> bool {
        self.env.contains(&Some(j))
    }

    /// `old` (one value per old environment) over the new environments: kept environments
    /// keep their value, the others take `fresh`.
    pub fn per_env<T: Clone>(&self, old: &[T], fresh: T) -> Vec<T> {
        spread(self.new.envs().len(), self.envs(), old, fresh)
    }

    /// `old` (one value per old arm) over the new arms: kept arms keep their value, the
    /// others take `fresh`.
    pub fn per_arm<T: Clone>(&self, old: &[T], fresh: T) -> Vec<T> {
        spread(self.new.len(), self.arms(), old, fresh)
    }
}

/// `n` values, `fresh` but where `(new, old)` pairs take `old[old]`.
fn spread<T: Clone>(
    n: usize,
    pairs: impl Iterator<Item = (usize, usize)>,
    old: &[T],
    fresh: T,
) -> Vec<T> {
    let mut v = vec![fresh; n];
    for (i, j) in pairs {
        v[i] = old[j].clone();
    }
    v
}

/// What every rival keeps besides its rule's state: the arms, the random stream, counters.
#[derive(Debug, Clone)]
struct Core {
    space: ArmSpace,
    config_hash: String,
    rng: Rng,
    samples: u64,
    updates: u64,
    unknown: u64,
    totals: Vec<EnvTotals>,
    /// Environments a retarget dropped, whose outcomes may still come in.
    retired: Vec<Retired>,
}

#[derive(Serialize)]
struct EnvelopeOut<'a, C, B> {
    schema_version: u32,
    sampler: &'a str,
    config_hash: &'a str,
    config: &'a C,
    envs: &'a [EnvRange],
    rng: &'a Rng,
    samples: u64,
    updates: u64,
    unknown: u64,
    totals: &'a [EnvTotals],
    #[serde(skip_serializing_if = "<[Retired]>::is_empty")]
    retired: &'a [Retired],
    body: &'a B,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvelopeIn<C, B> {
    #[allow(dead_code)]
    schema_version: u32,
    #[allow(dead_code)]
    sampler: String,
    config_hash: String,
    config: C,
    envs: Vec<EnvRange>,
    rng: Rng,
    samples: u64,
    updates: u64,
    unknown: u64,
    totals: Vec<EnvTotals>,
    #[serde(default)]
    retired: Vec<Retired>,
    body: B,
}

impl Core {
    /// [`TaskSampler::check_outcome`]: an environment of the arms (or a retired one), a level
    /// of the arms, a scale in the range.
    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        let task = &outcome.task;
        let current = self
            .space
            .env_index(&task.env)
            .map(|e| self.space.envs()[e].scale);
        check_issued(
            outcome,
            issued_range(current, &self.retired, task),
            self.space.envs().iter().map(|e| &e.id),
            self.space.levels(),
        )
    }

    /// Count `outcome` in the totals and say where it falls.
    fn record(&mut self, outcome: &EpisodeOutcome) -> Located {
        let at = self.space.locate(&outcome.task);
        match at {
            Located::Unknown => self.unknown = self.unknown.saturating_add(1),
            Located::OffArm(e) | Located::Arm(e, _) => {
                self.updates = self.updates.saturating_add(1);
                self.totals[e].episodes = self.totals[e].episodes.saturating_add(1);
                self.totals[e].successes = self.totals[e]
                    .successes
                    .saturating_add(outcome.success as u64);
            }
        }
        at
    }

    /// Check a state envelope against this sampler (kind, schema, config, environments).
    /// Nothing changes here.
    fn decode<C, B>(
        &self,
        kind: &str,
        config: &C,
        v: &serde_json::Value,
    ) -> Result<EnvelopeIn<C, B>, InvalidValue>
    where
        C: Serialize + DeserializeOwned,
        B: DeserializeOwned,
    {
        check_schema(v, RIVAL_STATE_SCHEMA_VERSION)?;
        let found = v.get("sampler").and_then(|x| x.as_str());
        if found != Some(kind) {
            return Err(InvalidValue::new(
                "sampler",
                format!("{kind:?}"),
                format!(
                    "{}: the state belongs to another sampler",
                    found.map_or_else(|| "nothing".into(), |x| format!("{x:?}"))
                ),
            ));
        }
        let s: EnvelopeIn<C, B> = parse_state(v, &format!("a saved {kind} state"))?;
        check_config(&s.config_hash, &s.config, &self.config_hash, config)?;
        let mine = self.space.envs();
        if s.envs.len() != mine.len() {
            return Err(InvalidValue::new(
                "envs",
                format!("{} environments (this sampler's)", mine.len()),
                format!("{} environments", s.envs.len()),
            ));
        }
        let show = |e: &EnvRange| format!("{} (scale {}..={})", e.id, e.scale.min, e.scale.max);
        if let Some((k, (a, b))) = s
            .envs
            .iter()
            .zip(mine)
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            return Err(InvalidValue::new(format!("envs[{k}]"), show(b), show(a)));
        }
        if s.totals.len() != mine.len() {
            return Err(InvalidValue::new(
                "totals",
                format!("{} entries (one per environment)", mine.len()),
                s.totals.len(),
            ));
        }
        if let Some((k, t)) = s
            .totals
            .iter()
            .enumerate()
            .find(|(_, t)| t.successes > t.episodes)
        {
            return Err(InvalidValue::new(
                format!("totals[{k}].successes"),
                format!("at most episodes ({})", t.episodes),
                t.successes,
            ));
        }
        check_counters(
            s.updates,
            s.unknown,
            s.totals.iter().map(|t| t.episodes),
            &s.retired,
        )?;
        Ok(s)
    }
}

/// A rival sampler: the rule `R` over the arms of an environment set, deterministic from a
/// seed and resumable bit-identically (see the [module docs](super)).
#[derive(Debug, Clone)]
pub struct RuleSampler<R: Rule> {
    pub(crate) config: R::Config,
    pub(crate) rule: R,
    core: Core,
    /// The distribution of the default [`Rule::pick`] (derived, never saved).
    cache: Option<Vec<f64>>,
}

impl<R: Rule> RuleSampler<R> {
    /// Name in configs and saved states.
    pub const KIND: &'static str = R::KIND;

    /// A sampler over `envs`, seeded. Errors name a bad config field or environment list.
    pub fn new(envs: &[EnvSpec], config: R::Config, seed: u64) -> Result<Self, CurriculumError> {
        config.validate()?;
        let (levels, per_scale) = config.arms();
        let space = ArmSpace::new(envs, levels, per_scale)?;
        let n = space.envs().len();
        let core = Core {
            config_hash: config_hash(&config),
            rng: Rng::seed_from_u64(seed),
            samples: 0,
            updates: 0,
            unknown: 0,
            totals: vec![EnvTotals::default(); n],
            retired: Vec::new(),
            space,
        };
        Ok(Self {
            rule: R::init(&config, &core.space),
            config,
            core,
            cache: None,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &R::Config {
        &self.config
    }

    /// The rule's state.
    pub fn rule(&self) -> &R {
        &self.rule
    }

    /// The arms.
    pub fn arm_space(&self) -> &ArmSpace {
        &self.core.space
    }

    /// Outcome counts per environment, in sampler order.
    pub fn totals(&self) -> &[EnvTotals] {
        &self.core.totals
    }

    /// The probability of each arm holding the next task (sums to 1).
    pub fn arm_probabilities(&self) -> Vec<f64> {
        self.rule.distribution(&self.config, &self.core.space)
    }

    /// Draw the next task.
    pub fn sample_task(&mut self) -> Task {
        self.core.samples = self.core.samples.saturating_add(1);
        let draw = Draw {
            space: &self.core.space,
            rng: &mut self.core.rng,
            samples: self.core.samples,
            cache: &mut self.cache,
        };
        match self.rule.pick(&self.config, draw) {
            Pick::Arm(a) => self.core.space.draw(a, &mut self.core.rng),
            Pick::Task(t) => t,
        }
    }

    /// Environments a retarget dropped whose outcomes are still accepted.
    pub fn retired(&self) -> &[Retired] {
        &self.core.retired
    }

    /// Report an outcome; returns whether it changed the distribution of the next tasks
    /// (documented per rule: for the ladder, whether the top rose). An outcome this sampler
    /// could not have been told is refused ([`TaskSampler::check_outcome`]) and changes
    /// nothing.
    pub fn record(&mut self, outcome: &EpisodeOutcome) -> Result<bool, OutcomeError> {
        self.core.check_outcome(outcome)?;
        let at = self.core.record(outcome);
        let seen = Seen {
            space: &self.core.space,
            clock: Clock {
                samples: self.core.samples,
                updates: self.core.updates,
            },
            at,
            outcome,
        };
        let changed = self.rule.observe(&self.config, seen);
        if changed {
            self.cache = None;
        }
        Ok(changed)
    }
}

impl<R: Rule> TaskSampler for RuleSampler<R> {
    fn sample(&mut self) -> Task {
        self.sample_task()
    }

    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.core.check_outcome(outcome)
    }

    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.record(outcome).map(drop)
    }

    fn state(&self) -> serde_json::Value {
        let c = &self.core;
        serde_json::to_value(EnvelopeOut {
            schema_version: RIVAL_STATE_SCHEMA_VERSION,
            sampler: R::KIND,
            config_hash: &c.config_hash,
            config: &self.config,
            envs: c.space.envs(),
            rng: &c.rng,
            samples: c.samples,
            updates: c.updates,
            unknown: c.unknown,
            totals: &c.totals,
            retired: &c.retired,
            body: &self.rule,
        })
        .unwrap_or(serde_json::Value::Null)
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        let s: EnvelopeIn<R::Config, R> = self.core.decode(R::KIND, &self.config, state)?;
        let saved = Saved {
            space: &self.core.space,
            samples: s.samples,
            updates: s.updates,
            totals: &s.totals,
            retargeted: !s.retired.is_empty(),
        };
        s.body.check(&self.config, &saved)?;
        let mut rule = s.body;
        rule.loaded(&self.config);
        self.rule = rule;
        self.core.rng = s.rng;
        self.core.samples = s.samples;
        self.core.updates = s.updates;
        self.core.unknown = s.unknown;
        self.core.totals = s.totals;
        self.core.retired = s.retired;
        self.cache = None;
        Ok(())
    }

    fn trains_on(&self, task: &Task) -> bool {
        self.rule.trains_on(&self.config, task)
    }
}

impl<R: Rule> CurriculumSampler for RuleSampler<R> {
    fn kind(&self) -> &'static str {
        R::KIND
    }

    fn snapshot(&self) -> Vec<EnvSnapshot> {
        let space = &self.core.space;
        let p = self.rule.distribution(&self.config, space);
        let scores = self.rule.scores(&self.config, space, &p);
        space.snapshot(&p, &scores, &self.core.totals)
    }

    fn samples(&self) -> u64 {
        self.core.samples
    }

    fn updates(&self) -> u64 {
        self.core.updates
    }

    /// `level`: the most probable harness level of the environment's next task (ties: the
    /// weaker); `window_lo..=window_hi`: the smallest and largest scale that task can have.
    fn trace_event(&self, step: u64, outcome: &EpisodeOutcome) -> Option<TraceEvent> {
        let space = &self.core.space;
        let e = space.env_index(&outcome.task.env)?;
        let reach = space.reach(e, &self.rule.distribution(&self.config, space));
        Some(TraceEvent::new(
            step,
            outcome,
            reach.harness,
            (reach.scale_lo, reach.scale_hi),
        ))
    }

    /// Kept environments keep their arms' state and totals; the rule's own counters (groups,
    /// intervals, batches, the replay buffer's levels of kept environments) carry on.
    fn retarget(&mut self, envs: &[EnvSpec]) -> Result<(), CurriculumError> {
        let (levels, per_scale) = self.config.arms();
        let space = ArmSpace::new(envs, levels, per_scale)?;
        let carry = Carry::new(&self.core.space, &space);
        let mut rule = R::init(&self.config, &space);
        rule.carry(&self.config, &self.rule, &carry);
        let totals = carry.per_env(&self.core.totals, EnvTotals::default());
        for (j, e) in self.core.space.envs().iter().enumerate() {
            if !carry.keeps_old(j) {
                retire(
                    &mut self.core.retired,
                    &e.id,
                    e.scale,
                    self.core.totals[j].episodes,
                );
            }
        }
        self.rule = rule;
        self.core.totals = totals;
        self.core.space = space;
        self.cache = None;
        Ok(())
    }
}
