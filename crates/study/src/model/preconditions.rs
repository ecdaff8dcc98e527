//! What the precondition stages measured, and the preconditions computed from it.

use std::collections::BTreeMap;

use envdist_core::{EnvId, HarnessLevel};
use serde::{Deserialize, Serialize};

use super::analysis::TransferSplit;
use super::arms::{Arm, ClaimId};

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

/// A statistic over probes, with its bootstrap interval: probes resampled, crossed (where the
/// statistic is over targets too) with the targets' families, each drawn family's targets
/// coming along.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeEstimate {
    /// The statistic on the probes as observed.
    pub estimate: f64,
    /// 2.5th percentile of the replicates.
    pub lo: f64,
    /// 97.5th percentile of the replicates.
    pub hi: f64,
    /// Probes it is computed over.
    pub probes: usize,
    /// Pairs (source, target) it is computed over, where it is a correlation over pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// Whether the interval resamples target families crossed with probes (else probes
    /// alone).
    #[serde(default)]
    pub crossed: bool,
    /// For a rank correlation: the largest value it could reach given its predictor's ties
    /// (a predictor ordered exactly as the transfer, ties broken arbitrarily).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// Cross-family transfer by what a pair's profiles share and whether it shares a palette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedTransfer {
    /// `a task ability`, `only an observation ability`, `nothing`, or `family` (a probe's own
    /// family, for scale).
    pub shared: String,
    /// Source and target draw with the same palette.
    pub same_look: bool,
    /// Mean transfer over the pairs, points (`None` without pairs).
    pub transfer: Option<ProbeEstimate>,
}

/// HDC's regime: where bare-pixel reward is scarce and the scaffold unlocks what bare
/// training cannot. Measured on the arms' evaluation instances and the harness probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HdcRegime {
    /// Pool environments at the H4 floor with H0 above it: base success at H4 below
    /// `floor_h4` points and at H0 at least `unlock_h0` points.
    pub floor_envs: Vec<EnvId>,
    /// The H4 ceiling of "at the floor", points.
    pub floor_h4: f64,
    /// The H0 success that counts as unlocked, points.
    pub unlock_h0: f64,
    /// Per HDC arm, the smallest share over its seeds of trained environments at the floor.
    pub share_by_arm: Vec<(Arm, f64)>,
    /// The share each HDC arm must hold in every seed.
    pub share_target: f64,
    /// On the harness probes whose source is a floor environment: H4 success after training
    /// at H0–H2 minus after the same steps at H4, paired by probe, points.
    pub scaffold_over_h4: Option<ProbeEstimate>,
    /// Probes that paired estimate needs.
    pub min_probes: usize,
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
    /// The preconditions not met (or not measured), each with what was measured, in a few
    /// words.
    #[serde(default)]
    pub short: String,
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
    /// Whether HDC's regime exists here (see [`HdcRegime`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdc_regime: Option<HdcRegime>,
    /// Spearman of the transfer-response cosine `aes-transfer` selects with (from the first
    /// `transfer.aes_transfer_probes` probes) with the transfer measured by the other probes,
    /// over (other probe's source, target) pairs: does measured conflict predict transfer it
    /// was not computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_vs_response: Option<ProbeEstimate>,
    /// A probe's transfer to other pool environments by what their profiles share and their
    /// look (empty without profiles).
    #[serde(default)]
    pub transfer_by_sharing: Vec<SharedTransfer>,
    /// Which mechanisms this testbed can test, by the measurements above.
    pub testable: Vec<Testability>,
}
