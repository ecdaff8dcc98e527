//! What a world looks like to an experimenter who measures it the way the cpu record
//! measured the testbed: the base by harness level and scale, single-environment probes
//! (their own gain at H4 and from the harness, what they move in the family and outside,
//! twins), the rank correlations of profile overlap, family and gradient cosine with the
//! probes' measured transfer, the gradients' split-half reliability, and how much of AES's
//! pick a second and third draw of the gradients keep.

use envdist_core::HarnessLevel;
use envdist_profiling::coverage_cosine;
use envdist_world::{
    Learner, Probe, ProbeLevels, SplitHalf, World, measured_transfer, observe_gradients, split_half,
};
use serde::{Deserialize, Serialize};

use super::WorldMapConfig;
use super::arms::{aes_selections, probe};
use super::observed::Observed;
use crate::error::Result;

/// The independent gradient draws whose AES selections the agreement statistics compare (the
/// record's side takes its first this many seeds' selections).
pub(super) const GRADIENT_DRAWS: usize = 3;

/// One world's measurable description (points where a success or a transfer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Descriptors {
    /// The base's whole-pool success at H4 (the evaluation's scales).
    pub base: f32,
    /// The base's whole-pool success at H0, H1, H2, H3, H4.
    pub base_by_level: Vec<f32>,
    /// The base's whole-pool success at H4 at the smallest, middle and largest scale.
    pub base_by_scale: Vec<f32>,
    /// A probe's gain on its own source (mean over sources): the same steps at H4.
    pub own_h4: f32,
    /// A probe's H4 gain on its own source from training at H0-H2 only (harness transfer).
    pub own_scaffolded: f32,
    /// A probe's mean transfer to its family's other environments.
    pub same_family: f32,
    /// A probe's mean transfer to other families' environments.
    pub other_families: f32,
    /// Transfer to the twin minus to the family's non-twins, paired by probe, over the
    /// probes of twin pairs (`None` without twins).
    pub twin_minus_same_family: Option<f32>,
    /// Cross-family pairs whose annotated profiles share an ability minus those sharing
    /// none: mean transfer.
    pub shared_ability_gap: Option<f32>,
    /// Spearman of profile overlap (coverage cosine) with measured transfer, over every
    /// (source, other target) pair.
    pub profile_spearman: Option<f32>,
    /// Spearman of "same family" (1/0) with measured transfer.
    pub family_spearman: Option<f32>,
    /// Spearman of the observed gradients' cosine with measured transfer (pairs with two
    /// non-zero rows).
    pub gradient_spearman: Option<f32>,
    /// The observed gradients' split-half reliability.
    pub split_half: SplitHalf,
    /// Share of the pool whose observed gradient is exactly zero.
    pub zero_gradient: f32,
    /// Observed gradient cosines: mean over twin pairs, over the families' other pairs, and
    /// the standard deviation over all pairs (core's `PairSummary`).
    pub gradient_cosines: envdist_core::PairSummary,
    /// Share of AES's picks common to the selections from three independent gradient draws.
    pub aes_agreement: f32,
    /// The same for AES without its conflict term.
    pub no_conflict_agreement: f32,
    /// Share of `random-k+hdc`'s episodes below H4 (`None` where it did not run).
    pub hdc_below_h4: Option<f32>,
    /// Whether the oracle enumerated every subset.
    pub oracle_exact: bool,
}

fn mean(v: &[f32]) -> Option<f32> {
    (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32)
}

fn spearman(pairs: &[(f32, f32)]) -> Option<f32> {
    let (x, y): (Vec<f32>, Vec<f32>) = pairs.iter().copied().unzip();
    envdist_core::rank::spearman(&x, &y).map(|r| r as f32)
}

/// The base's pool mean at `level` over the evaluation scales, points.
fn base_at(world: &World, base: &Learner, level: HarnessLevel, scales: &[u32]) -> f32 {
    let n = (world.len() * scales.len()) as f32;
    100.0
        * (0..world.len())
            .flat_map(|e| scales.iter().map(move |&s| (e, s)))
            .map(|(e, s)| base.success(world, e, level, s))
            .sum::<f32>()
        / n
}

