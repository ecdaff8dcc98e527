//! `results.json`: everything the study measured, typed, and what the report computes from it.

use std::collections::BTreeMap;

use envdist_core::{EnvId, PairSummary};
use serde::{Deserialize, Serialize};

use crate::analysis::Analysis;
use crate::config::{Arm, EXPERIMENT_SCHEMA_VERSION, ExperimentConfig};
pub use envdist_trainer::SplitScores;

/// Mean over the four columns of the relative gain `(x - base) / base`, skipping columns where
/// either side is missing or the base is zero (a relative gain over zero is undefined): the
/// paper's "average relative gain". See [`super::analysis`] for the pooled gain beside it.
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
/// `coverage-only`, `random-k/<seed>`, `control-aes`, `control-random-k/<seed>`.
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
    /// AES on the control pool.
    ControlAes,
    /// A random-k draw of the control pool.
    ControlRandomK(u32),
}

impl std::fmt::Display for SelectionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Aes => f.write_str("aes"),
            Self::AesNoConflict => f.write_str("aes-no-conflict"),
            Self::CoverageOnly => f.write_str("coverage-only"),
            Self::RandomK(seed) => write!(f, "random-k/{seed}"),
            Self::ControlAes => f.write_str("control-aes"),
            Self::ControlRandomK(seed) => write!(f, "control-random-k/{seed}"),
        }
    }
}

impl std::str::FromStr for SelectionId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let seeded = |prefix: &str| s.strip_prefix(prefix).and_then(|n| n.parse().ok());
        match s {
            "aes" => Ok(Self::Aes),
            "aes-no-conflict" => Ok(Self::AesNoConflict),
            "coverage-only" => Ok(Self::CoverageOnly),
            "control-aes" => Ok(Self::ControlAes),
            _ => seeded("random-k/")
                .map(Self::RandomK)
                .or_else(|| seeded("control-random-k/").map(Self::ControlRandomK))
                .ok_or_else(|| {
                    format!(
                        "expected aes, aes-no-conflict, coverage-only, control-aes, \
                         random-k/<seed> or control-random-k/<seed>, found {s:?}"
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

/// Where an HDC arm's curriculum went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurriculumSummary {
    /// Training episodes played at each harness level H0..H4.
    pub episodes_per_level: [u64; 5],
    /// Environments whose current level at the end is H0..H4.
    pub final_levels: [u32; 5],
    /// Share of the environments at H4 at the end.
    pub share_at_h4: f32,
    /// Share of the budget (in episodes) spent when the first half of the environments
    /// reached H4 (`None` if half never did).
    pub half_at_h4_after: Option<f32>,
    /// Stage advances forced by the per-stage episode cap (not earned by competence).
    pub capped_advances: u32,
    /// Stage advances in all.
    pub advances: u32,
}

/// One training arm at one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmRun {
    /// The arm.
    pub arm: Arm,
    /// Training seed index.
    pub seed: u32,
    /// The environments trained on (the last selection for the online arm).
    pub train_envs: Vec<EnvId>,
    /// Success per evaluated environment (ID and OOD), per evaluated scale, at H4.
    pub per_env: BTreeMap<EnvId, Vec<f32>>,
    /// The paper's four columns.
    pub scores: SplitScores,
    /// Environment steps of training (equal for every arm but base).
    pub env_steps: u64,
    /// Wall time of training + evaluation in seconds (of the invocation that computed it).
    pub wall_seconds: f64,
    /// Learning curve: (env steps, training success rate of the update's episodes).
    pub curve: Vec<(u64, f32)>,
    /// HDC arms: where the curriculum went.
    pub curriculum: Option<CurriculumSummary>,
    /// Online arm: the selections in order (the first is the one-shot AES).
    #[serde(default)]
    pub reselections: Vec<Vec<EnvId>>,
    /// Training throughput, env steps/s, learning included.
    #[serde(default)]
    pub env_steps_per_s: f32,
}

impl ArmRun {
    /// Success of `env` averaged over the evaluated scales.
    pub fn success(&self, env: &EnvId) -> Option<f32> {
        self.per_env
            .get(env)
            .map(|v| v.iter().sum::<f32>() / v.len().max(1) as f32)
    }
}

/// One point of the pool-size scaling study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// Number of random pool environments trained on.
    pub pool_size: usize,
    /// Seed index.
    pub seed: u32,
    /// The run (arm `random-k` at this size).
    pub run: ArmRun,
}

/// Summary of one selection (for the report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionSummary {
    /// Which selection.
    pub name: SelectionId,
    /// Chosen env ids in pick order.
    pub envs: Vec<EnvId>,
    /// Abilities covered.
    pub covered: usize,
    /// Abilities the allowed pool covers.
    pub coverable: usize,
    /// Mean pairwise gradient cosine inside the selection.
    pub mean_pairwise_cosine: Option<f32>,
    /// Number of pairs with cosine below -0.1 inside the selection.
    pub conflicting_pairs: usize,
    /// Certified gap to the optimum of the objective, where a bound holds.
    #[serde(default)]
    pub certificate_gap: Option<f32>,
    /// Anything the selection had to give up (e.g. the zero-gradient exclusion).
    #[serde(default)]
    pub note: Option<String>,
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

impl MachineInfo {
    /// This machine (fields it cannot read stay empty).
    pub fn current() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default()
        };
        let flags = field("flags");
        let flags: Vec<&str> = flags.split_whitespace().collect();
        let simd = ["fma", "avx2", "avx512f"]
            .iter()
            .filter(|f| flags.contains(f))
            .map(|f| f.to_string())
            .collect();
        let cache = |what: &str| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/index0/{what}"))
                .map(|s| s.trim().to_string())
                .ok()
        };
        let l1d = match (
            cache("type").as_deref(),
            cache("size"),
            cache("ways_of_associativity"),
        ) {
            (Some("Data"), Some(size), Some(ways)) => ways.parse().ok().map(|w| (size, w)),
            _ => None,
        };
        Self {
            cpu: field("model name"),
            simd,
            l1d,
            threads: rayon::current_num_threads(),
        }
    }
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
    /// An empty result set for `config`.
    pub fn new(config: ExperimentConfig, code: CodeInfo) -> Self {
        Self {
            schema_version: EXPERIMENT_SCHEMA_VERSION,
            config,
            code,
            machine: MachineInfo::current(),
            envs: EnvSets::default(),
            runs: vec![],
            selections: vec![],
            scaling: vec![],
            constant_baseline: BTreeMap::new(),
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
        self.runs.iter().find(|r| r.arm == Arm::Base)
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

/// The paper's published average relative gains, where an arm of ours corresponds to one of
/// theirs.
pub fn paper_gain(arm: Arm) -> Option<&'static str> {
    match arm {
        Arm::AllPool => Some("+43.4% (all 200)"),
        Arm::RandomK => Some("+44.6% (random 30)"),
        Arm::Aes => Some("+95.6% (AES 30)"),
        Arm::AesHdc => Some("+143.2%"),
        Arm::RandomKHdc => Some("+73.7%"),
        Arm::AesNoConflict => Some("2.8% (ablation; vs 40.3% with it)"),
        Arm::AesHarnessOnly => Some("18.1% (ablation)"),
        Arm::AesScaleOnly => Some("11.5% (ablation)"),
        _ => None,
    }
}
