//! The map's numbers: per cell, the differences between arms with intervals over the paired
//! seeds, and along each axis where a difference reaches its goal (a threshold), with an
//! interval from the same seed resampling and its value in a unit a user can measure on
//! their own pool.

use serde::{Deserialize, Serialize};

use super::PlaneMap;
use super::arms::{LOOKAHEAD, ORACLE, names, study_gates};
use super::measure::Descriptors;
use super::world::ArmScores;
use crate::model::Interval;
use crate::stats::{Replicates, bootstrap};
use Unit::{BaseH4, GradientReliability, ProfileSpearman};
use envdist_core::Rng;
use envdist_world::WorldConfig;

/// The differences the map reports: (name `a − b`, arm `a`, arm `b`).
pub fn differences_table() -> Vec<(String, String, String)> {
    let n = names();
    let gates = study_gates();
    [
        (n.aes, n.random_k),
        (n.aes, n.all_pool),
        (n.aes, n.no_conflict),
        (n.random_k_hdc, n.random_k),
        (gates.as_str(), n.random_k),
        (n.aes_hdc, n.aes),
        (ORACLE, n.random_k),
        (LOOKAHEAD, n.random_k),
        (envdist_study_coverage(), n.random_k),
    ]
    .iter()
    .map(|(a, b)| (format!("{a} − {b}"), a.to_string(), b.to_string()))
    .collect()
}

fn envdist_study_coverage() -> &'static str {
    crate::model::EnvSource::CoverageOnly.name()
}

/// The interval of the mean of `values` (one per seed), seeds resampled.
pub fn seed_interval(values: &[f64], replicates: u32, seed: u64) -> Interval {
    bootstrap(values.len(), &[], replicates, seed, |s, _| {
        s.iter().map(|&i| values[i]).sum::<f64>() / s.len().max(1) as f64
    })
}

/// Per seed, `a − b` (seeds where both ran).
fn differences(worlds: &[ArmScores], a: &str, b: &str) -> Vec<f64> {
    worlds
        .iter()
        .filter_map(|w| Some(w.score(a)? as f64 - w.score(b)? as f64))
        .collect()
}

/// The mean paired difference `a − b` over `worlds`, seeds resampled.
pub fn paired(worlds: &[ArmScores], a: &str, b: &str, replicates: u32, seed: u64) -> Interval {
    seed_interval(&differences(worlds, a, b), replicates, seed)
}

/// One cell's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellMetrics {
    /// Each of [`differences_table`] that ran, by name, in points.
    pub differences: Vec<(String, Interval)>,
    /// AES's share of the oracle's gain over the base: `mean(aes − base) / mean(oracle −
    /// base)`, seeds resampled (`None` where the oracle gains less than a tenth of a point).
    pub aes_share_of_oracle: Option<Interval>,
    /// The best rival minus `random-k` (where the rivals ran): the largest mean, with its
    /// name.
    pub best_rival: Option<(String, Interval)>,
    /// Every arm's mean score, points.
    pub scores: Vec<(String, f64)>,
    /// The profile-transfer Spearman the cell's worlds show an experimenter (mean).
    pub profile_spearman: Option<f64>,
    /// The gradients' split-half reliability (mean).
    pub gradient_reliability: f64,
    /// The probes' harness transfer, points (mean).
    pub harness_transfer: f64,
    /// The base's whole-pool H4 success, points (mean).
    pub base: f64,
    /// The twins' transfer minus their family's, points (mean).
    pub twin_minus_same_family: Option<f64>,
}

impl CellMetrics {
    /// The difference `name`, if it ran.
    pub fn difference(&self, name: &str) -> Option<Interval> {
        self.differences.iter().find(|d| d.0 == name).map(|d| d.1)
    }
}

