//! The study's records: everything `results.json` holds (the runs, the selections, the
//! measured transfer, the facts) and the analysis computed from it (intervals, claims,
//! verdicts), as plain data. The analysis, the report and the figures read these types; the
//! stages write them.

use std::collections::BTreeMap;

use envdist_core::{EnvId, HarnessLevel, PairSummary};
use serde::{Deserialize, Serialize};

use super::arms::{Arm, ClaimId, SelectionId};
pub use envdist_trainer::SplitScores;

/// Schema version of `results.json` (the study's files share the configuration's).
pub use crate::config::EXPERIMENT_SCHEMA_VERSION;
use crate::config::ExperimentConfig;

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

/// An arm's curriculum summaries summed over its runs (seeds): the one sum behind
/// `preconditions.hdc_reach` and the report's HDC table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CurriculumTotals {
    /// Runs summed.
    pub runs: usize,
    /// Training episodes at each harness level H0..H4.
    pub episodes_per_level: [u64; 5],
    /// Environment-runs whose level at the end is H0..H4.
    pub final_levels: [u32; 5],
    /// The runs' shares of environments at H4 at the end, summed (divide by `runs`).
    pub share_at_h4_sum: f32,
    /// `half_at_h4_after` of the runs where half the environments reached H4.
    pub half_at_h4_after: Vec<f32>,
    /// Stage advances forced by the stage cap.
    pub capped_advances: u32,
    /// Stage advances in all.
    pub advances: u32,
}

impl CurriculumTotals {
    /// The sum of `summaries`, in their order.
    pub fn of<'a>(summaries: impl IntoIterator<Item = &'a CurriculumSummary>) -> Self {
        let mut t = Self::default();
        for s in summaries {
            t.runs += 1;
            for k in 0..5 {
                t.episodes_per_level[k] += s.episodes_per_level[k];
                t.final_levels[k] += s.final_levels[k];
            }
            t.share_at_h4_sum += s.share_at_h4;
            t.half_at_h4_after.extend(s.half_at_h4_after);
            t.capped_advances += s.capped_advances;
            t.advances += s.advances;
        }
        t
    }

    /// Training episodes in all.
    pub fn episodes(&self) -> u64 {
        self.episodes_per_level.iter().sum()
    }
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
    /// The RL's diagnostics over training (every update, or a subsample of at most 128).
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    /// HDC arms: where the curriculum went.
    pub curriculum: Option<CurriculumSummary>,
    /// Online arm: the selections in order (the first is the one-shot AES).
    #[serde(default)]
    pub reselections: Vec<Vec<EnvId>>,
    /// Training throughput, env steps/s, learning included.
    #[serde(default)]
    pub env_steps_per_s: f32,
    /// Seconds of the final evaluation (part of `wall_seconds`).
    #[serde(default)]
    pub eval_seconds: f64,
}

impl ArmRun {
    /// A run known by its evaluation alone (`per_env`): no training, no diagnostics; the
    /// base's evaluation and the analysis's tests start from it.
    pub fn evaluated(arm: Arm, seed: u32, per_env: BTreeMap<EnvId, Vec<f32>>) -> Self {
        Self {
            arm,
            seed,
            train_envs: vec![],
            per_env,
            scores: SplitScores::default(),
            env_steps: 0,
            wall_seconds: 0.0,
            curve: vec![],
            diagnostics: vec![],
            curriculum: None,
            reselections: vec![],
            env_steps_per_s: 0.0,
            eval_seconds: 0.0,
        }
    }

    /// Success of `env` averaged over the evaluated scales.
    pub fn success(&self, env: &EnvId) -> Option<f32> {
        self.per_env
            .get(env)
            .map(|v| v.iter().sum::<f32>() / v.len().max(1) as f32)
    }
}

/// One update's diagnostics of an arm's RL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Environment steps so far.
    pub env_steps: u64,
    /// Training success (sampled actions) of the single-turn episodes that ended in the update.
    pub success_single: Option<f32>,
    /// The same for the multi-turn episodes.
    pub success_multi: Option<f32>,
    /// Mean value loss.
    pub value_loss: f32,
    /// Mean policy entropy (nats).
    pub entropy: f32,
    /// KL divergence from the base to the current policy on the update's states.
    pub kl_to_base: Option<f32>,
    /// A critic warm-up update (the policy did not move).
    pub value_only: bool,
}

