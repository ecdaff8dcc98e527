//! The testbed as a world: knobs fitted to what the committed cpu record measured before any
//! arm trained (its preconditions), then the arms run on the fitted world and their gains
//! set beside the record's. The fit never sees an arm's outcome: what the world predicts for
//! the arms is a prediction.
//!
//! Two knobs are read off the record's pool directly: `twin_fraction` (its designed twin
//! pairs per environment) and `annotator_noise` (the tags a profile holds beyond its
//! family's common set, per common tag, in the record's `profiles.json`: tags that mark a
//! variant, not a transferable ability). Each other fitted knob is matched to the one
//! statistic it moves most, by bisection over a bracket, in a fixed order, the whole order
//! repeated a few passes (the statistics interact a little): the scale curve to the share
//! of the base's scale drop the middle scale takes, scale difficulty to the drop from the
//! smallest to the largest scale, base logit to the base at the smallest scale, the
//! families' spread to the share never solved (a zero gradient), scaffold to the base's H0 -
//! H4 gap, learning rate to a probe's own gain at H4, carry-over to its gain from H0-H2,
//! transfer along abilities to the profile-transfer Spearman, the family's share to the
//! family's transfer, interference to the other families', conflict to the twins'
//! interference, gradient noise to the split-half cosine, gradient relevance to the
//! gradient-transfer Spearman; HDC's gates last, to the share of episodes HDC played below
//! H4. Each statistic is measured the way the record measured it (probes of the arms'
//! per-environment budget; transfer for the Spearman on the record's 72 evaluation
//! instances), averaged over a few worlds of their own seeds.

use envdist_core::{HarnessLevel, Rng, Validate};
use envdist_world::{Learner, World, WorldConfig, annotate, observe_gradients};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::WorldMapConfig;
use super::analysis::{paired, seed_interval};
use super::arms::{ArmScores, RECORD_CLAIMS, WorldArm, names, record_arms, train};
use super::measure::{self, Descriptors};
use crate::error::{Context, Result};
use crate::model::{EnvSource, Interval, Results};
use crate::observer::Observer;

/// Cross-family pairs of the record whose profiles share a task ability transfer about a
/// point more than pairs sharing nothing: −0.05 (268 pairs, same look) and −0.25 (702, other
/// look) against −0.99 (2,502) and −1.35 (7,707), weighted +1.07. Not in `results.json`:
/// `scripts/transfer_ceiling.py` over the record (docs/experiments/README.md, "What
/// cross-family pairs share").
pub const RECORD_SHARED_ABILITY_GAP: f32 = 1.07;

/// The record's numbers: those the calibration fits and those the world then predicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Where they come from.
    pub source: String,
    /// The base's whole-pool success at H4, smallest / middle / largest scale, points.
    pub base_by_scale: Vec<f32>,
    /// The base's whole-pool H0 minus H4 success, points (single- and multi-turn weighted by
    /// their share of the pool).
    pub scaffold_gap: f32,
    /// A probe's own gain at H4, points (`harness_transfer_h4`).
    pub own_h4: f32,
    /// A probe's own H4 gain from H0-H2 only (`harness_transfer`).
    pub own_scaffolded: f32,
    /// A probe's transfer to its family (`probe_same_family`).
    pub same_family: f32,
    /// A probe's transfer to other families (`probe_other_families`).
    pub other_families: f32,
    /// Cross-family pairs sharing an ability minus sharing none ([`RECORD_SHARED_ABILITY_GAP`];
    /// predicted).
    pub shared_ability_gap: f32,
    /// Tags a profile holds beyond its family's common set, per common tag (from the record's
    /// profiles, where given): the world's `annotator_noise`.
    pub invented_tags: Option<f32>,
    /// `transfer_vs_profile`.
    pub profile_spearman: f32,
    /// The designed twins' transfer minus their family's (`analysis.transfer`).
    pub twin_minus_same_family: f32,
    /// `facts.gradient_split_half`.
    pub split_half: f32,
    /// `transfer_vs_family` (predicted, not fitted).
    pub family_spearman: f32,
    /// `transfer_vs_gradient`.
    pub gradient_spearman: f32,
    /// Share of AES's picks common to every seed's selection (predicted).
    pub aes_agreement: f32,
    /// The same without the conflict term (predicted).
    pub no_conflict_agreement: f32,
    /// Share of the pool with an exactly zero gradient (never solved in the gradient's
    /// episodes).
    pub zero_gradient: f32,
    /// The base gradients' cosine statistics (`facts.gradients`; predicted).
    pub gradient_cosines: envdist_core::PairSummary,
    /// Share of `random-k+hdc`'s episodes below H4 (`hdc_reach`; predicted).
    pub hdc_below_h4: f32,
    /// Arms' whole-pool gains over the base and the primary comparisons, as the record has
    /// them (predicted).
    pub comparisons: Vec<(String, Interval)>,
    /// Arms' gains by where they trained (`analysis.arms[*].transfer`; predicted): (arm,
    /// part, interval), the parts `trained`, `same_family`, `other_families`.
    pub splits: Vec<(String, String, Interval)>,
    /// Designed twin pairs per pool environment (`facts.conflict_pairs / facts.pool_envs`):
    /// sets the world's `twin_fraction`.
    pub twin_pairs_per_env: f32,
}

