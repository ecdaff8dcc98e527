//! `results.json` and `REPORT.md`: the study's outputs, shaped like the paper's tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use envdist_core::{EnvId, PairSummary};
use serde::{Deserialize, Serialize};

use super::config::{Arm, EXPERIMENT_SCHEMA_VERSION, ExperimentConfig};

pub use envdist_trainer::SplitScores;

/// Mean over the four columns of the relative gain `(x - base) / base`, skipping columns where
/// either side is missing or the base is zero (a relative gain over zero is undefined).
pub fn relative_gain(scores: &SplitScores, base: &SplitScores) -> Option<f32> {
    let gains: Vec<f32> = scores
        .columns()
        .iter()
        .zip(base.columns())
        .filter_map(|(x, b)| match (x, b) {
            (Some(x), Some(b)) if b > 0.0 => Some((x - b) / b),
            _ => None,
        })
        .collect();
    (!gains.is_empty()).then(|| gains.iter().sum::<f32>() / gains.len() as f32)
}

/// Which selection a [`SelectionSummary`] holds; written as `aes`, `aes-no-conflict`,
/// `coverage-only`, `random-k/<seed>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SelectionId {
    /// AES with every term.
    Aes,
    /// AES without the conflict term.
    AesNoConflict,
    /// Coverage only.
    CoverageOnly,
    /// The random-k draw of one training seed.
    RandomK(u32),
}

impl std::fmt::Display for SelectionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Aes => f.write_str("aes"),
            Self::AesNoConflict => f.write_str("aes-no-conflict"),
            Self::CoverageOnly => f.write_str("coverage-only"),
            Self::RandomK(seed) => write!(f, "random-k/{seed}"),
        }
    }
}

impl std::str::FromStr for SelectionId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "aes" => Ok(Self::Aes),
            "aes-no-conflict" => Ok(Self::AesNoConflict),
            "coverage-only" => Ok(Self::CoverageOnly),
            other => other
                .strip_prefix("random-k/")
                .and_then(|n| n.parse().ok())
                .map(Self::RandomK)
                .ok_or_else(|| {
                    format!(
                        "expected aes, aes-no-conflict, coverage-only or random-k/<seed>, found {other:?}"
                    )
                }),
        }
    }
}

impl Serialize for SelectionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SelectionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// One training arm at one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmRun {
    /// The arm.
    pub arm: Arm,
    /// Training seed index.
    pub seed: u32,
    /// The environments trained on.
    pub train_envs: Vec<EnvId>,
    /// Success rate per evaluated environment (ID and OOD), at H4.
    pub per_env: BTreeMap<EnvId, f32>,
    /// Split means.
    pub scores: SplitScores,
    /// Mean relative gain over the base model (None for the base itself).
    pub relative_gain: Option<f32>,
    /// Environment steps of training (equal for every arm but base).
    pub env_steps: u64,
    /// Wall time of training + evaluation in seconds.
    pub wall_seconds: f64,
    /// Learning curve: (env steps, rolling training success rate).
    pub curve: Vec<(u64, f32)>,
}

/// One point of the pool-size scaling study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// Number of random pool environments trained on.
    pub pool_size: usize,
    /// Seed index.
    pub seed: u32,
    /// Split means.
    pub scores: SplitScores,
}

/// Summary of one selection (for the report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionSummary {
    /// Which selection.
    pub name: SelectionId,
    /// Chosen env ids in pick order.
    pub envs: Vec<EnvId>,
    /// Abilities covered / abilities in the pool.
    pub covered: usize,
    /// Abilities the pool covers.
    pub coverable: usize,
    /// Mean pairwise gradient cosine inside the selection.
    pub mean_pairwise_cosine: Option<f32>,
    /// Number of pairs with cosine below -0.1 inside the selection.
    pub conflicting_pairs: usize,
}

