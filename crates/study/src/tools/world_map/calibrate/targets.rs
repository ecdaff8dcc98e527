//! The record's numbers the calibration fits, and those the world then predicts, read off a
//! study's `results.json` (and its pool's `profiles.json`).

use serde::{Deserialize, Serialize};

use envdist_core::HarnessLevel;

use super::super::arms::{RECORD_CLAIMS, names, record_arms, split_arms};
use super::super::measure::GRADIENT_DRAWS;
use crate::error::{Context, Result};
use crate::model::{EnvSource, Interval, Results};

/// Cross-family pairs whose profiles share a task ability minus pairs sharing nothing, points,
/// from the record's `preconditions.transfer_by_sharing` (the two looks weighted by their
/// pairs); `None` for a record without it.
fn shared_ability_gap(p: &crate::model::Preconditions) -> Option<f32> {
    let mean_of = |what: &str| {
        let (mut sum, mut n) = (0.0, 0usize);
        for x in p.transfer_by_sharing.iter().filter(|x| x.shared == what) {
            if let Some(e) = x.transfer {
                let k = e.pairs.unwrap_or(0);
                sum += e.estimate * k as f64;
                n += k;
            }
        }
        (n > 0).then(|| sum / n as f64)
    };
    Some((mean_of("a task ability")? - mean_of("nothing")?) as f32)
}

/// The record's numbers: those the calibration fits and those the world then predicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Where they come from.
    pub source: String,
    /// The base's whole-pool success at H4, smallest / middle / largest scale, points.
    pub base_by_scale: Vec<f32>,
    /// The base's whole-pool H0 minus H4 success, points (single- and multi-turn weighted by
    /// their share of the pool).
    pub scaffold_gap: f32,
    /// A probe's own gain at H4, points (`harness_transfer_h4`).
    pub own_h4: f32,
    /// A probe's own H4 gain from H0-H2 only (`harness_transfer`).
    pub own_scaffolded: f32,
    /// A probe's transfer to its family (`probe_same_family`).
    pub same_family: f32,
    /// A probe's transfer to other families (`probe_other_families`).
    pub other_families: f32,
    /// Cross-family pairs sharing an ability minus sharing none (`preconditions.
    /// transfer_by_sharing`; predicted, where the record has it).
    #[serde(default)]
    pub shared_ability_gap: Option<f32>,
    /// Tags a profile holds beyond its family's common set, per common tag (from the record's
    /// profiles, where given): the world's `annotator_noise`.
    pub invented_tags: Option<f32>,
    /// `transfer_vs_profile`.
    pub profile_spearman: f32,
    /// The designed twins' transfer minus their family's (`analysis.transfer`).
    pub twin_minus_same_family: f32,
    /// `facts.gradient_split_half`.
    pub split_half: f32,
    /// `transfer_vs_family` (predicted, not fitted).
    pub family_spearman: f32,
    /// `transfer_vs_gradient`.
    pub gradient_spearman: f32,
    /// Share of AES's picks common to the first `GRADIENT_DRAWS` seeds' selections
    /// (predicted).
    pub aes_agreement: f32,
    /// The same without the conflict term (predicted).
    pub no_conflict_agreement: f32,
    /// Share of the pool with an exactly zero gradient (never solved in the gradient's
    /// episodes).
    pub zero_gradient: f32,
    /// The base gradients' cosine statistics (`facts.gradients`; predicted).
    pub gradient_cosines: envdist_core::PairSummary,
    /// Share of `random-k+hdc`'s episodes below H4 (`hdc_reach`; predicted).
    pub hdc_below_h4: f32,
    /// Arms' whole-pool gains over the base and the primary comparisons, as the record has
    /// them (predicted).
    pub comparisons: Vec<(String, Interval)>,
    /// Arms' gains by where they trained (`analysis.arms[*].transfer`; predicted): (arm,
    /// part, interval), the parts `trained`, `same_family`, `other_families`.
    pub splits: Vec<(String, String, Interval)>,
    /// Designed twin pairs per pool environment (`facts.conflict_pairs / facts.pool_envs`):
    /// sets the world's `twin_fraction`.
    pub twin_pairs_per_env: f32,
}

fn need<T>(v: Option<T>, field: &str) -> Result<T> {
    v.with_context(|| format!("the record has no {field}"))
}

/// The comparisons of the record the world predicts: (name `a − b`, arm `a`, arm `b`): every
/// arm of [`RECORD_CLAIMS`] over the base, then each claim's pair.
pub fn comparisons() -> Vec<(String, String, String)> {
    let base = names().base;
    let over_base = record_arms().into_iter().map(|a| (a.name(), base));
    let claims = RECORD_CLAIMS
        .iter()
        .filter_map(|c| c.statement().1)
        .filter(|(_, b)| !b.is_base())
        .map(|(a, b)| (a.name(), b.name()));
    over_base
        .chain(claims)
        .map(|(a, b)| (format!("{a} − {b}"), a.to_string(), b.to_string()))
        .collect()
}