fn need<T>(v: Option<T>, field: &str) -> Result<T> {
    v.with_context(|| format!("the record has no {field}"))
}

/// The comparisons of the record the world predicts: (name `a − b`, arm `a`, arm `b`): every
/// arm of [`RECORD_CLAIMS`] over the base, then each claim's pair.
pub fn comparisons() -> Vec<(String, String, String)> {
    let base = names().base;
    let over_base = record_arms().into_iter().map(|a| (a.name(), base));
    let claims = RECORD_CLAIMS
        .iter()
        .filter_map(|c| c.statement().1)
        .filter(|(_, b)| !b.is_base())
        .map(|(a, b)| (a.name(), b.name()));
    over_base
        .chain(claims)
        .map(|(a, b)| (format!("{a} − {b}"), a.to_string(), b.to_string()))
        .collect()
}

impl Targets {
    /// The targets in `record` (a study's `results.json`), named `source`, with the pool's
    /// `profiles` (its `profiles.json`) where there are some.
    pub fn from_record(
        record: &Results,
        source: &str,
        profiles: Option<&envdist_core::ProfileSet>,
    ) -> Result<Self> {
        let p = need(record.preconditions.as_ref(), "preconditions")?;
        let a = need(record.analysis.as_ref(), "analysis")?;
        let est = |v: Option<&crate::model::ProbeEstimate>, f: &str| -> Result<f32> {
            Ok(need(v, f)?.estimate as f32)
        };

        let base = need(a.arms.iter().find(|s| s.arm.is_base()), "base arm")?;
        let base_by_scale = base.by_scale.iter().map(|s| s.id.estimate as f32).collect();
        let pool = record.envs.pool.len().max(1) as f64;
        let st = record
            .envs
            .single_turn
            .iter()
            .filter(|e| record.envs.pool.contains(e))
            .count() as f64
            / pool;
        let level = |h: HarnessLevel| -> Result<f64> {
            let t = need(p.base_by_harness.get(&h), "base_by_harness")?;
            Ok(st * need(t.st, "base_by_harness.st")?
                + (1.0 - st) * need(t.mt, "base_by_harness.mt")?)
        };
        let transfer = need(a.transfer.as_ref(), "analysis.transfer")?;
        let agreement = |source: EnvSource| -> Option<f32> {
            let sets: Vec<&Vec<envdist_core::EnvId>> = record
                .selections
                .iter()
                .filter(|s| s.name.source == source)
                .map(|s| &s.envs)
                .collect();
            let first = sets.first()?;
            let common = first
                .iter()
                .filter(|e| sets[1..].iter().all(|s| s.contains(e)))
                .count();
            Some(common as f32 / first.len().max(1) as f32)
        };
        let split = super::arms::split_arms();
        let mut splits = Vec::new();
        for s in a.arms.iter().filter(|s| split.contains(&s.arm.name())) {
            let Some(t) = s.transfer.as_ref() else {
                continue;
            };
            for (part, v) in [
                ("trained", t.trained),
                ("same_family", t.same_family),
                ("other_families", t.other_families),
            ] {
                if let Some(v) = v {
                    splits.push((s.arm.name().to_string(), part.to_string(), v));
                }
            }
        }
        let base_name = names().base;
        let mut comparisons = Vec::new();
        for (name, arm, minus) in super::calibrate::comparisons() {
            let found = if minus == base_name {
                a.arms
                    .iter()
                    .find(|s| s.arm.name() == arm)
                    .and_then(|s| s.delta_id)
            } else {
                a.claims
                    .iter()
                    .find(|c| {
                        c.id.statement()
                            .1
                            .is_some_and(|(x, y)| x.name() == arm && y.name() == minus)
                    })
                    .map(|c| c.difference)
            };
            if let Some(d) = found {
                comparisons.push((name, d));
            }
        }
        Ok(Self {
            source: source.to_string(),
            base_by_scale,
            scaffold_gap: (level(HarnessLevel::H0)? - level(HarnessLevel::H4)?) as f32,
            own_h4: est(p.harness_transfer_h4.as_ref(), "harness_transfer_h4")?,
            own_scaffolded: est(p.harness_transfer.as_ref(), "harness_transfer")?,
            same_family: est(p.probe_same_family.as_ref(), "probe_same_family")?,
            other_families: est(p.probe_other_families.as_ref(), "probe_other_families")?,
            shared_ability_gap: RECORD_SHARED_ABILITY_GAP,
            invented_tags: profiles.and_then(|p| invented_tags(p, &record.envs.family)),
            profile_spearman: est(p.transfer_vs_profile.as_ref(), "transfer_vs_profile")?,
            twin_minus_same_family: need(
                transfer.twin_minus_same_family,
                "analysis.transfer.twin_minus_same_family",
            )?
            .estimate as f32,
            split_half: need(
                record.facts.gradient_split_half,
                "facts.gradient_split_half",
            )?,
            family_spearman: est(p.transfer_vs_family.as_ref(), "transfer_vs_family")?,
            gradient_spearman: est(p.transfer_vs_gradient.as_ref(), "transfer_vs_gradient")?,
            aes_agreement: need(agreement(EnvSource::Aes), "aes selections")?,
            no_conflict_agreement: need(
                agreement(EnvSource::AesNoConflict),
                "aes-no-conflict selections",
            )?,
            zero_gradient: record.facts.zero_gradient_envs as f32
                / record.facts.pool_envs.max(1) as f32,
            gradient_cosines: need(record.facts.gradients.clone(), "facts.gradients")?,
            hdc_below_h4: need(
                p.hdc_reach
                    .iter()
                    .find(|(a, _)| a.name() == names().random_k_hdc),
                "hdc_reach of the random selection with HDC",
            )?
            .1
            .below_h4 as f32,
            comparisons,
            splits,
            twin_pairs_per_env: record.facts.conflict_pairs as f32
                / record.facts.pool_envs.max(1) as f32,
        })
    }
}