/// One point of the pool-size scaling study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// Number of random pool environments trained on.
    pub pool_size: usize,
    /// Seed index.
    pub seed: u32,
    /// The run (under the name of [`crate::model::SCALING_RECIPE`], at this size).
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

/// What the measured-transfer stage measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TransferRuns {
    /// The base's success on every target.
    pub base: BTreeMap<EnvId, f32>,
    /// One per probe.
    pub runs: Vec<ProbeRun>,
    /// Per `(source, target)`: the cosine of the base's gradients at H4.
    pub cosines: Vec<(EnvId, EnvId, f32)>,
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

/// z for a two-sided 95% interval plus z for 80% power: a true difference of `MDE_Z x SE`
/// would be detected four times in five.
pub const MDE_Z: f64 = 1.96 + 0.8416;

/// A statistic with its 95% percentile-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The statistic on the data as observed.
    pub estimate: f64,
    /// 2.5th percentile of the replicates.
    pub lo: f64,
    /// 97.5th percentile of the replicates.
    pub hi: f64,
    /// Standard deviation of the replicates (the statistic's standard error).
    pub se: f64,
    /// Two-sided bootstrap p-value of "the statistic is zero": twice the smaller share of
    /// replicates on either side of zero (at least one replicate's worth).
    #[serde(default = "one")]
    pub p: f64,
}

fn one() -> f64 {
    1.0
}

impl Interval {
    /// The smallest true difference this run would detect with 80% power at the 5% level.
    pub fn mde(&self) -> f64 {
        MDE_Z * self.se
    }

    /// The interval scaled (e.g. to percentage points).
    pub fn scaled(&self, k: f64) -> Self {
        let (a, b) = (self.lo * k, self.hi * k);
        Self {
            estimate: self.estimate * k,
            lo: a.min(b),
            hi: a.max(b),
            se: self.se * k.abs(),
            p: self.p,
        }
    }
}

/// What a run says of a claim "the difference is positive": supported, refuted, equivalent
/// (no difference beyond a margin named before the run) or inconclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The difference is positive.
    Supported,
    /// The difference is negative.
    Refuted,
    /// Neither a difference nor its absence shown: within noise.
    Inconclusive,
    /// No difference beyond the equivalence margin (two one-sided tests): shown absent.
    Equivalent,
}

impl Verdict {
    /// The verdict on "positive" from an interval.
    pub fn of(i: &Interval) -> Self {
        if i.lo > 0.0 {
            Verdict::Supported
        } else if i.hi < 0.0 {
            Verdict::Refuted
        } else {
            Verdict::Inconclusive
        }
    }

    /// The verdict from (multiplicity-adjusted) p-values at the 5% level: a difference when
    /// `p` says so (its sign from the estimate), else no difference beyond the margin when the
    /// equivalence p-value says so, else inconclusive.
    pub fn of_tests(estimate: f64, p: f64, p_equivalence: Option<f64>) -> Self {
        match Self::of_p(estimate, p) {
            Verdict::Inconclusive if p_equivalence.is_some_and(|q| q < 0.05) => Verdict::Equivalent,
            v => v,
        }
    }

    /// The verdict on "positive" from a (multiplicity-adjusted) p-value and the estimate's
    /// sign, at the 5% level.
    pub fn of_p(estimate: f64, p: f64) -> Self {
        if p >= 0.05 {
            Verdict::Inconclusive
        } else if estimate > 0.0 {
            Verdict::Supported
        } else {
            Verdict::Refuted
        }
    }

    /// The word in tables.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive (within noise)",
            Verdict::Equivalent => "equivalent (no difference beyond the margin)",
        }
    }
}

