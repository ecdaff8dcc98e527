//! The measured-transfer stage: what the conflict-pair probes measured, and its analysis.

use std::collections::BTreeMap;

use envdist_core::EnvId;
use serde::{Deserialize, Serialize};

use super::interval::Interval;

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