/// Per profile, the tags outside its family's common set (the tags every member holds) per
/// common tag; the mean over profiles whose family has at least one common tag.
fn invented_tags(
    profiles: &envdist_core::ProfileSet,
    family: &std::collections::BTreeMap<envdist_core::EnvId, String>,
) -> Option<f32> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut members: BTreeMap<&str, Vec<BTreeSet<&str>>> = BTreeMap::new();
    for p in &profiles.profiles {
        let Some(f) = family.get(&p.env) else {
            continue;
        };
        let tags = p
            .coverage
            .iter()
            .filter(|(_, w)| **w > 0.0)
            .map(|(k, _)| k.as_str())
            .collect();
        members.entry(f.as_str()).or_default().push(tags);
    }
    let mut ratios = Vec::new();
    for sets in members.values() {
        let common: BTreeSet<&str> = sets.iter().skip(1).fold(sets[0].clone(), |acc, s| {
            acc.intersection(s).copied().collect()
        });
        if common.is_empty() {
            continue;
        }
        for s in sets {
            ratios.push(s.difference(&common).count() as f32 / common.len() as f32);
        }
    }
    (!ratios.is_empty()).then(|| ratios.iter().sum::<f32>() / ratios.len() as f32)
}

/// A statistic of one world's descriptors (`None` where the world has nothing to measure).
type Statistic = fn(&Descriptors) -> Option<f32>;

