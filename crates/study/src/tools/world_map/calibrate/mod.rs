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

use envdist_core::{Rng, Validate};
use envdist_world::{Learner, World, WorldConfig};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

mod targets;

use super::WorldMapConfig;
use super::analysis::{paired, seed_interval};
use super::arms::{WorldArm, names, train};
use super::measure::{self, Descriptors};
use super::observed::Observed;
use super::world::ArmScores;
use crate::error::{Context, Result};
use crate::model::Interval;
use crate::observer::Observer;
pub use targets::Targets;
use targets::comparisons;

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
            measure::describe(cfg, &Observed::generate(&checked, seed))
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
            targets.shared_ability_gap,
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
