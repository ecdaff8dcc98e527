//! The record as a whole (`results.json`): the configuration, the code and machine, the environment sets, every run and measurement, the facts, and the analysis.

use std::collections::BTreeMap;

use envdist_core::{EnvId, PairSummary};
use serde::{Deserialize, Serialize};

use super::analysis::Analysis;
use super::arms::Arm;
use super::preconditions::{PreconditionRuns, Preconditions};
use super::runs::{ArmRun, ScalingPoint};
use super::selections::SelectionSummary;
use super::transfer::TransferRuns;
/// Schema version of `results.json` (the study's files share the configuration's).
pub use crate::config::EXPERIMENT_SCHEMA_VERSION;
use crate::config::ExperimentConfig;

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
    /// Environments of the control pool.
    pub control_envs: usize,
    /// Atomic abilities seen by profiling.
    pub atomic_abilities: usize,
    /// Meta-abilities after clustering.
    pub meta_abilities: usize,
    /// Mean coverage cosine of the conflict twins' profiles.
    pub twin_profile_cosine: Option<f32>,
    /// Behaviour cloning: final accuracy on the solver's actions.
    pub base_clone_accuracy: f32,
    /// Training throughput of the arms, env steps/s, learning included (mean over arms).
    pub train_env_steps_per_s: f32,
    /// Pairwise cosines of the base model's per-env gradients at H4.
    pub gradients: Option<PairSummary>,
    /// The same at H0 (all text), for the polarisation comparison.
    pub gradients_h0: Option<PairSummary>,
    /// Mean split-half cosine of the per-env gradients with signal (reliability).
    pub gradient_split_half: Option<f32>,
    /// Seed 0's AES picks that seed 1's selection (from its own gradients: other episodes and
    /// projection) keeps: what a rerun of the gradients stage keeps.
    #[serde(default)]
    pub aes_rerun_kept: Option<usize>,
    /// Environments whose gradient is exactly zero (never solved by the base).
    pub zero_gradient_envs: usize,
}

impl Facts {
    /// The rows of the report's facts table, in a fixed order.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let opt = |x: Option<f32>| x.map_or("–".into(), |c| format!("{c:.3}"));
        let mut r = vec![
            ("pool environments", self.pool_envs.to_string()),
            ("pool families", self.pool_families.to_string()),
            ("held-out (OOD) environments", self.ood_envs.to_string()),
            ("conflict pairs in pool", self.conflict_pairs.to_string()),
            (
                "control pool (no rule-inverted twins)",
                self.control_envs.to_string(),
            ),
            ("atomic abilities", self.atomic_abilities.to_string()),
            ("meta-abilities", self.meta_abilities.to_string()),
            (
                "profile cosine of conflict twins",
                opt(self.twin_profile_cosine),
            ),
            (
                "base: behaviour-cloning accuracy on the solver's actions",
                format!("{:.3}", self.base_clone_accuracy),
            ),
            (
                "training throughput of the arms (env steps/s, learning included)",
                format!("{:.0}", self.train_env_steps_per_s),
            ),
        ];
        for (h, g) in [("H4", &self.gradients), ("H0", &self.gradients_h0)] {
            let Some(g) = g else { continue };
            let label = |what: &'static str| -> &'static str {
                match (h, what) {
                    ("H4", "twin") => "gradient cosine of conflict twins at H4 (mean)",
                    ("H0", "twin") => "gradient cosine of conflict twins at H0 (mean)",
                    ("H4", "fam") => "gradient cosine of same-family non-twins at H4 (mean)",
                    ("H0", "fam") => "gradient cosine of same-family non-twins at H0 (mean)",
                    ("H4", "all") => "gradient cosine over all pairs at H4 (mean ± sd)",
                    ("H0", "all") => "gradient cosine over all pairs at H0 (mean ± sd)",
                    ("H4", _) => "pairs with gradient cosine < -0.1 at H4",
                    _ => "pairs with gradient cosine < -0.1 at H0",
                }
            };
            r.push((label("twin"), opt(g.twin_mean)));
            r.push((label("fam"), opt(g.same_family_mean)));
            r.push((
                label("all"),
                format!("{:.3} ± {:.3}", g.all_pairs_mean, g.all_pairs_std),
            ));
            r.push((label("neg"), format!("{:.1}%", 100.0 * g.negative_fraction)));
        }
        r.push((
            "per-env gradient split-half cosine (mean over envs with signal)",
            opt(self.gradient_split_half),
        ));
        r.push((
            "per-env gradient reliability (Spearman-Brown of the mean split-half cosine)",
            opt(self.gradient_split_half.map(|c| 2.0 * c / (1.0 + c))),
        ));
        r.push((
            "AES picks of seed 0 that seed 1's own gradients keep (other episodes and projection)",
            self.aes_rerun_kept.map_or("–".into(), |k| k.to_string()),
        ));
        r.push((
            "envs with an exactly zero gradient (never solved by the base)",
            self.zero_gradient_envs.to_string(),
        ));
        r
    }
}