/// A knob the calibration sets, the statistic it is matched to, and its bracket.
struct Fitted {
    knob: &'static str,
    what: &'static str,
    target: fn(&Targets) -> f32,
    /// Whether the statistic grows with the knob.
    increasing: bool,
    stat: Statistic,
    bracket: fn(&WorldConfig) -> (f32, f32),
    /// Bisect in log space (a rate spanning orders of magnitude).
    log: bool,
}

fn scale_drop(d: &[f32]) -> Option<f32> {
    Some(d.first()? - d.last()?)
}

/// How much of the drop from the smallest to the largest scale the middle scale has taken.
fn mid_share(d: &[f32]) -> Option<f32> {
    let drop = scale_drop(d)?;
    let taken = d.first()? - d.get(1)?;
    (drop.abs() > 1e-6).then(|| taken / drop)
}

const FITTED: [Fitted; 13] = [
    Fitted {
        knob: "scale_curve",
        what: "base: share of the scale drop taken by the middle scale",
        target: |t| mid_share(&t.base_by_scale).unwrap_or(0.5),
        increasing: false,
        stat: |d| mid_share(&d.base_by_scale),
        bracket: |_| (0.05, 3.0),
        log: true,
    },
    Fitted {
        knob: "scale_difficulty",
        what: "base: smallest minus largest scale, points",
        target: |t| scale_drop(&t.base_by_scale).unwrap_or(0.0),
        increasing: true,
        stat: |d| scale_drop(&d.base_by_scale),
        bracket: |_| (0.0, 6.0),
        log: false,
    },
    Fitted {
        knob: "base_logit",
        what: "base at the smallest scale, points",
        target: |t| t.base_by_scale.first().copied().unwrap_or(0.0),
        increasing: true,
        stat: |d| d.base_by_scale.first().copied(),
        bracket: |_| (-6.0, 4.0),
        log: false,
    },
    Fitted {
        knob: "family_spread",
        what: "share of the pool with a zero gradient",
        target: |t| t.zero_gradient,
        increasing: true,
        stat: |d| Some(d.zero_gradient),
        bracket: |_| (0.0, 5.0),
        log: false,
    },
    Fitted {
        knob: "scaffold",
        what: "base: H0 minus H4, points",
        target: |t| t.scaffold_gap,
        increasing: true,
        stat: |d| Some(d.base_by_level.first()? - d.base_by_level.last()?),
        bracket: |_| (0.0, 4.0),
        log: false,
    },
    Fitted {
        knob: "learning_rate",
        what: "a probe's own gain at H4, points",
        target: |t| t.own_h4,
        increasing: true,
        stat: |d| Some(d.own_h4),
        bracket: |_| (1e-4, 0.3),
        log: true,
    },
    Fitted {
        knob: "carry_over",
        what: "a probe's own H4 gain from H0-H2 only, points",
        target: |t| t.own_scaffolded,
        increasing: true,
        stat: |d| Some(d.own_scaffolded),
        bracket: |_| (0.0, 1.0),
        log: false,
    },
    Fitted {
        knob: "transfer",
        what: "Spearman of profile overlap with measured transfer",
        target: |t| t.profile_spearman,
        stat: |d| d.profile_spearman,
        bracket: |c| (0.0, (1.0f32 - c.family_share - c.trunk).max(0.0)),
        increasing: true,
        log: false,
    },
    Fitted {
        knob: "family_share",
        what: "a probe's transfer to its family, points",
        target: |t| t.same_family,
        increasing: true,
        stat: |d| Some(d.same_family),
        bracket: |c| (0.0, (1.0f32 - c.transfer - c.trunk).max(0.0)),
        log: false,
    },
    Fitted {
        knob: "interference",
        what: "a probe's transfer to other families, points",
        target: |t| t.other_families,
        increasing: false,
        stat: |d| Some(d.other_families),
        bracket: |_| (0.0, 2.0),
        log: false,
    },
    Fitted {
        knob: "conflict",
        what: "twin minus same-family transfer, points",
        target: |t| t.twin_minus_same_family,
        increasing: false,
        stat: |d| d.twin_minus_same_family,
        bracket: |_| (0.0, 1.0),
        log: false,
    },
    Fitted {
        knob: "gradient_noise",
        what: "gradient split-half cosine",
        target: |t| t.split_half,
        increasing: false,
        stat: |d| Some(d.split_half.cosine),
        bracket: |_| (0.0, 20.0),
        log: false,
    },
    Fitted {
        knob: "gradient_relevance",
        what: "Spearman of gradient cosine with measured transfer",
        target: |t| t.gradient_spearman,
        increasing: true,
        stat: |d| d.gradient_spearman,
        bracket: |_| (0.0, 1.0),
        log: false,
    },
];

