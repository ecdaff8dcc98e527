//! One world of a cell: the selections the study makes (AES and its ablations through
//! `envdist-selection`, with the study's settings), the two references (the oracle subset
//! and the lookahead pick), and a training run per arm through `envdist-curriculum`'s
//! samplers (the study's uniform H4 sampler, HDC as the study sizes it, the rivals at their
//! defaults), every arm from the same base and with the same training seed.

use envdist_core::{EnvId, GradientSet, ProfileSet, Rng};
use envdist_curriculum::{HdcConfig, Mode, SamplerConfig};
use envdist_selection::{
    Baseline, Problem, Relaxation, SelectConfig, Selection, TieBreak, baseline, select,
};
use envdist_world::{
    Learner, Probe, ProbeLevels, World, lookahead_pick, measured_transfer, oracle,
};
use serde::{Deserialize, Serialize};

use super::WorldMapConfig;
use super::observed::Observed;
use crate::error::{Context, Result};
use crate::model::{Arm, ClaimId, EnvSource, Ordering};
use crate::presets::{study_hdc, study_selection};
use crate::stages::arms::uniform_h4;
use crate::stages::selections::{problem, study_aes_config};

/// Which environments an arm trains on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Every pool environment.
    All,
    /// `k` drawn at random (a new draw per world).
    Random,
    /// The study's AES.
    Aes,
    /// AES without its conflict term.
    AesNoConflict,
    /// Greedy coverage alone.
    CoverageOnly,
    /// The best `k`-subset under the world's true dynamics.
    Oracle,
    /// The `k` with the largest measured lookahead transfer to the pool (TAG-style).
    Lookahead,
}

/// How an arm orders its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// No curriculum: H4, scale uniform (the study's arms without one).
    Uniform,
    /// HDC in a mode, its gates scaled by the map's `hdc_stage_scale`.
    Hdc(Mode),
    /// Full HDC with the study's own gates (30 episodes at least, 120 at most per stage),
    /// whatever the scale.
    HdcStudyGates,
    /// A rival sampler at its defaults.
    Rival(&'static str),
}

/// An arm of the map: a pick and an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldArm {
    /// Its name (the study's arm names where the study has the arm).
    pub name: String,
    /// What it trains on.
    pub pick: Pick,
    /// In what order.
    pub order: Order,
}

impl WorldArm {
    fn new(name: &str, pick: Pick, order: Order) -> Self {
        Self {
            name: name.into(),
            pick,
            order,
        }
    }

    /// The arms every cell runs: the study's arms the record's claims compare (by their cards,
    /// [`RECORD_CLAIMS`]), coverage alone, and the two references.
    pub fn main() -> Vec<WorldArm> {
        let mut out: Vec<WorldArm> = Vec::new();
        for arm in record_arms() {
            if let Some(a) = Self::of_card(arm) {
                out.push(a);
            }
        }
        out.push(Self::new(
            EnvSource::CoverageOnly.name(),
            Pick::CoverageOnly,
            Order::Uniform,
        ));
        out.push(Self::new(ORACLE, Pick::Oracle, Order::Uniform));
        out.push(Self::new(LOOKAHEAD, Pick::Lookahead, Order::Uniform));
        out
    }

    /// The study's arm `arm` as the map runs it: its card's environments and ordering (`None`
    /// for what the world cannot run: measured-transfer conflict, the control pool, online
    /// re-selection, other hints).
    fn of_card(arm: Arm) -> Option<WorldArm> {
        let r = arm.recipe()?;
        if r.online || r.other_hints {
            return None;
        }
        let pick = match r.envs {
            EnvSource::Pool => Pick::All,
            EnvSource::RandomK => Pick::Random,
            EnvSource::Aes => Pick::Aes,
            EnvSource::AesNoConflict => Pick::AesNoConflict,
            EnvSource::CoverageOnly => Pick::CoverageOnly,
            _ => return None,
        };
        let order = match r.ordering {
            Ordering::UniformH4 => Order::Uniform,
            Ordering::Hdc(mode) => Order::Hdc(mode),
            Ordering::Rival(kind) => Order::Rival(kind),
        };
        Some(Self::new(arm.name(), pick, order))
    }