/// What the stages measured besides the arms' scores; the report prints each as a row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// Pool environments used.
    pub pool_envs: usize,
    /// Families among them.
    pub pool_families: usize,
    /// Held-out (OOD) environments evaluated.
    pub ood_envs: usize,
    /// Conflict pairs with both members in the pool.
    pub conflict_pairs: usize,
    /// Atomic abilities seen by profiling.
    pub atomic_abilities: usize,
    /// Meta-abilities after clustering.
    pub meta_abilities: usize,
    /// Mean coverage cosine of the conflict twins' profiles.
    pub twin_profile_cosine: Option<f32>,
    /// Warm-up throughput, env steps/s, learning included.
    pub train_env_steps_per_s: f32,
    /// Warm-up rollouts alone, env steps/s.
    pub rollout_steps_per_s: f32,
    /// Warm-up learning alone, samples/s (each sample counted once per epoch).
    pub learn_samples_per_s: f32,
    /// Pairwise cosines of the base model's per-env gradients.
    pub gradients: Option<PairSummary>,
    /// Environments whose gradient is exactly zero (never solved by the base).
    pub zero_gradient_envs: usize,
}

impl Facts {
    /// The rows of the report's facts table, in a fixed order.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let mut r = vec![
            ("pool environments", self.pool_envs.to_string()),
            ("pool families", self.pool_families.to_string()),
            ("held-out (OOD) environments", self.ood_envs.to_string()),
            ("conflict pairs in pool", self.conflict_pairs.to_string()),
            ("atomic abilities", self.atomic_abilities.to_string()),
            ("meta-abilities", self.meta_abilities.to_string()),
        ];
        if let Some(c) = self.twin_profile_cosine {
            r.push(("profile cosine of conflict twins", format!("{c:.3}")));
        }
        r.push((
            "training throughput (env steps/s, learning included)",
            format!("{:.0}", self.train_env_steps_per_s),
        ));
        r.push((
            "of which rollouts alone (env steps/s)",
            format!("{:.0}", self.rollout_steps_per_s),
        ));
        r.push((
            "of which learning alone (samples/s, per epoch)",
            format!("{:.0}", self.learn_samples_per_s),
        ));
        if let Some(g) = &self.gradients {
            if let Some(c) = g.twin_mean {
                r.push((
                    "gradient cosine of conflict twins (mean)",
                    format!("{c:.3}"),
                ));
            }
            if let Some(c) = g.same_family_mean {
                r.push((
                    "gradient cosine of same-family non-twins (mean)",
                    format!("{c:.3}"),
                ));
            }
            r.push((
                "gradient cosine over all pairs (mean)",
                format!("{:.3}", g.all_pairs_mean),
            ));
            r.push((
                "pairs with gradient cosine < -0.1",
                format!("{:.1}%", 100.0 * g.negative_fraction),
            ));
        }
        r.push((
            "envs with an exactly zero gradient (never solved by the base)",
            self.zero_gradient_envs.to_string(),
        ));
        r
    }
}

/// Everything the study measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Always [`EXPERIMENT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The configuration that produced them.
    pub config: ExperimentConfig,
    /// Every arm x seed.
    pub runs: Vec<ArmRun>,
    /// The selections that were trained on.
    pub selections: Vec<SelectionSummary>,
    /// The scaling study (may be empty).
    pub scaling: Vec<ScalingPoint>,
    /// Seconds per stage.
    pub stage_seconds: BTreeMap<String, f64>,
    /// Wall time of the invocation that wrote these results, in seconds.
    pub total_seconds: f64,
    /// Sum of every stage's compute time, cached stages included (their original time).
    #[serde(default)]
    pub compute_seconds: f64,
    /// What the stages measured besides scores (pool size, meta-abilities, twin cosines...).
    pub facts: Facts,
}

