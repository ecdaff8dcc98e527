//! The two-stage (cluster) bootstrap: environments are not independent draws but variants of
//! families, so a replicate resamples families with replacement, then environments with
//! replacement within each drawn family, crossed with training seeds. An environment-level
//! bootstrap treats 200 variants of 24 families as 200 independent draws and understates the
//! spread of any statistic whose units agree within a family (`power_tests` shows its
//! family-wise error exceeding the stated level when they do).

use envdist_core::Rng;

use super::{Replicates, mean_of};

/// Units (environments) grouped in clusters (families): what a replicate resamples.
#[derive(Debug, Clone, PartialEq)]
pub struct Clusters {
    /// Per cluster, the indices of its units.
    members: Vec<Vec<usize>>,
    units: usize,
}

impl Clusters {
    /// Clusters of units by label (`labels[u]` is unit `u`'s cluster), in order of first
    /// appearance.
    pub fn by_label<L: PartialEq>(labels: &[L]) -> Self {
        let mut seen: Vec<&L> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (u, l) in labels.iter().enumerate() {
            match seen.iter().position(|s| *s == l) {
                Some(k) => members[k].push(u),
                None => {
                    seen.push(l);
                    members.push(vec![u]);
                }
            }
        }
        Self {
            members,
            units: labels.len(),
        }
    }

    /// Every unit a cluster of its own: the one-stage (unit-level) bootstrap.
    pub fn singletons(units: usize) -> Self {
        Self {
            members: (0..units).map(|u| vec![u]).collect(),
            units,
        }
    }

    /// Number of clusters.
    pub fn count(&self) -> usize {
        self.members.len()
    }

    /// The units of cluster `k`.
    pub fn members(&self, k: usize) -> &[usize] {
        &self.members[k]
    }

    /// Number of units.
    pub fn units(&self) -> usize {
        self.units
    }

    /// One two-stage draw into `out`: clusters with replacement, then as many units as the
    /// cluster holds, with replacement, from each drawn cluster.
    pub fn draw(&self, rng: &mut Rng, out: &mut Vec<usize>) {
        out.clear();
        let n = self.members.len();
        for _ in 0..n {
            let c = &self.members[rng.index(n.max(1))];
            for _ in 0..c.len() {
                out.push(c[rng.index(c.len().max(1))]);
            }
        }
    }
}

/// Replicates of `stat(seeds, units)` under a bootstrap crossed over seeds (with replacement)
/// and the two-stage draw of `clusters`; `stat` on the identity sample gives the estimate.
pub fn clustered_replicates(
    n_seeds: usize,
    clusters: &Clusters,
    replicates: u32,
    seed: u64,
    stat: impl Fn(&[usize], &[usize]) -> f64,
) -> Replicates {
    let identity_seeds: Vec<usize> = (0..n_seeds).collect();
    let identity_units: Vec<usize> = (0..clusters.units()).collect();
    let estimate = stat(&identity_seeds, &identity_units);
    let mut seeds = vec![0usize; n_seeds];
    let mut units = Vec::with_capacity(clusters.units());
    Replicates::draw(
        estimate,
        replicates,
        Rng::derive(seed, 0x434c_5553),
        |rng| {
            for s in seeds.iter_mut() {
                *s = rng.index(n_seeds.max(1));
            }
            clusters.draw(rng, &mut units);
            stat(&seeds, &units)
        },
    )
}

/// The replicates of the mean of `a − b` (`[seed][unit]` tables), paired by seed and unit,
/// under the two-stage draw of `clusters`.
pub fn paired_clustered(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    clusters: &Clusters,
    replicates: u32,
    seed: u64,
) -> Replicates {
    clustered_replicates(a.len(), clusters, replicates, seed, |s, u| {
        mean_of(a, s, u) - mean_of(b, s, u)
    })
}