    /// The arms a plane with rivals adds on the random selection (so they differ from
    /// random-k by their ordering alone): HDC with the study's own gates, HDC's two halves,
    /// and every rival sampler.
    pub fn rivals() -> Vec<WorldArm> {
        let random = names().random_k;
        let mut out = vec![
            Self::new(&study_gates(), Pick::Random, Order::HdcStudyGates),
            Self::new(
                &format!("{random}+harness-only"),
                Pick::Random,
                Order::Hdc(Mode::HarnessOnly),
            ),
            Self::new(
                &format!("{random}+scale-only"),
                Pick::Random,
                Order::Hdc(Mode::ScaleOnly),
            ),
        ];
        for kind in SamplerConfig::KINDS.iter().filter(|k| **k != "hdc") {
            out.push(WorldArm {
                name: format!("{random}+{}", kind.replace('_', "-")),
                pick: Pick::Random,
                order: Order::Rival(kind),
            });
        }
        out
    }

    fn sampler(&self, hdc_stage_scale: f32) -> Result<SamplerConfig> {
        Ok(match self.order {
            Order::Uniform => uniform_h4(false),
            Order::Hdc(mode) => SamplerConfig::Hdc(HdcConfig {
                mode,
                ..world_hdc(hdc_stage_scale)
            }),
            Order::HdcStudyGates => SamplerConfig::Hdc(study_hdc()),
            Order::Rival(kind) => SamplerConfig::default_for(kind)?,
        })
    }
}

/// The study's HDC with its stage gates (`min_episodes`, `max_stage_episodes`) scaled by
/// `scale` (at least one episode each): the same staircase, sized to another budget per
/// environment.
pub fn world_hdc(scale: f32) -> HdcConfig {
    let study = study_hdc();
    let scaled = |n: u32| ((n as f32 * scale).round() as u32).max(1);
    HdcConfig {
        min_episodes: scaled(study.min_episodes),
        max_stage_episodes: scaled(study.max_stage_episodes),
        ..study
    }
}

/// The record's claims the map puts to the world: every study arm they compare runs on it
/// (the base aside), by its card, under the card's name.
pub const RECORD_CLAIMS: [ClaimId; 8] = [
    ClaimId::AesOverRandomK,
    ClaimId::AesOverAllPool,
    ClaimId::ConflictMatters,
    ClaimId::HdcHelpsAes,
    ClaimId::HdcHelpsRandomK,
    ClaimId::AesHdcOverRandomKHdc,
    ClaimId::RandomKOverBase,
    ClaimId::AllPoolOverBase,
];

/// The study arms of [`RECORD_CLAIMS`], in order of first mention, the base left out.
pub fn record_arms() -> Vec<Arm> {
    let mut out: Vec<Arm> = Vec::new();
    for (a, b) in RECORD_CLAIMS.iter().filter_map(|c| c.statement().1) {
        for arm in [a, b] {
            if !arm.is_base() && !out.contains(&arm) {
                out.push(arm);
            }
        }
    }
    out
}

/// The study arms the map's own code compares, read off the cards through the claims that
/// compare them (the cards alone spell an arm's name).
#[derive(Debug, Clone, Copy)]
pub struct Names {
    /// The base.
    pub base: &'static str,
    /// Every environment, no curriculum.
    pub all_pool: &'static str,
    /// A random selection, no curriculum.
    pub random_k: &'static str,
    /// AES, no curriculum.
    pub aes: &'static str,
    /// AES without its conflict term.
    pub no_conflict: &'static str,
    /// AES with HDC.
    pub aes_hdc: &'static str,
    /// A random selection with HDC.
    pub random_k_hdc: &'static str,
}