fn mean_of(worlds: &[ArmScores], f: impl Fn(&Descriptors) -> Option<f32>) -> Option<f64> {
    let v: Vec<f64> = worlds
        .iter()
        .filter_map(|w| f(&w.world))
        .map(f64::from)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The metrics of one cell's worlds.
pub fn metrics(worlds: &[ArmScores], replicates: u32, seed: u64) -> CellMetrics {
    let n = names();
    let differences = differences_table()
        .into_iter()
        .filter(|(_, a, b)| {
            worlds
                .iter()
                .all(|w| w.score(a).is_some() && w.score(b).is_some())
        })
        .map(|(name, a, b)| (name, paired(worlds, &a, &b, replicates, seed)))
        .collect();
    let gain = |arm: &str| differences_of(worlds, arm);
    let (aes, oracle) = (gain(n.aes), gain(ORACLE));
    let oracle_gain = oracle.iter().sum::<f64>() / oracle.len().max(1) as f64;
    let aes_share_of_oracle = (aes.len() == oracle.len() && oracle_gain > 0.1).then(|| {
        bootstrap(worlds.len(), &[], replicates, seed, |s, _| {
            let sum = |v: &[f64]| s.iter().map(|&i| v[i]).sum::<f64>();
            sum(&aes) / sum(&oracle)
        })
    });
    let mut arms: Vec<&String> = worlds
        .first()
        .map(|w| w.scores.keys().collect())
        .unwrap_or_default();
    arms.sort();
    let scores = arms
        .iter()
        .map(|a| {
            let v: Vec<f64> = worlds
                .iter()
                .filter_map(|w| w.score(a))
                .map(f64::from)
                .collect();
            (a.to_string(), v.iter().sum::<f64>() / v.len().max(1) as f64)
        })
        .collect();
    let (random, gates) = (format!("{}+", n.random_k), study_gates());
    let best_rival = arms
        .iter()
        .filter(|a| a.starts_with(&random) && a.as_str() != n.random_k_hdc && a.as_str() != gates)
        .map(|a| {
            (
                a.to_string(),
                paired(worlds, a, n.random_k, replicates, seed),
            )
        })
        .max_by(|a, b| a.1.estimate.total_cmp(&b.1.estimate));
    CellMetrics {
        differences,
        aes_share_of_oracle,
        best_rival,
        scores,
        profile_spearman: mean_of(worlds, |d| d.profile_spearman),
        gradient_reliability: mean_of(worlds, |d| Some(d.split_half.reliability)).unwrap_or(0.0),
        harness_transfer: mean_of(worlds, |d| Some(d.own_scaffolded)).unwrap_or(0.0),
        base: mean_of(worlds, |d| Some(d.base)).unwrap_or(0.0),
        twin_minus_same_family: mean_of(worlds, |d| d.twin_minus_same_family),
    }
}

fn differences_of(worlds: &[ArmScores], arm: &str) -> Vec<f64> {
    differences(worlds, arm, names().base)
}

/// Whether a difference reaches its goal somewhere along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdStatus {
    /// It reaches the goal from some point of the axis on.
    Crossed,
    /// It meets the goal everywhere along the axis.
    Always,
    /// It meets it nowhere within the axis's range.
    Never,
}

/// Where along an axis a difference reaches its goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// The plane.
    pub plane: String,
    /// The difference (one of [`differences_table`]).
    pub difference: String,
    /// Its goal, points.
    pub goal: f64,
    /// The knob it moves along.
    pub along: String,
    /// The other knob and the value it is held at.
    pub at: (String, f32),
    /// Where the mean difference meets the goal.
    pub status: ThresholdStatus,
    /// Whether the goal is met above the crossing (the difference grows with the knob) or
    /// below it.
    pub met_above: bool,
    /// The crossing's knob value, interpolated linearly between cells, with a 95% interval
    /// over resampled seeds; an end at the axis's first or last value means the interval
    /// reaches beyond the range there (replicates that never or always meet the goal).
    pub knob: Option<Interval>,
    /// The crossing in a unit measurable on a real pool (`measure`), interpolated the same way.
    pub measured: Option<Interval>,
    /// Whether the goal is met above `measured` (the unit grows along the knob where the
    /// goal is met) or below it.
    pub measured_above: bool,
    /// What `measured` is.
    pub measure: String,
}