impl Results {
    /// An empty result set for `config`.
    pub fn new(config: ExperimentConfig) -> Self {
        Self {
            schema_version: EXPERIMENT_SCHEMA_VERSION,
            config,
            runs: vec![],
            selections: vec![],
            scaling: vec![],
            stage_seconds: BTreeMap::new(),
            total_seconds: 0.0,
            compute_seconds: 0.0,
            facts: Facts::default(),
        }
    }

    /// The runs of one arm.
    pub fn arm_runs(&self, arm: Arm) -> Vec<&ArmRun> {
        self.runs.iter().filter(|r| r.arm == arm).collect()
    }
}

/// Mean and (population) standard deviation.
pub fn mean_std(xs: &[f32]) -> Option<(f32, f32)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f32;
    let mean = xs.iter().sum::<f32>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n;
    Some((mean, var.sqrt()))
}

fn cell_pct(xs: &[f32]) -> String {
    match mean_std(xs) {
        None => "–".into(),
        Some((m, s)) if xs.len() > 1 => format!("{:.1} ± {:.1}", 100.0 * m, 100.0 * s),
        Some((m, _)) => format!("{:.1}", 100.0 * m),
    }
}

fn cell_gain(xs: &[f32]) -> String {
    match mean_std(xs) {
        None => "–".into(),
        Some((m, s)) if xs.len() > 1 => format!("{:+.1}% ± {:.1}", 100.0 * m, 100.0 * s),
        Some((m, _)) => format!("{:+.1}%", 100.0 * m),
    }
}

/// The paper's published average relative gains (Qwen3-VL, ID+OOD average), where an arm of
/// ours corresponds to one of theirs.
pub fn paper_gain(arm: Arm) -> Option<&'static str> {
    match arm {
        Arm::AllPool => Some("+43.4% (all 200)"),
        Arm::RandomK => Some("+44.6% (random 30)"),
        Arm::Aes => Some("+95.6% (AES 30)"),
        Arm::AesHdc => Some("+143.2%"),
        Arm::RandomKHdc => Some("+73.7%"),
        _ => None,
    }
}

/// The paper's ablation figures (relative gain of the ablated component's experiment).
pub fn paper_ablation(arm: Arm) -> Option<&'static str> {
    match arm {
        Arm::AesNoConflict => Some("2.8% (vs 40.3% with the conflict term)"),
        Arm::AesHarnessOnly => Some("18.1% (harness weakening alone)"),
        Arm::AesScaleOnly => Some("11.5% (scale progression alone)"),
        Arm::AesHdc => Some("27.7% (both)"),
        _ => None,
    }
}

/// The main table as Markdown: rows are arms, columns the paper's, mean ± std over seeds.
pub fn main_table(results: &Results, arms: &[Arm]) -> String {
    let mut t = String::from(
        "| arm | seeds | ST (ID) | MT (ID) | ST (OOD) | MT (OOD) | avg. relative gain | paper |\n|---|---|---|---|---|---|---|---|\n",
    );
    for &arm in arms {
        let runs = results.arm_runs(arm);
        if runs.is_empty() {
            continue;
        }
        let col =
            |i: usize| -> Vec<f32> { runs.iter().filter_map(|r| r.scores.columns()[i]).collect() };
        let gains: Vec<f32> = runs.iter().filter_map(|r| r.relative_gain).collect();
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            arm.name(),
            runs.len(),
            cell_pct(&col(0)),
            cell_pct(&col(1)),
            cell_pct(&col(2)),
            cell_pct(&col(3)),
            if arm == Arm::Base {
                "(reference)".into()
            } else {
                cell_gain(&gains)
            },
            paper_gain(arm).unwrap_or(""),
        );
    }
    t
}

/// Mean relative gain of an arm over seeds.
pub fn arm_gain(results: &Results, arm: Arm) -> Option<(f32, f32)> {
    let gains: Vec<f32> = results
        .arm_runs(arm)
        .iter()
        .filter_map(|r| r.relative_gain)
        .collect();
    mean_std(&gains)
}