/// The replicates of the mean of `d` (`[seed][unit]`) resampling seeds alone (units fixed)
/// and resampling units alone (seeds fixed, two-stage over `clusters`): the two parts of the
/// crossed bootstrap's variance, from which the seeds or families a target needs follow.
pub fn variance_parts(
    d: &[Vec<f64>],
    clusters: &Clusters,
    replicates: u32,
    seed: u64,
) -> (f64, f64) {
    let all_seeds: Vec<usize> = (0..d.len()).collect();
    let all_units: Vec<usize> = (0..clusters.units()).collect();
    let var = |r: &Replicates| {
        let n = r.values.len().max(1) as f64;
        let m = r.values.iter().sum::<f64>() / n;
        r.values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n
    };
    let mut seeds = vec![0usize; d.len()];
    let by_seed = Replicates::draw(
        mean_of(d, &all_seeds, &all_units),
        replicates,
        Rng::derive(seed, 0x5345_4544),
        |rng| {
            for s in seeds.iter_mut() {
                *s = rng.index(d.len().max(1));
            }
            mean_of(d, &seeds, &all_units)
        },
    );
    let mut units = Vec::new();
    let by_unit = Replicates::draw(
        mean_of(d, &all_seeds, &all_units),
        replicates,
        Rng::derive(seed, 0x554e_4954),
        |rng| {
            clusters.draw(rng, &mut units);
            mean_of(d, &all_seeds, &units)
        },
    );
    (var(&by_seed), var(&by_unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_group_by_label_and_a_draw_keeps_the_unit_count_in_expectation() {
        let labels = ["a", "a", "b", "c", "c", "c"];
        let c = Clusters::by_label(&labels);
        assert_eq!(c.count(), 3);
        assert_eq!(c.units(), 6);
        assert_eq!(c.members, vec![vec![0, 1], vec![2], vec![3, 4, 5]]);
        let mut rng = Rng::seed_from_u64(3);
        let mut out = Vec::new();
        let mut total = 0usize;
        for _ in 0..3000 {
            c.draw(&mut rng, &mut out);
            // Units of a drawn cluster come from that cluster.
            assert!(out.iter().all(|&u| u < 6));
            total += out.len();
        }
        let mean = total as f64 / 3000.0;
        assert!((mean - 6.0).abs() < 0.2, "{mean}");
        assert_eq!(Clusters::singletons(4).count(), 4);
    }

    /// With a family effect planted in the difference, the two-stage bootstrap's spread
    /// matches the spread of the estimate over fresh draws of families; the unit-level one is
    /// far narrower.
    #[test]
    fn the_two_stage_draw_carries_a_family_effect_that_the_unit_draw_misses() {
        let (families, per) = (20usize, 8usize);
        let labels: Vec<usize> = (0..families * per).map(|u| u / per).collect();
        let clusters = Clusters::by_label(&labels);
        let mut rng = Rng::seed_from_u64(7);
        // d[seed][unit] = family effect (sd 1) + noise (sd 0.3).
        let make = |rng: &mut Rng| -> Vec<Vec<f64>> {
            let fam: Vec<f64> = (0..families).map(|_| rng.normal() as f64).collect();
            (0..3)
                .map(|_| {
                    labels
                        .iter()
                        .map(|&f| fam[f] + 0.3 * rng.normal() as f64)
                        .collect()
                })
                .collect()
        };
        let truth_sd = {
            let means: Vec<f64> = (0..400)
                .map(|_| {
                    let d = make(&mut rng);
                    d.iter().flatten().sum::<f64>() / (3 * families * per) as f64
                })
                .collect();
            let m = means.iter().sum::<f64>() / means.len() as f64;
            (means.iter().map(|v| (v - m).powi(2)).sum::<f64>() / means.len() as f64).sqrt()
        };
        let d = make(&mut rng);
        let zero = vec![vec![0.0; families * per]; 3];
        let two = paired_clustered(&d, &zero, &clusters, 2000, 1).interval();
        let one =
            paired_clustered(&d, &zero, &Clusters::singletons(families * per), 2000, 1).interval();
        assert!(
            (two.se / truth_sd - 1.0).abs() < 0.35,
            "two-stage se {} vs truth {truth_sd}",
            two.se
        );
        assert!(
            one.se < 0.5 * truth_sd,
            "unit-level se {} vs {truth_sd}",
            one.se
        );
    }
}