/// What a threshold's crossing is also given in: a unit measurable on a real pool.
#[derive(Clone, Copy)]
enum Unit {
    ProfileSpearman,
    GradientReliability,
    BaseH4,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::ProfileSpearman => "profile-transfer Spearman",
            Unit::GradientReliability => "gradient split-half reliability",
            Unit::BaseH4 => "base H4 success, points",
        }
    }

    fn of(self, m: &CellMetrics) -> Option<f64> {
        match self {
            Unit::ProfileSpearman => m.profile_spearman,
            Unit::GradientReliability => Some(m.gradient_reliability),
            Unit::BaseH4 => Some(m.base),
        }
    }
}

/// One threshold question: on a plane, where a difference reaches a goal along one axis
/// (`along_x`, else y), and the unit its crossing is also given in.
type Question = (&'static str, &'static str, f64, bool, Unit);

// The differences the questions ask about.
const AES_RANDOM: &str = "aes − random-k";
const AES_ALL_POOL: &str = "aes − all-pool";
const AES_NO_CONFLICT: &str = "aes − aes-no-conflict";
const HDC_RANDOM: &str = "random-k+hdc − random-k";
const GATES_RANDOM: &str = "random-k+hdc-study-gates − random-k";

const QUESTIONS: [Question; 9] = [
    ("premises", AES_RANDOM, 3.0, true, ProfileSpearman),
    ("coverage", AES_RANDOM, 3.0, true, ProfileSpearman),
    ("coverage", AES_ALL_POOL, 3.0, true, ProfileSpearman),
    ("coverage", AES_RANDOM, 3.0, false, ProfileSpearman),
    ("conflict", AES_NO_CONFLICT, 0.0, true, GradientReliability),
    ("conflict", AES_NO_CONFLICT, 3.0, true, GradientReliability),
    ("curriculum", HDC_RANDOM, 0.0, false, BaseH4),
    ("curriculum", GATES_RANDOM, 0.0, false, BaseH4),
    ("curriculum", HDC_RANDOM, 3.0, false, BaseH4),
];

/// Where the curve `f` (one value per axis point `x`) meets `goal`: the status, whether the
/// goal is met above the crossing, and the interpolated crossing (clamped to the axis).
fn crossing(x: &[f32], f: &[f64], goal: f64) -> (ThresholdStatus, bool, f64) {
    let meets: Vec<bool> = f.iter().map(|v| *v >= goal).collect();
    if meets.iter().all(|m| *m) {
        return (ThresholdStatus::Always, true, x[0] as f64);
    }
    if meets.iter().all(|m| !*m) {
        return (
            ThresholdStatus::Never,
            true,
            *x.last().unwrap_or(&0.0) as f64,
        );
    }
    let above = !meets[0];
    let i = meets.windows(2).position(|w| w[0] != w[1]).unwrap_or(0);
    let (x0, x1, f0, f1) = (x[i] as f64, x[i + 1] as f64, f[i], f[i + 1]);
    let t = if f1 == f0 {
        0.5
    } else {
        (goal - f0) / (f1 - f0)
    };
    (
        ThresholdStatus::Crossed,
        above,
        x0 + t.clamp(0.0, 1.0) * (x1 - x0),
    )
}

/// `g` at the axis position `at`, interpolated linearly between the points `x`.
fn interpolate(x: &[f32], g: &[f64], at: f64) -> f64 {
    let i = x
        .windows(2)
        .position(|w| at <= w[1] as f64)
        .unwrap_or(x.len().saturating_sub(2));
    if x.len() < 2 {
        return g[0];
    }
    let (x0, x1) = (x[i] as f64, x[i + 1] as f64);
    let t = if x1 == x0 {
        0.0
    } else {
        ((at - x0) / (x1 - x0)).clamp(0.0, 1.0)
    };
    g[i] + t * (g[i + 1] - g[i])
}