/// One fitted knob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedKnob {
    /// The knob.
    pub knob: String,
    /// The value fitted.
    pub value: f32,
    /// The statistic it was matched to.
    pub statistic: String,
    /// The record's value of it.
    pub target: f32,
    /// The fitted world's (mean over the calibration's worlds).
    pub achieved: Option<f32>,
}

/// The calibration's outcome before the testbed's arms run.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The calibrated world.
    pub world: WorldConfig,
    /// HDC's stage gates, as a factor of the study's ([`WorldMapConfig::hdc_stage_scale`]).
    pub hdc_stage_scale: f32,
    /// Each knob fitted.
    pub knobs: Vec<FittedKnob>,
}

const HDC_BELOW_H4: &str = "share of random-k+hdc's episodes below H4";

/// The share of its episodes `random-k+hdc` plays below H4 on `world` with HDC's gates at
/// `scale` (mean over the calibration's worlds; a random draw of `k` per world).
fn hdc_below(cfg: &WorldMapConfig, world: &WorldConfig, scale: f32) -> Result<f32> {
    let checked = world.clone().checked().context("calibration")?;
    let run = WorldMapConfig {
        hdc_stage_scale: scale,
        ..cfg.clone()
    };
    let arm = WorldArm::main()
        .into_iter()
        .find(|a| a.name == names().random_k_hdc)
        .context("the random selection with HDC")?;
    let shares = (0..cfg.calibration_seeds as u64)
        .into_par_iter()
        .map(|i| {
            let seed = cfg.seed.wrapping_add(1_000_000 + i);
            let w = World::generate(&checked, seed);
            let mut envs: Vec<usize> = (0..w.len()).collect();
            Rng::derive(seed, 0x4844_4352).shuffle(&mut envs);
            envs.truncate(cfg.k);
            envs.sort_unstable();
            Ok(train(&w, &Learner::base(&w), &arm, &envs, &run, seed)?.1)
        })
        .collect::<Result<Vec<f32>>>()?;
    Ok(shares.iter().sum::<f32>() / shares.len().max(1) as f32)
}

/// One row of the calibration table: the record's number beside the testbed world's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    /// What.
    pub what: String,
    /// Fitted (the calibration matched it) or predicted (it did not see it).
    pub fitted: bool,
    /// The record's value, with its interval where the record has one.
    pub record: Interval,
    /// The testbed world's: mean over its worlds, interval over seeds.
    pub world: Interval,
}

/// The calibration and the testbed's predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The record's numbers.
    pub targets: Targets,
    /// The knobs fitted.
    pub knobs: Vec<FittedKnob>,
    /// The calibrated world (the map's centre).
    pub world: WorldConfig,
    /// The record beside the world, statistic by statistic and comparison by comparison.
    pub rows: Vec<CalibrationRow>,
    /// The testbed's worlds (all arms, the map's seeds).
    pub testbed: Vec<ArmScores>,
}