/// One arm's scores and gains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    /// The arm.
    pub arm: Arm,
    /// Seeds run.
    pub seeds: usize,
    /// Interquartile mean of its (seed, pool environment) scores, points, with a stratified
    /// bootstrap interval (seeds resampled within each environment), as rliable computes it.
    #[serde(default)]
    pub iqm: Option<Interval>,
    /// ST (ID), MT (ID), ST (OOD), MT (OOD) in points, `None` where a column is empty.
    pub columns: [Option<Interval>; 4],
    /// Whole-pool ID score, points.
    pub id: Interval,
    /// Held-out score, points.
    pub ood: Option<Interval>,
    /// Score on the environments the arm trained on, points (mean over seeds).
    pub trained_id: Option<f64>,
    /// Where the arm's gain over the base comes from: on its trained environments, on the
    /// untrained environments of its trained families, on the pool's untrained families and
    /// on the held-out set (points, two-level bootstrap over seeds and each seed's set).
    #[serde(default)]
    pub transfer: Option<TransferSplit>,
    /// Whole-pool ID score at each evaluated scale alone (`EvalConfig::scales` order), with
    /// its gain over the base there, points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_scale: Vec<ScaleScore>,
    /// Whole-pool ID minus base, points.
    pub delta_id: Option<Interval>,
    /// Held-out minus base, points.
    pub delta_ood: Option<Interval>,
    /// Pooled relative gain on the pool: mean(arm) / mean(base) - 1, percent.
    pub pooled_gain_id: Option<Interval>,
    /// Pooled relative gain on the held-out set, percent.
    pub pooled_gain_ood: Option<Interval>,
    /// The paper's statistic: mean over the four columns of (arm - base) / base, skipping
    /// columns where the base scores 0; mean over seeds, percent.
    pub paper_gain: Option<f64>,
}

/// An arm's whole-pool score at one evaluated scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleScore {
    /// Which scale (each env's min, mid or max).
    pub scale: envdist_trainer::ScaleChoice,
    /// Whole-pool ID score there, points.
    pub id: Interval,
    /// Its gain over the base there, points (`None` for the base).
    pub delta_id: Option<Interval>,
}

/// An arm's gain over the base, split by how far each environment is from what it trained on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferSplit {
    /// (a) On the environments it trained on.
    pub trained: Option<Interval>,
    /// (b) On untrained pool environments of the families it trained on.
    pub same_family: Option<Interval>,
    /// (c) On pool environments of families it did not train on.
    pub other_families: Option<Interval>,
    /// (d) On the held-out (OOD) environments.
    pub ood: Option<Interval>,
}

/// A comparison of two arms split by where they trained, seed by seed (points, crossed
/// bootstrap as [`TransferSplit`]'s): a k-subset arm and a whole-pool arm differ in what they
/// trained on, and the whole-pool headline mixes the two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimSplit {
    /// On the pool environments either arm trained on.
    pub either_trained: Option<Interval>,
    /// On the pool environments neither arm trained on.
    pub neither_trained: Option<Interval>,
    /// On the held-out (OOD) environments.
    pub ood: Option<Interval>,
}

/// One claim of the paper, as tested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Which claim.
    pub id: ClaimId,
    /// Primary (named before the run, family-wise error controlled by Holm's method) or
    /// exploratory (its own 95% interval; a verdict to read as a lead, not a finding).
    #[serde(default)]
    pub primary: bool,
    /// Holm-adjusted p-value over the primary claims (primary claims only).
    #[serde(default)]
    pub p_holm: Option<f64>,
    /// The paper's statement.
    pub statement: String,
    /// What was compared (`a − b` on the whole pool, unless said otherwise).
    pub comparison: String,
    /// The difference in points with its interval (positive = the paper's direction).
    pub difference: Interval,
    /// What the run says.
    pub verdict: Verdict,
    /// The smallest true difference the run would detect four times in five at the level its
    /// verdict uses (points): Holm's first step, α / m, for a primary claim; 5% for an
    /// exploratory one ([`Claim::mde_z`] standard errors).
    pub mde: f64,
    /// The multiple of the standard error `mde` is.
    #[serde(default)]
    pub mde_z: f64,
    /// p-value of "the difference lies within ±`analysis.equivalence_margin`" by two one-sided
    /// tests on the bootstrap replicates (raw).
    #[serde(default)]
    pub p_equivalence: Option<f64>,
    /// The same, Holm-adjusted over the primary claims (primary claims only).
    #[serde(default)]
    pub p_equivalence_holm: Option<f64>,
    /// Where the difference's variance comes from (seeds, environments, the rest), and what
    /// it would take to detect `analysis.detect_points` at the verdict's level.
    #[serde(default)]
    pub variance: Option<VarianceComponents>,
    /// The same difference on the envs either arm trained on, those neither did, and OOD
    /// (claims of two arms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<ClaimSplit>,
}