/// Every threshold of [`QUESTIONS`] on the planes that have its plane and difference.
pub fn thresholds(
    planes: &[PlaneMap],
    _centre: &WorldConfig,
    replicates: u32,
    seed: u64,
) -> Vec<Threshold> {
    let mut out = Vec::new();
    for &(plane, difference, goal, along_x, unit) in &QUESTIONS {
        let Some(pm) = planes.iter().find(|p| p.plane.name == plane) else {
            continue;
        };
        let (nx, ny) = (pm.plane.x.values.len(), pm.plane.y.values.len());
        let table = differences_table();
        let Some((_, a, b)) = table.iter().find(|d| d.0 == difference) else {
            continue;
        };
        let (along, other) = if along_x {
            (&pm.plane.x, &pm.plane.y)
        } else {
            (&pm.plane.y, &pm.plane.x)
        };
        for (oi, &held) in other.values.iter().enumerate() {
            let cells: Vec<&super::Cell> = (0..along.values.len())
                .map(|ai| {
                    let (xi, yi) = if along_x { (ai, oi) } else { (oi, ai) };
                    &pm.cells[yi * nx + xi]
                })
                .collect();
            debug_assert_eq!(cells.len(), if along_x { nx } else { ny });
            let per_seed: Vec<Vec<f64>> =
                cells.iter().map(|c| differences(&c.worlds, a, b)).collect();
            if per_seed.iter().any(|v| v.is_empty()) {
                continue;
            }
            let seeds = per_seed.iter().map(Vec::len).min().unwrap_or(0);
            let curve = |idx: &[usize]| -> Vec<f64> {
                per_seed
                    .iter()
                    .map(|v| idx.iter().map(|&i| v[i]).sum::<f64>() / idx.len().max(1) as f64)
                    .collect()
            };
            let identity: Vec<usize> = (0..seeds).collect();
            let (status, met_above, at) = crossing(&along.values, &curve(&identity), goal);
            let measured_curve: Option<Vec<f64>> =
                cells.iter().map(|c| unit.of(&c.metrics)).collect();
            let mut idx = vec![0usize; seeds];
            let reps = Replicates::draw(at, replicates, Rng::derive(seed, 0x5448_5245), |rng| {
                for i in idx.iter_mut() {
                    *i = rng.index(seeds);
                }
                crossing(&along.values, &curve(&idx), goal).2
            });
            let knob = (status == ThresholdStatus::Crossed).then(|| reps.interval());
            let measured = match (&knob, &measured_curve) {
                (Some(k), Some(m)) => {
                    let v = |x: f64| interpolate(&along.values, m, x);
                    let ends = [v(k.lo), v(k.hi)];
                    Some(Interval {
                        estimate: v(k.estimate),
                        lo: ends[0].min(ends[1]),
                        hi: ends[0].max(ends[1]),
                        se: 0.0,
                        p: k.p,
                    })
                }
                _ => None,
            };
            // The measured unit may fall along the knob (the base's success with scarcity).
            let rises = measured_curve
                .as_ref()
                .is_none_or(|m| m.last().unwrap_or(&0.0) >= m.first().unwrap_or(&0.0));
            out.push(Threshold {
                plane: plane.to_string(),
                difference: difference.to_string(),
                goal,
                along: along.knob.clone(),
                at: (other.knob.clone(), held),
                status,
                met_above,
                knob,
                measured,
                measured_above: met_above == rises,
                measure: unit.name().to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossings_interpolate_and_say_which_side_meets_the_goal() {
        let x = [0.0, 1.0, 2.0];
        let (s, above, at) = crossing(&x, &[0.0, 2.0, 4.0], 3.0);
        assert_eq!((s, above), (ThresholdStatus::Crossed, true));
        assert!((at - 1.5).abs() < 1e-12);
        let (s, above, at) = crossing(&x, &[4.0, 2.0, 0.0], 3.0);
        assert_eq!((s, above), (ThresholdStatus::Crossed, false));
        assert!((at - 0.5).abs() < 1e-12);
        assert_eq!(
            crossing(&x, &[5.0, 4.0, 3.5], 3.0).0,
            ThresholdStatus::Always
        );
        assert_eq!(
            crossing(&x, &[0.0, 1.0, 2.0], 3.0).0,
            ThresholdStatus::Never
        );
        assert!((interpolate(&x, &[0.0, 10.0, 30.0], 1.5) - 20.0).abs() < 1e-12);
    }
}
