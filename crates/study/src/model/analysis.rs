//! The analysis computed from the runs: every arm's scores and gains, the claims with their verdicts, the comparisons.

use serde::{Deserialize, Serialize};

use super::arms::{Arm, ClaimId};
use super::interval::{Interval, Verdict};
use super::transfer::TransferAnalysis;

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