/// What the code was when the results were computed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeInfo {
    /// `git rev-parse HEAD` at build time (`+dirty` when the tree had changes), or `unknown`.
    pub commit: String,
    /// A hash of every source file the results depend on.
    pub source_hash: String,
}

/// The machine the numbers were computed on, as far as it decides them: the CPU, the SIMD
/// instructions its kernels may use, the L1 data cache (`gemm` sizes its blocks from it; see
/// the trainer's `model` docs) and the worker threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// `model name` of /proc/cpuinfo.
    pub cpu: String,
    /// Which of `fma`, `avx2`, `avx512f` the CPU has.
    pub simd: Vec<String>,
    /// L1 data cache of cpu0: size and ways (`48K`, 12), from /sys.
    pub l1d: Option<(String, u32)>,
    /// Rayon worker threads.
    pub threads: usize,
}

/// The environment sets the analysis splits by.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvSets {
    /// The pool (ID evaluation).
    pub pool: Vec<EnvId>,
    /// The held-out set (OOD evaluation).
    pub ood: Vec<EnvId>,
    /// The single-turn environments among both.
    pub single_turn: Vec<EnvId>,
    /// Every environment's family.
    pub family: BTreeMap<EnvId, String>,
}

/// Everything the study measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Always [`EXPERIMENT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The configuration that produced them.
    pub config: ExperimentConfig,
    /// The code that produced them.
    pub code: CodeInfo,
    /// The machine that produced them.
    #[serde(default)]
    pub machine: MachineInfo,
    /// Pool, held-out and single-turn environments.
    pub envs: EnvSets,
    /// Every arm x seed (base once).
    pub runs: Vec<ArmRun>,
    /// The selections that were trained on.
    pub selections: Vec<SelectionSummary>,
    /// The scaling study (may be empty).
    pub scaling: Vec<ScalingPoint>,
    /// Per single-turn environment, the success of its best constant answer on the
    /// evaluation instances.
    pub constant_baseline: BTreeMap<EnvId, f32>,
    /// The measured-transfer stage: the base's scores on the targets and each fine-tune's.
    #[serde(default)]
    pub transfer: Option<TransferRuns>,
    /// The precondition stages' measurements (absent when the config skips them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition_runs: Option<PreconditionRuns>,
    /// The testbed's preconditions, computed from `precondition_runs` and the arms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preconditions: Option<Preconditions>,
    /// Seconds per stage.
    pub stage_seconds: BTreeMap<String, f64>,
    /// Wall time of the invocation that wrote these results, in seconds.
    pub total_seconds: f64,
    /// Sum of every stage's compute time, cached stages included (their original time).
    pub compute_seconds: f64,
    /// What the stages measured besides scores.
    pub facts: Facts,
    /// Intervals, claims and verdicts computed from the runs.
    pub analysis: Option<Analysis>,
}

impl Results {
    /// An empty result set for `config`, computed by `code` on `machine`.
    pub fn new(config: ExperimentConfig, code: CodeInfo, machine: MachineInfo) -> Self {
        Self {
            schema_version: EXPERIMENT_SCHEMA_VERSION,
            config,
            code,
            machine,
            envs: EnvSets::default(),
            runs: vec![],
            selections: vec![],
            scaling: vec![],
            constant_baseline: BTreeMap::new(),
            transfer: None,
            precondition_runs: None,
            preconditions: None,
            stage_seconds: BTreeMap::new(),
            total_seconds: 0.0,
            compute_seconds: 0.0,
            facts: Facts::default(),
            analysis: None,
        }
    }

    /// The runs of one arm, by seed.
    pub fn arm_runs(&self, arm: Arm) -> Vec<&ArmRun> {
        self.runs.iter().filter(|r| r.arm == arm).collect()
    }

    /// The base run.
    pub fn base(&self) -> Option<&ArmRun> {
        self.runs.iter().find(|r| r.arm.is_base())
    }
}