/// The variance of a paired difference `d[seed][env]` split by least squares on the additive
/// model `d = μ + a_seed + b_env + ε` (points²), and the seeds or environments that would
/// bring its detection limit down to a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarianceComponents {
    /// Seeds and environments of the table.
    pub seeds: usize,
    /// Environments of the table.
    pub envs: usize,
    /// Variance between training seeds (method of moments, at least 0).
    pub seed: f64,
    /// Variance between environments (at least 0).
    pub env: f64,
    /// Residual variance (seed × environment interaction and instance noise).
    pub residual: f64,
    /// The standard error of the mean difference these components imply.
    pub se: f64,
    /// The difference (points) the target is about.
    pub target: f64,
    /// Seeds needed (environments as now) to detect `target` at the verdict's level with 80%
    /// power; `None` when more seeds alone cannot (the environment term stays).
    pub seeds_needed: Option<usize>,
    /// Environments needed (seeds as now); `None` when more environments alone cannot.
    pub envs_needed: Option<usize>,
}

/// A difference in points between two things, for the comparison tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What is compared.
    pub label: String,
    /// Difference in points.
    pub difference: Interval,
    /// Verdict on "positive".
    pub verdict: Verdict,
}

/// Everything the report prints beyond raw scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Per arm.
    pub arms: Vec<ArmSummary>,
    /// The paper's claims.
    pub claims: Vec<Claim>,
    /// Every trained arm ranked by its whole-pool gain over the base.
    pub ranking: Vec<(Arm, Interval)>,
    /// Each rival and AES variant against AES+HDC.
    pub versus_aes_hdc: Vec<Comparison>,
    /// AES minus random-k on the main pool and on the control pool, and the difference.
    pub control: Vec<Comparison>,
    /// Hint styles: the study's style minus the other, both AES+HDC, at H4.
    pub hints: Option<Comparison>,
    /// Online re-selection minus one-shot AES+HDC.
    pub online: Option<Comparison>,
    /// Pool size -> whole-pool score (points) with interval.
    pub scaling: Vec<(usize, Interval)>,
    /// Base above the constant-answer baseline on single-turn pool environments (points).
    pub base_over_constant: Option<Interval>,
    /// The measured-transfer stage: transfer by relation, and how well the base's gradient
    /// cosines predict it.
    #[serde(default)]
    pub transfer: Option<TransferAnalysis>,
    /// For each claim of two trained arms: the probability that a run of `a` beats a run of
    /// `b` on an environment of the pool (rliable's probability of improvement: per
    /// environment the share of run pairs with `a > b`, ties a half, averaged over
    /// environments), stratified bootstrap interval.
    #[serde(default)]
    pub probability_of_improvement: Vec<Improvement>,
    /// Per arm, the share of its (seed, pool environment) scores above each threshold τ
    /// (rliable's performance profile).
    #[serde(default)]
    pub performance_profiles: Vec<PerformanceProfile>,
}

/// rliable's probability of improvement of `a` over `b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Improvement {
    /// The claim whose arms these are.
    pub claim: ClaimId,
    /// The better arm under the claim.
    pub a: Arm,
    /// The other.
    pub b: Arm,
    /// P(a > b), in [0, 1], with its interval (`p`: of "0.5", no difference).
    pub probability: Interval,
}

/// rliable's performance profile of one arm: `(τ, share of scores > τ)`, τ in points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerformanceProfile {
    /// The arm.
    pub arm: Arm,
    /// `(τ, share)` for τ = 0, 5, ..., 100 points.
    pub points: Vec<(f64, f64)>,
}