impl Targets {
    /// The targets in `record` (a study's `results.json`), named `source`, with the pool's
    /// `profiles` (its `profiles.json`) where there are some.
    pub fn from_record(
        record: &Results,
        source: &str,
        profiles: Option<&envdist_core::ProfileSet>,
    ) -> Result<Self> {
        let p = need(record.preconditions.as_ref(), "preconditions")?;
        let a = need(record.analysis.as_ref(), "analysis")?;
        let est = |v: Option<&crate::model::ProbeEstimate>, f: &str| -> Result<f32> {
            Ok(need(v, f)?.estimate as f32)
        };

        let base = need(a.arms.iter().find(|s| s.arm.is_base()), "base arm")?;
        let base_by_scale = base.by_scale.iter().map(|s| s.id.estimate as f32).collect();
        let pool = record.envs.pool.len().max(1) as f64;
        let st = record
            .envs
            .single_turn
            .iter()
            .filter(|e| record.envs.pool.contains(e))
            .count() as f64
            / pool;
        let level = |h: HarnessLevel| -> Result<f64> {
            let t = need(p.base_by_harness.get(&h), "base_by_harness")?;
            Ok(st * need(t.st, "base_by_harness.st")?
                + (1.0 - st) * need(t.mt, "base_by_harness.mt")?)
        };
        let transfer = need(a.transfer.as_ref(), "analysis.transfer")?;
        let agreement = |source: EnvSource| -> Option<f32> {
            let sets: Vec<&Vec<envdist_core::EnvId>> = record
                .selections
                .iter()
                .filter(|s| s.name.source == source)
                .map(|s| &s.envs)
                .take(GRADIENT_DRAWS)
                .collect();
            let first = sets.first()?;
            let common = first
                .iter()
                .filter(|e| sets[1..].iter().all(|s| s.contains(e)))
                .count();
            Some(common as f32 / first.len().max(1) as f32)
        };
        let split = split_arms();
        let mut splits = Vec::new();
        for s in a.arms.iter().filter(|s| split.contains(&s.arm.name())) {
            let Some(t) = s.transfer.as_ref() else {
                continue;
            };
            for (part, v) in [
                ("trained", t.trained),
                ("same_family", t.same_family),
                ("other_families", t.other_families),
            ] {
                if let Some(v) = v {
                    splits.push((s.arm.name().to_string(), part.to_string(), v));
                }
            }
        }
        let base_name = names().base;
        let mut compared = Vec::new();
        for (name, arm, minus) in comparisons() {
            let found = if minus == base_name {
                a.arms
                    .iter()
                    .find(|s| s.arm.name() == arm)
                    .and_then(|s| s.delta_id)
            } else {
                a.claims
                    .iter()
                    .find(|c| {
                        c.id.statement()
                            .1
                            .is_some_and(|(x, y)| x.name() == arm && y.name() == minus)
                    })
                    .map(|c| c.difference)
            };
            if let Some(d) = found {
                compared.push((name, d));
            }
        }
        Ok(Self {
            source: source.to_string(),
            base_by_scale,
            scaffold_gap: (level(HarnessLevel::H0)? - level(HarnessLevel::H4)?) as f32,
            own_h4: est(p.harness_transfer_h4.as_ref(), "harness_transfer_h4")?,
            own_scaffolded: est(p.harness_transfer.as_ref(), "harness_transfer")?,
            same_family: est(p.probe_same_family.as_ref(), "probe_same_family")?,
            other_families: est(p.probe_other_families.as_ref(), "probe_other_families")?,
            shared_ability_gap: shared_ability_gap(p),
            invented_tags: profiles.and_then(|p| invented_tags(p, &record.envs.family)),
            profile_spearman: est(p.transfer_vs_profile.as_ref(), "transfer_vs_profile")?,
            twin_minus_same_family: need(
                transfer.twin_minus_same_family,
                "analysis.transfer.twin_minus_same_family",
            )?
            .estimate as f32,
            split_half: need(
                record.facts.gradient_split_half,
                "facts.gradient_split_half",
            )?,
            family_spearman: est(p.transfer_vs_family.as_ref(), "transfer_vs_family")?,
            gradient_spearman: est(p.transfer_vs_gradient.as_ref(), "transfer_vs_gradient")?,
            aes_agreement: need(agreement(EnvSource::Aes), "aes selections")?,
            no_conflict_agreement: need(
                agreement(EnvSource::AesNoConflict),
                "aes-no-conflict selections",
            )?,
            zero_gradient: record.facts.zero_gradient_envs as f32
                / record.facts.pool_envs.max(1) as f32,
            gradient_cosines: need(record.facts.gradients.clone(), "facts.gradients")?,
            hdc_below_h4: need(
                p.hdc_reach
                    .iter()
                    .find(|(a, _)| a.name() == names().random_k_hdc),
                "hdc_reach of the random selection with HDC",
            )?
            .1
            .below_h4 as f32,
            comparisons: compared,
            splits,
            twin_pairs_per_env: record.facts.conflict_pairs as f32
                / record.facts.pool_envs.max(1) as f32,
        })
    }
}

/// Per profile, the tags outside its family's common set (the tags every member holds) per
/// common tag; the mean over profiles whose family has at least one common tag.
fn invented_tags(
    profiles: &envdist_core::ProfileSet,
    family: &std::collections::BTreeMap<envdist_core::EnvId, String>,
) -> Option<f32> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut members: BTreeMap<&str, Vec<BTreeSet<&str>>> = BTreeMap::new();
    for p in &profiles.profiles {
        let Some(f) = family.get(&p.env) else {
            continue;
        };
        let tags = p
            .coverage
            .iter()
            .filter(|(_, w)| **w > 0.0)
            .map(|(k, _)| k.as_str())
            .collect();
        members.entry(f.as_str()).or_default().push(tags);
    }
    let mut ratios = Vec::new();
    for sets in members.values() {
        let common: BTreeSet<&str> = sets.iter().skip(1).fold(sets[0].clone(), |acc, s| {
            acc.intersection(s).copied().collect()
        });
        if common.is_empty() {
            continue;
        }
        for s in sets {
            ratios.push(s.difference(&common).count() as f32 / common.len() as f32);
        }
    }
    (!ratios.is_empty()).then(|| ratios.iter().sum::<f32>() / ratios.len() as f32)
}