fn average(cfg: &WorldMapConfig, world: &WorldConfig) -> Result<Vec<Descriptors>> {
    let checked = world.clone().checked().context("calibration")?;
    (0..cfg.calibration_seeds as u64)
        .into_par_iter()
        .map(|i| {
            let seed = cfg.seed.wrapping_add(1_000_000 + i);
            let w = World::generate(&checked, seed);
            let base = Learner::base(&w);
            let profiles = annotate(&w, seed);
            let grads = observe_gradients(&w, &base, seed);
            measure::describe(cfg, &w, &base, &profiles, &grads, seed)
        })
        .collect()
}

fn mean_stat(ds: &[Descriptors], stat: Statistic) -> Option<f32> {
    let v: Vec<f32> = ds.iter().filter_map(stat).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32)
}

/// Fit the knobs of [`FITTED`] to `targets`, starting from `cfg.world`.
pub fn fit(cfg: &WorldMapConfig, targets: &Targets, observer: &dyn Observer) -> Result<Fit> {
    const ITERATIONS: u32 = 12;
    // The pool's structure first: as many twin pairs per environment as the record's pool.
    let twin_fraction = (targets.twin_pairs_per_env * cfg.world.variants as f32).clamp(0.0, 1.0);
    let mut world = cfg
        .world
        .clone()
        .with_knob("twin_fraction", twin_fraction)?;
    if let Some(noise) = targets.invented_tags {
        world = world.with_knob("annotator_noise", noise)?;
    }
    let total = (cfg.calibration_passes as u64 * FITTED.len() as u64 + 1) * ITERATIONS as u64;
    let bar = observer.progress("calibration", total);
    for _ in 0..cfg.calibration_passes {
        for f in &FITTED {
            let (mut lo, mut hi) = (f.bracket)(&world);
            let target = (f.target)(targets);
            let middle = |lo: f32, hi: f32| {
                if f.log {
                    (lo * hi).sqrt()
                } else {
                    0.5 * (lo + hi)
                }
            };
            for _ in 0..ITERATIONS {
                let mid = middle(lo, hi);
                world = world.with_knob(f.knob, mid)?;
                // Without the statistic (no twins, say) the knob ends mid-bracket.
                if let Some(s) = mean_stat(&average(cfg, &world)?, f.stat) {
                    if (s < target) == f.increasing {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                bar.inc(1);
            }
            world = world.with_knob(f.knob, middle(lo, hi))?;
        }
    }
    // HDC's gates last: the share below H4 depends on the world's success, not the reverse.
    let target = targets.hdc_below_h4;
    let (mut lo, mut hi) = (0.02f32, 1.0f32);
    for _ in 0..ITERATIONS {
        let mid = (lo * hi).sqrt();
        bar.inc(1);
        if hdc_below(cfg, &world, mid)? < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let hdc_stage_scale = (lo * hi).sqrt();
    bar.finish();
    let ds = average(cfg, &world)?;
    let mut knobs = FITTED
        .iter()
        .map(|f| {
            Ok(FittedKnob {
                knob: f.knob.to_string(),
                value: world.knob(f.knob)?,
                statistic: f.what.to_string(),
                target: (f.target)(targets),
                achieved: mean_stat(&ds, f.stat),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut direct = vec![FittedKnob {
        knob: "twin_fraction".into(),
        value: twin_fraction,
        statistic: "set: the record's designed twin pairs per environment x variants".into(),
        target: targets.twin_pairs_per_env,
        achieved: None,
    }];
    if let Some(noise) = targets.invented_tags {
        direct.push(FittedKnob {
            knob: "annotator_noise".into(),
            value: noise,
            statistic: "set: the record's tags beyond a family's common set, per common tag".into(),
            target: noise,
            achieved: None,
        });
    }
    knobs.splice(0..0, direct);
    knobs.push(FittedKnob {
        knob: "hdc_stage_scale".into(),
        value: hdc_stage_scale,
        statistic: HDC_BELOW_H4.into(),
        target,
        achieved: Some(hdc_below(cfg, &world, hdc_stage_scale)?),
    });
    Ok(Fit {
        world,
        hdc_stage_scale,
        knobs,
    })
}

fn point(v: f64) -> Interval {
    Interval {
        estimate: v,
        lo: v,
        hi: v,
        se: 0.0,
        p: 1.0,
    }
}

/// The record beside the fitted world run with every arm (`testbed`, the map's seeds).
pub fn compare(
    fit: Fit,
    targets: &Targets,
    testbed: Vec<ArmScores>,
    cfg: &WorldMapConfig,
) -> Calibration {
    let (b, seed) = (cfg.replicates, cfg.seed);
    let d = |f: Statistic| -> Interval {
        let v: Vec<f64> = testbed
            .iter()
            .filter_map(|w| f(&w.world))
            .map(f64::from)
            .collect();
        seed_interval(&v, b, seed)
    };
    let fitted_rows = FITTED.iter().map(|f| CalibrationRow {
        what: f.what.to_string(),
        fitted: true,
        record: point((f.target)(targets) as f64),
        world: d(f.stat),
    });
    let g = &targets.gradient_cosines;
    let predicted: [(&str, Option<f32>, Statistic); 9] = [
        (
            "Spearman of same family with measured transfer",
            Some(targets.family_spearman),
            |w| w.family_spearman,
        ),
        (
            "cross-family pairs sharing an annotated ability minus none, points",
            Some(targets.shared_ability_gap),
            |w| w.shared_ability_gap,
        ),
        (
            "base at the middle scale, points",
            targets.base_by_scale.get(1).copied(),
            |w| w.base_by_scale.get(1).copied(),
        ),
        ("gradient cosine of twins (mean)", g.twin_mean, |w| {
            w.gradient_cosines.twin_mean
        }),
        (
            "gradient cosine of same-family non-twins (mean)",
            g.same_family_mean,
            |w| w.gradient_cosines.same_family_mean,
        ),
        (
            "gradient cosine over all pairs (sd)",
            Some(g.all_pairs_std),
            |w| Some(w.gradient_cosines.all_pairs_std),
        ),
        (
            "share of pairs with gradient cosine < -0.1",
            Some(g.negative_fraction),
            |w| Some(w.gradient_cosines.negative_fraction),
        ),
        (
            "share of AES picks common to three gradient draws",
            Some(targets.aes_agreement),
            |w| Some(w.aes_agreement),
        ),
        (
            "the same without the conflict term",
            Some(targets.no_conflict_agreement),
            |w| Some(w.no_conflict_agreement),
        ),
    ];
    let mut rows: Vec<CalibrationRow> = fitted_rows.collect();
    rows.push(CalibrationRow {
        what: HDC_BELOW_H4.to_string(),
        fitted: true,
        record: point(targets.hdc_below_h4 as f64),
        world: d(|w| w.hdc_below_h4),
    });
    for (what, record, f) in predicted {
        let Some(record) = record else { continue };
        rows.push(CalibrationRow {
            what: what.to_string(),
            fitted: false,
            record: point(record as f64),
            world: d(f),
        });
    }
    for (arm, part, record) in &targets.splits {
        let v: Vec<f64> = testbed
            .iter()
            .filter_map(|w| {
                let s = w.splits.get(arm)?;
                match part.as_str() {
                    "trained" => s.trained,
                    "same_family" => s.same_family,
                    _ => s.other_families,
                }
            })
            .map(f64::from)
            .collect();
        if v.is_empty() {
            continue;
        }
        rows.push(CalibrationRow {
            what: format!("{arm}: gain on {}, points", part.replace('_', " ")),
            fitted: false,
            record: *record,
            world: seed_interval(&v, b, seed),
        });
    }
    for (name, a, minus) in comparisons() {
        let Some(record) = targets.comparisons.iter().find(|c| c.0 == name) else {
            continue;
        };
        rows.push(CalibrationRow {
            what: format!("{name}, points"),
            fitted: false,
            record: record.1,
            world: paired(&testbed, &a, &minus, b, seed),
        });
    }
    Calibration {
        targets: targets.clone(),
        knobs: fit.knobs,
        world: fit.world,
        rows,
        testbed,
    }
}