/// What the measured-transfer stage says (points; intervals over the probes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferAnalysis {
    /// Probes (fine-tunes) measured.
    pub probes: usize,
    /// Mean transfer to each relation (`itself`: what fine-tuning did to its own source).
    pub by_relation: Vec<(Relation, Interval)>,
    /// Transfer to the twin minus transfer to the same-family non-twin, paired by probe: the
    /// designed conflict's interference (negative = twins interfere).
    pub twin_minus_same_family: Option<Interval>,
    /// Spearman rank correlation (average ranks; transfers rounded to 1e-6 points so that
    /// float noise breaks no tie) of the base's gradient cosine with the measured transfer,
    /// over every (source, other target) pair with a known cosine; interval by resampling
    /// probes (a probe's pairs share its fine-tune), not pairs. Positive = the cosine
    /// predicts transfer.
    pub rank_correlation: Option<Interval>,
    /// Pairs in the correlation.
    pub pairs: usize,
    /// Pairs left out because their cosine is exactly 0: one of the two gradients is zero
    /// (the base never solved that env in any sampled episode), so the cosine is unknown.
    #[serde(default)]
    pub unknown_cosine_pairs: usize,
    /// Pairs (in the correlation) whose target the base never solves: transfer there can only
    /// be zero or positive, so interference cannot show.
    #[serde(default)]
    pub floor_pairs: usize,
    /// The correlation without the floor pairs (probe-level interval).
    #[serde(default)]
    pub rank_correlation_above_floor: Option<Interval>,
}

/// How a target relates to its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// The source itself (what fine-tuning on it did to it).
    Itself,
    /// Its designed conflict twin (the rule inverted: mirrored controls, negated goal).
    Twin,
    /// Another variant of the same family (a theme, an observation change).
    SameFamily,
    /// An environment of another family.
    OtherFamily,
}

impl Relation {
    /// The relations between distinct environments, in report order.
    pub const BETWEEN: [Relation; 3] =
        [Relation::Twin, Relation::SameFamily, Relation::OtherFamily];

    /// The word in tables.
    pub fn name(self) -> &'static str {
        match self {
            Relation::Itself => "itself",
            Relation::Twin => "twin",
            Relation::SameFamily => "same family",
            Relation::OtherFamily => "other family",
        }
    }
}

/// One fine-tune: its source and the targets it is measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The environment fine-tuned on.
    pub source: EnvId,
    /// `(target, relation)`, the source itself first.
    pub targets: Vec<(EnvId, Relation)>,
}

/// One fine-tune's scores on its targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRun {
    /// The probe.
    pub probe: Probe,
    /// Success on each target after fine-tuning (mean over the evaluated scales and
    /// instances), in the probe's target order.
    pub after: Vec<f32>,
    /// Training success of the last update that ended episodes.
    pub final_train_success: Option<f32>,
}

/// What the precondition stages measured, before any arm trains: the base at every harness
/// level, and single-environment fine-tunes (probes) evaluated on every environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreconditionRuns {
    /// The base's greedy success on every pool environment at each harness level (the arms'
    /// evaluation instances, mean over the evaluated scales).
    pub base_by_harness: BTreeMap<HarnessLevel, BTreeMap<EnvId, f32>>,
    /// Every environment the probes are evaluated on (pool, then OOD); the order of
    /// [`PreconditionRuns::base`] and of every probe's `after`.
    pub targets: Vec<EnvId>,
    /// The base's success on each target under the probes' evaluation.
    pub base: Vec<f32>,
    /// The transfer-matrix probes, one per source environment.
    pub matrix: Vec<MatrixProbe>,
    /// The harness probes: sources fine-tuned at H0–H2 only, evaluated at H4 on themselves.
    pub harness: Vec<HarnessProbe>,
}

/// One probe of the transfer matrix: the base fine-tuned on `source` alone at H4 (the arms'
/// RL settings, the `transfer` section's steps), evaluated on every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixProbe {
    /// The environment fine-tuned on.
    pub source: EnvId,
    /// The stratum it was drawn from (by its mean profile overlap with the other pool
    /// environments, lowest first).
    pub stratum: usize,
    /// Success on each target after fine-tuning ([`PreconditionRuns::targets`] order).
    pub after: Vec<f32>,
    /// Per target: the cosine of the source's and the target's meta-ability coverage (pool
    /// targets; `None` where either has no profile, OOD envs among them).
    pub profile_overlap: Vec<Option<f32>>,
    /// Per target: the cosine of the base's H4 gradients (`None` where unknown: a target
    /// outside the gradients, or a zero gradient on either side).
    pub gradient_cosine: Vec<Option<f32>>,
    /// Training success of the last update that ended episodes.
    pub final_train_success: Option<f32>,
}

