//! The primary claims' family-wise size and power, simulated with each claim's own fitted
//! variance components (seed, family, environment within family, residual), analysed as the
//! record is (the two-stage bootstrap, Holm over the primary claims), at the fitted seed
//! variance and at its 80% upper bound: a seed variance estimated from three seeds may be
//! several times larger than its estimate, and the size the record states must hold there too.

use envdist_core::Rng;

use super::context::Ctx;
use crate::model::{Claim, Precision};
use crate::stats::clustered::{Clusters, clustered_replicates};
use crate::stats::mean_of;
use crate::stats::precision::variance_upper_bound;

/// Bootstrap replicates in each simulated analysis: enough to place a p-value against 0.05/7
/// for a study, not to report it.
const REPLICATES: u32 = 400;

/// Simulate the primary claims of `claims` (each with its mixed-model components); `None`
/// without simulations configured, below two seeds, or when a primary claim has no fit.
pub(super) fn simulate(ctx: &Ctx<'_>, claims: &[Claim]) -> Option<Precision> {
    let analysis = &ctx.results.config.analysis;
    let seeds = ctx.results.config.seeds as usize;
    if analysis.simulations == 0 || seeds < 2 {
        return None;
    }
    let primary: Vec<&Claim> = claims.iter().filter(|c| c.primary).collect();
    let fitted: Vec<[f64; 4]> = primary
        .iter()
        .filter_map(|c| c.mixed.map(|m| m.components))
        .collect();
    if fitted.is_empty() || fitted.len() != primary.len() {
        return None;
    }
    let upper: Vec<[f64; 4]> = fitted
        .iter()
        .map(|c| {
            let mut u = *c;
            u[0] = variance_upper_bound(c[0], seeds - 1, 0.8);
            u
        })
        .collect();
    let units = ctx.units(&ctx.results.envs.pool);
    let sims = analysis.simulations;
    let effect = analysis.detect_points;
    let study = |components: &[[f64; 4]], mu: f64, stream: u64| {
        let mut rng = Rng::derive(ctx.seed ^ 0x5349_4d55, stream);
        let (mut any_false, mut detected, mut claimed) = (0u32, 0u32, 0u32);
        for sim in 0..sims {
            let p: Vec<(f64, f64)> = components
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let d = table(&mut rng, c, mu, seeds, &units);
                    let seed = rng.next_u64() ^ ((sim as u64) << 8 | k as u64);
                    let reps = clustered_replicates(seeds, &units, REPLICATES, seed, |s, u| {
                        mean_of(&d, s, u)
                    });
                    (reps.estimate, reps.interval().p)
                })
                .collect();
            let adjusted = crate::stats::holm(&p.iter().map(|x| x.1).collect::<Vec<_>>());
            let rejected = p.iter().zip(&adjusted).filter(|(_, q)| **q < 0.05);
            if mu == 0.0 {
                any_false += u32::from(rejected.count() > 0);
            } else {
                detected += rejected
                    .filter(|((estimate, _), _)| *estimate > 0.0)
                    .count() as u32;
                claimed += p.len() as u32;
            }
        }
        if mu == 0.0 {
            f64::from(any_false) / f64::from(sims)
        } else {
            f64::from(detected) / f64::from(claimed.max(1))
        }
    };
    Some(Precision {
        simulations: sims,
        replicates: REPLICATES,
        effect,
        size: study(&fitted, 0.0, 1),
        size_at_upper: study(&upper, 0.0, 2),
        power: study(&fitted, effect, 3),
        power_at_upper: study(&upper, effect, 4),
        mc_error: (0.25 / f64::from(sims)).sqrt(),
    })
}

/// One simulated paired-difference table `[seed][env]`, points: `mu` plus a seed effect, a
/// family effect, an environment effect and noise, with variances `components` (seed,
/// family, environment, residual) over the families of `units`.
fn table(rng: &mut Rng, c: &[f64; 4], mu: f64, seeds: usize, units: &Clusters) -> Vec<Vec<f64>> {
    let sd = c.map(|v| v.max(0.0).sqrt());
    let mut env_effect = vec![0.0; units.units()];
    for k in 0..units.count() {
        let family = sd[1] * f64::from(rng.normal());
        for &e in units.members(k) {
            env_effect[e] = family + sd[2] * f64::from(rng.normal());
        }
    }
    (0..seeds)
        .map(|_| {
            let seed = sd[0] * f64::from(rng.normal());
            env_effect
                .iter()
                .map(|b| mu + seed + b + sd[3] * f64::from(rng.normal()))
                .collect()
        })
        .collect()
}