/// [`Names`].
pub fn names() -> Names {
    let pair = |c: ClaimId| {
        c.statement()
            .1
            .map_or(("", ""), |(a, b)| (a.name(), b.name()))
    };
    let (aes, random_k) = pair(ClaimId::AesOverRandomK);
    Names {
        base: Arm::base().name(),
        all_pool: pair(ClaimId::AesOverAllPool).1,
        random_k,
        aes,
        no_conflict: pair(ClaimId::ConflictMatters).1,
        aes_hdc: pair(ClaimId::HdcHelpsAes).0,
        random_k_hdc: pair(ClaimId::HdcHelpsRandomK).0,
    }
}

/// The oracle subset.
pub const ORACLE: &str = "oracle";
/// The lookahead pick.
pub const LOOKAHEAD: &str = "lookahead";

/// A random selection with HDC at the study's own gates.
pub fn study_gates() -> String {
    format!("{}-study-gates", names().random_k_hdc)
}

/// An arm's gain over the base by where it trained (points; `None` where a part is empty),
/// as the record splits its arms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GainSplit {
    /// (a) On the environments it trained on.
    pub trained: Option<f32>,
    /// (b) On untrained environments of the families it trained on.
    pub same_family: Option<f32>,
    /// (c) On environments of families it did not train on.
    pub other_families: Option<f32>,
}

/// The arms whose gains are split by where they trained (as the record splits them).
pub fn split_arms() -> [&'static str; 3] {
    let n = names();
    [n.all_pool, n.random_k, n.aes]
}

pub(super) fn split(world: &World, base: &[f32], after: &[f32], envs: &[usize]) -> GainSplit {
    let families: Vec<usize> = envs.iter().map(|&e| world.envs()[e].family).collect();
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for e in 0..world.len() {
        let gain = 100.0 * (after[e] - base[e]);
        if envs.contains(&e) {
            a.push(gain);
        } else if families.contains(&world.envs()[e].family) {
            b.push(gain);
        } else {
            c.push(gain);
        }
    }
    let mean = |v: &[f32]| (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32);
    GainSplit {
        trained: mean(&a),
        same_family: mean(&b),
        other_families: mean(&c),
    }
}

/// Every selection of one world (pool indices, ascending).
pub(super) struct Picks {
    /// The selectors' picks the oracle starts from, in the order it tries them.
    candidates: [(Pick, Vec<usize>); 5],
    /// The oracle's pick.
    oracle: Vec<usize>,
    /// Whether the oracle enumerated every subset.
    pub oracle_exact: bool,
    /// The whole pool.
    all: Vec<usize>,
}

fn indices(world: &World, ids: &[EnvId]) -> Result<Vec<usize>> {
    let mut out = ids
        .iter()
        .map(|id| {
            world
                .index_of(id)
                .with_context(|| format!("a selection picked {id}, not in the world"))
        })
        .collect::<Result<Vec<_>>>()?;
    out.sort_unstable();
    Ok(out)
}

/// The study's AES and its two ablations on this world's profiles and gradients, with the
/// selections stage's settings: full coverage and the zero-gradient exclusion, each given
/// up only where infeasible (the ablations keep whatever AES could keep).
pub(super) fn aes_selections(
    world: &World,
    profiles: &ProfileSet,
    grads: &GradientSet,
    k: usize,
    seed: u64,
) -> Result<[Selection; 3]> {
    let problem: Problem = problem(profiles, grads, &world.ids())?;
    let sc = study_aes_config(&study_selection(k, seed), world.len(), false);
    let aes = select(&problem, &sc)?;
    let (coverage, zero) = match &aes.relaxation {
        None => (sc.require_full_coverage, sc.exclude_zero_gradient),
        Some(Relaxation::ZeroGradientKept { .. }) => (sc.require_full_coverage, false),
        Some(Relaxation::FullCoverage { .. }) => (false, sc.exclude_zero_gradient),
        Some(Relaxation::Both { .. }) => (false, false),
    };
    let shared = SelectConfig {
        relax: false,
        require_full_coverage: coverage,
        exclude_zero_gradient: zero,
        ..sc
    };
    let no_conflict = baseline(&problem, &shared, Baseline::NoConflict)?;
    let cov = baseline(&problem, &shared, Baseline::CoverageOnly)?;
    Ok([aes, no_conflict, cov])
}