/// One harness probe: the base fine-tuned on `source` with the harness at H0–H2 only (the
/// same steps as a matrix probe), evaluated at H4 on `source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessProbe {
    /// The environment fine-tuned on.
    pub source: EnvId,
    /// Success at H4 on the source after fine-tuning.
    pub after: f32,
    /// Training success of the last update that ended episodes (at H0–H2).
    pub final_train_success: Option<f32>,
}

/// A statistic over probes, with its probe-level bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeEstimate {
    /// The statistic on the probes as observed.
    pub estimate: f64,
    /// 2.5th percentile of the replicates (probes resampled).
    pub lo: f64,
    /// 97.5th percentile of the replicates.
    pub hi: f64,
    /// Probes it is computed over.
    pub probes: usize,
    /// Pairs (source, target) it is computed over, where it is a correlation over pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
}

/// Success points of single- and multi-turn environments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TurnScores {
    /// Mean over single-turn environments.
    pub st: Option<f64>,
    /// Mean over multi-turn environments.
    pub mt: Option<f64>,
}

/// An HDC arm's schedule summed over its seeds (from each run's [`CurriculumSummary`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HdcReach {
    /// Runs (seeds) summed.
    pub runs: usize,
    /// Share of the training episodes played below H4.
    pub below_h4: f64,
    /// Stage advances earned at the competence gate.
    pub earned_advances: u32,
    /// Stage advances in all (earned plus forced by the stage cap).
    pub advances: u32,
    /// Environment-runs still below H4 at the end, of `envs` in all.
    pub below_h4_at_end: u32,
    /// Environment-runs in all.
    pub envs: u32,
}

/// Whether one of the paper's mechanisms can act in this testbed, as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Testability {
    /// The mechanism.
    pub mechanism: String,
    /// The primary claims that test it.
    pub claims: Vec<ClaimId>,
    /// The precondition and its target, in words.
    pub precondition: String,
    /// Whether every measured precondition meets its target (`None`: not measured).
    pub met: Option<bool>,
}

/// The testbed's preconditions, measured before the comparisons they license: does the
/// harness scaffold, does RL keep what it does not train, does transfer follow the profiles
/// and the gradients. Points are success points; intervals resample probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preconditions {
    /// The base's greedy success on the pool at each harness level, points.
    pub base_by_harness: BTreeMap<HarnessLevel, TurnScores>,
    /// H4 success on the source gained by fine-tuning at H0–H2 only, over the base.
    pub harness_transfer: Option<ProbeEstimate>,
    /// The same sources' H4 gain from the same steps at H4 (the matrix probes), for scale.
    pub harness_transfer_h4: Option<ProbeEstimate>,
    /// Spearman of profile overlap with measured transfer over (source, other pool target).
    pub transfer_vs_profile: Option<ProbeEstimate>,
    /// Spearman of the base's gradient cosine with measured transfer over the same pairs
    /// (those with a known cosine).
    pub transfer_vs_gradient: Option<ProbeEstimate>,
    /// Spearman of family membership (1 for a target of the source's family, else 0) with
    /// measured transfer, over `transfer_vs_profile`'s pairs: what an overlap that knew each
    /// environment's family and nothing else would reach. A family's environments share every
    /// ability, so this is the pool's ceiling for an ability overlap unless abilities also
    /// carry across families.
    #[serde(default)]
    pub transfer_vs_family: Option<ProbeEstimate>,
    /// A probe's mean transfer to the untrained environments of its own family, points.
    pub probe_same_family: Option<ProbeEstimate>,
    /// A probe's mean transfer to pool environments of other families, points.
    pub probe_other_families: Option<ProbeEstimate>,
    /// A probe's mean transfer to the held-out environments, points.
    pub probe_ood: Option<ProbeEstimate>,
    /// The AES arms' gain split by distance from what they trained on (the outcome check of
    /// "RL keeps what it does not train").
    pub rl_keeps: Vec<(Arm, TransferSplit)>,
    /// Where each HDC arm's schedule went, over its seeds: whether the curriculum itself acts
    /// (its competence gates, not its stage cap, moving the environments up the harness).
    #[serde(default)]
    pub hdc_reach: Vec<(Arm, HdcReach)>,
    /// Which mechanisms this testbed can test, by the measurements above.
    pub testable: Vec<Testability>,
}