/// Describe the observed world as seen through its profiles and gradients.
pub fn describe(cfg: &WorldMapConfig, observed: &Observed) -> Result<Descriptors> {
    let Observed {
        world,
        base,
        profiles,
        grads,
        seed,
    } = observed;
    let seed = *seed;
    let n = world.len();
    let sources: Vec<usize> = (0..n).collect();
    let h4 = probe(cfg);
    let exact = h4.transfer(world, base, &sources);
    let scaffolded = Probe {
        levels: ProbeLevels::Scaffolded,
        ..h4
    }
    .transfer(world, base, &sources);
    let noisy = measured_transfer(world, base, &h4, &sources, cfg.probe_instances, seed);
    let (mut same, mut other, mut twin_gap) = (Vec::new(), Vec::new(), Vec::new());
    let (mut sharing, mut apart) = (Vec::new(), Vec::new());
    let (mut by_profile, mut by_family, mut by_gradient) = (Vec::new(), Vec::new(), Vec::new());
    let zero: Vec<bool> = (0..n)
        .map(|e| grads.row(e).iter().all(|v| *v == 0.0))
        .collect();
    for s in 0..n {
        let mut siblings = Vec::new();
        let mut twin = None;
        for t in (0..n).filter(|&t| t != s) {
            let x = exact[s][t];
            let overlap = coverage_cosine(&profiles.profiles[s], &profiles.profiles[t]);
            let y = ((noisy[s][t] as f64 * 1e6).round() / 1e6) as f32;
            by_profile.push((overlap, y));
            by_family.push((world.same_family(s, t) as u8 as f32, y));
            if !zero[s] && !zero[t] {
                by_gradient.push((grads.cosine(s, t), y));
            }
            if world.same_family(s, t) {
                same.push(x);
                if world.twins(s, t) {
                    twin = Some(x);
                } else {
                    siblings.push(x);
                }
            } else {
                other.push(x);
                if overlap > 0.0 {
                    sharing.push(x);
                } else {
                    apart.push(x);
                }
            }
        }
        if let (Some(t), Some(m)) = (twin, mean(&siblings)) {
            twin_gap.push(t - m);
        }
    }
    let scales = world.eval_scales();
    let base_by_level = envdist_core::HarnessLevel::ALL
        .iter()
        .map(|&h| base_at(world, base, h, &scales))
        .collect();
    let base_by_scale = scales
        .iter()
        .map(|&s| base_at(world, base, HarnessLevel::H4, &[s]))
        .collect();
    let mut agreement = Vec::new();
    for g in 0..GRADIENT_DRAWS as u64 {
        let observed;
        let gs = if g == 0 {
            grads
        } else {
            observed = observe_gradients(world, base, seed.wrapping_add(g << 32));
            &observed
        };
        agreement.push(aes_selections(world, profiles, gs, cfg.k, seed)?);
    }
    let common = |which: usize| {
        let sets: Vec<&Vec<envdist_core::EnvId>> =
            agreement.iter().map(|s| &s[which].env_ids).collect();
        let shared = sets[0]
            .iter()
            .filter(|e| sets[1..].iter().all(|s| s.contains(e)))
            .count();
        shared as f32 / sets[0].len().max(1) as f32
    };
    let twins: Vec<(envdist_core::EnvId, envdist_core::EnvId)> = world
        .specs()
        .iter()
        .filter_map(|s| Some((s.id.clone(), s.conflict_twin.clone()?)))
        .collect();
    let gradient_cosines = grads.pair_summary(&twins, |id| {
        world.index_of(id).map(|e| world.specs()[e].family.clone())
    });
    Ok(Descriptors {
        base: 100.0 * base.score(world),
        base_by_level,
        base_by_scale,
        own_h4: mean(&(0..n).map(|s| exact[s][s]).collect::<Vec<_>>()).unwrap_or(0.0),
        own_scaffolded: mean(&(0..n).map(|s| scaffolded[s][s]).collect::<Vec<_>>()).unwrap_or(0.0),
        same_family: mean(&same).unwrap_or(0.0),
        other_families: mean(&other).unwrap_or(0.0),
        twin_minus_same_family: mean(&twin_gap),
        shared_ability_gap: mean(&sharing).zip(mean(&apart)).map(|(a, b)| a - b),
        profile_spearman: spearman(&by_profile),
        family_spearman: spearman(&by_family),
        gradient_spearman: spearman(&by_gradient),
        split_half: split_half(world, base, seed),
        zero_gradient: zero.iter().filter(|z| **z).count() as f32 / n as f32,
        gradient_cosines,
        aes_agreement: common(0),
        no_conflict_agreement: common(1),
        hdc_below_h4: None,
        oracle_exact: false,
    })
}