impl Picks {
    pub(super) fn make(cfg: &WorldMapConfig, observed: &Observed) -> Result<Self> {
        let (world, base, seed) = (&observed.world, &observed.base, observed.seed);
        let (profiles, grads) = (&observed.profiles, &observed.grads);
        let k = cfg.k;
        let [aes, no_conflict, coverage] = aes_selections(world, profiles, grads, k, seed)?;
        let plain = SelectConfig {
            certify: false,
            tie_break: TieBreak::Seeded(seed),
            ..SelectConfig::aes(k)
        };
        let problem = problem(profiles, grads, &world.ids())?;
        let random = baseline(
            &problem,
            &plain,
            Baseline::Random {
                seed: seed ^ 0x52_4e44,
            },
        )?;
        let probe = probe(cfg);
        let sources: Vec<usize> = (0..world.len()).collect();
        let affinity = measured_transfer(world, base, &probe, &sources, cfg.probe_instances, seed);
        let candidates = [
            (Pick::Aes, indices(world, &aes.env_ids)?),
            (Pick::AesNoConflict, indices(world, &no_conflict.env_ids)?),
            (Pick::CoverageOnly, indices(world, &coverage.env_ids)?),
            (Pick::Random, indices(world, &random.env_ids)?),
            (Pick::Lookahead, lookahead_pick(&affinity, k)),
        ];
        let sets: Vec<Vec<usize>> = candidates.iter().map(|(_, set)| set.clone()).collect();
        let best = oracle(world, base, k, cfg.budget as f32, &sets, &cfg.oracle, seed);
        Ok(Self {
            candidates,
            oracle: best.envs,
            oracle_exact: best.exact,
            all: sources,
        })
    }

    pub(super) fn of(&self, pick: Pick) -> &[usize] {
        match pick {
            Pick::All => &self.all,
            Pick::Oracle => &self.oracle,
            _ => self
                .candidates
                .iter()
                .find(|(p, _)| *p == pick)
                .map(|(_, set)| set)
                .expect("every other pick is a candidate"),
        }
    }
}

/// The fine-tune every probe of the map makes: the episodes one selected environment gets
/// in an arm (the record's probes had as many steps as each of its arms' environments), at
/// H4.
pub(super) fn probe(cfg: &WorldMapConfig) -> Probe {
    Probe {
        episodes: (cfg.budget / cfg.k as u64) as f32,
        levels: ProbeLevels::H4,
        steps: cfg.oracle.steps,
    }
}

/// The seed every arm of a world trains with (sampler and success draws): the same for all,
/// so arms differ by what they train on and in what order.
fn training_seed(seed: u64) -> u64 {
    Rng::derive(seed, 0x5452_4149).next_u64()
}

/// Train `arm` on `envs` from `base` for the budget; its learner and the share of its
/// episodes below H4.
pub(super) fn train(
    world: &World,
    base: &Learner,
    arm: &WorldArm,
    envs: &[usize],
    cfg: &WorldMapConfig,
    seed: u64,
) -> Result<(Learner, f32)> {
    let specs = world.specs_at(envs);
    let mut sampler = arm
        .sampler(cfg.hdc_stage_scale)?
        .build(&specs, training_seed(seed))
        .with_context(|| format!("arm {}", arm.name))?;
    let mut learner = base.clone();
    let run = learner
        .train(world, sampler.as_mut(), cfg.budget, training_seed(seed))
        .with_context(|| format!("arm {}", arm.name))?;
    Ok((learner, run.below_h4 as f32 / run.episodes.max(1) as f32))
}
