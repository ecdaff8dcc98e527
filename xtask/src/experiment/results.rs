//! `results.json` and `REPORT.md`: the study's outputs, shaped like the paper's tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::config::{Arm, EXPERIMENT_SCHEMA_VERSION, ExperimentConfig};

/// Mean success of one evaluation, split the paper's way. `None` where a split has no env.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitScores {
    /// Single-turn, in-pool.
    pub st_id: Option<f32>,
    /// Multi-turn, in-pool.
    pub mt_id: Option<f32>,
    /// Single-turn, held-out.
    pub st_ood: Option<f32>,
    /// Multi-turn, held-out.
    pub mt_ood: Option<f32>,
}

impl SplitScores {
    /// The four columns in table order.
    pub fn columns(&self) -> [Option<f32>; 4] {
        [self.st_id, self.mt_id, self.st_ood, self.mt_ood]
    }

    /// Mean over the columns of the relative gain `(x - base) / base`, skipping columns where
    /// either side is missing or the base is zero (a relative gain over zero is undefined).
    pub fn relative_gain_over(&self, base: &SplitScores) -> Option<f32> {
        let gains: Vec<f32> = self
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
}

/// One training arm at one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmRun {
    /// The arm.
    pub arm: Arm,
    /// Training seed index.
    pub seed: u32,
    /// The environments trained on.
    pub train_envs: Vec<String>,
    /// Success rate per evaluated environment (ID and OOD), at H4.
    pub per_env: BTreeMap<String, f32>,
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
    /// Selection name (`aes`, `aes-no-conflict`, `random-k seed 0`, ...).
    pub name: String,
    /// Chosen env ids in pick order.
    pub envs: Vec<String>,
    /// Abilities covered / abilities in the pool.
    pub covered: usize,
    /// Abilities the pool covers.
    pub coverable: usize,
    /// Mean pairwise gradient cosine inside the selection.
    pub mean_pairwise_cosine: Option<f32>,
    /// Number of pairs with cosine below -0.1 inside the selection.
    pub conflicting_pairs: usize,
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
    /// Free-form facts the report quotes (pool size, meta-abilities, twin cosines...).
    pub facts: BTreeMap<String, String>,
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
            facts: BTreeMap::new(),
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
