//! Seeded synthetic pools for tests and benchmarks: Zipf-popular abilities, a range of
//! abilities per environment, redundant themes (near-copies of one ability set) and planted
//! conflict clusters (two halves whose gradients point against each other).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use envdist_core::{EnvId, Rng};

use crate::error::SelectError;
use crate::npy::SparseCounts;
use crate::problem::Problem;

/// Parameters of a synthetic pool. Everything is deterministic from `seed`, independent of
/// the number of threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyntheticConfig {
    /// Environments. Default 200.
    pub n: usize,
    /// Abilities. Default 72 (the paper's meta-ability count).
    pub abilities: usize,
    /// Zipf exponent of ability popularity over popularity ranks (ranks go to ability ids
    /// through a seeded permutation). Default 1.1.
    pub zipf_s: f32,
    /// Inclusive range of distinct abilities per environment. Default [5, 15].
    pub abilities_per_env: [u32; 2],
    /// Gradient dimension; 0 for no gradients. Default 64.
    pub dim: usize,
    /// Planted conflict clusters. Default 4.
    pub conflict_clusters: usize,
    /// Environments per conflict cluster (split into two opposed halves). Default 8.
    pub cluster_size: usize,
    /// Length of a cluster's shared direction relative to the (unit-scale) noise; members'
    /// cosines are about `±s² / (1 + s²)`. Default 2.0 (about ±0.8).
    pub conflict_strength: f32,
    /// Redundant themes: groups of environments sharing one ability set. Default 4.
    pub redundant_themes: usize,
    /// Environments per theme. Default 6.
    pub theme_size: usize,
    /// Seed. Default 0.
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        Self {
            n: 200,
            abilities: 72,
            zipf_s: 1.1,
            abilities_per_env: [5, 15],
            dim: 64,
            conflict_clusters: 4,
            cluster_size: 8,
            conflict_strength: 2.0,
            redundant_themes: 4,
            theme_size: 6,
            seed: 0,
        }
    }
}

/// A planted conflict cluster: gradients of `positive` and `negative` share a direction with
/// opposite signs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlantedCluster {
    /// Members along `+v`.
    pub positive: Vec<usize>,
    /// Members along `−v`.
    pub negative: Vec<usize>,
}

/// A generated pool and what was planted in it.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticPool {
    /// The problem (ids `syn/<i>`, abilities `a<j>`), with gradients when `dim > 0`.
    pub problem: Problem,
    /// Planted conflict clusters.
    pub clusters: Vec<PlantedCluster>,
    /// Members of each redundant theme.
    pub themes: Vec<Vec<usize>>,
}

const STREAM_LAYOUT: u64 = 1;
const STREAM_COVERAGE: u64 = 1 << 40;
const STREAM_GRADIENT: u64 = 2 << 40;
const STREAM_DIRECTION: u64 = 3 << 40;

fn bad(field: &str, expected: &str, found: String) -> SelectError {
    SelectError::invalid("synthetic", field, expected, found)
}

/// Sample `m` distinct abilities in proportion to popularity (successive draws without
/// replacement), returned ascending.
fn sample_abilities(cdf: &[f64], m: usize, rng: &mut Rng) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(m);
    let total = cdf[cdf.len() - 1];
    while out.len() < m {
        let x = rng.next_f64() * total;
        let a = cdf.partition_point(|c| *c <= x).min(cdf.len() - 1) as u32;
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out.sort_unstable();
    out
}

/// Two standard normals from one Box-Muller draw.
#[inline]
fn normal_pair(rng: &mut Rng) -> (f32, f32) {
    let u1 = rng.next_f64().max(1e-300);
    let u2 = rng.next_f64();
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
    ((r * c) as f32, (r * s) as f32)
}

fn fill_normal(out: &mut [f32], scale: f32, rng: &mut Rng) {
    let mut chunks = out.chunks_exact_mut(2);
    for pair in &mut chunks {
        let (a, b) = normal_pair(rng);
        pair[0] = a * scale;
        pair[1] = b * scale;
    }
    for x in chunks.into_remainder() {
        *x = normal_pair(rng).0 * scale;
    }
}

/// Generate a pool.
pub fn generate(cfg: &SyntheticConfig) -> Result<SyntheticPool, SelectError> {
    let [lo, hi] = cfg.abilities_per_env;
    if cfg.n == 0 || cfg.n >= u32::MAX as usize {
        return Err(bad("n", "1..4294967295 environments", cfg.n.to_string()));
    }
    if lo == 0 || lo > hi || hi as usize > cfg.abilities {
        return Err(bad(
            "abilities_per_env",
            &format!("1 <= min <= max <= abilities ({})", cfg.abilities),
            format!("{:?}", cfg.abilities_per_env),
        ));
    }
    if !(cfg.zipf_s.is_finite() && cfg.zipf_s >= 0.0) {
        return Err(bad(
            "zipf_s",
            "a finite exponent >= 0",
            cfg.zipf_s.to_string(),
        ));
    }
    if !(cfg.conflict_strength.is_finite() && cfg.conflict_strength >= 0.0) {
        return Err(bad(
            "conflict_strength",
            "a finite value >= 0",
            cfg.conflict_strength.to_string(),
        ));
    }
    let planted = cfg.conflict_clusters * cfg.cluster_size + cfg.redundant_themes * cfg.theme_size;
    if planted > cfg.n {
        return Err(bad(
            "conflict_clusters",
            &format!("clusters·cluster_size + themes·theme_size <= n ({})", cfg.n),
            planted.to_string(),
        ));
    }
    if cfg.conflict_clusters > 0 && cfg.cluster_size > 0 && cfg.dim == 0 {
        return Err(bad(
            "dim",
            "a gradient dimension > 0 to plant conflict clusters",
            "0".into(),
        ));
    }

    // Popularity: rank r (1-based) weighs r^-s; ranks go to ids through a permutation.
    let mut layout = Rng::derive(cfg.seed, STREAM_LAYOUT);
    let mut perm: Vec<usize> = (0..cfg.abilities).collect();
    layout.shuffle(&mut perm);
    let mut pop = vec![0f64; cfg.abilities];
    for (rank, &id) in perm.iter().enumerate() {
        pop[id] = ((rank + 1) as f64).powf(-f64::from(cfg.zipf_s));
    }
    let cdf: Vec<f64> = pop
        .iter()
        .scan(0.0, |acc, p| {
            *acc += p;
            Some(*acc)
        })
        .collect();

    // Which environments carry planted structure.
    let mut order: Vec<usize> = (0..cfg.n).collect();
    layout.shuffle(&mut order);
    let mut next = order.into_iter();
    let clusters: Vec<PlantedCluster> = (0..cfg.conflict_clusters)
        .map(|_| {
            let members: Vec<usize> = next.by_ref().take(cfg.cluster_size).collect();
            let half = members.len().div_ceil(2);
            PlantedCluster {
                positive: members[..half].to_vec(),
                negative: members[half..].to_vec(),
            }
        })
        .collect();
    let themes: Vec<Vec<usize>> = (0..cfg.redundant_themes)
        .map(|_| next.by_ref().take(cfg.theme_size).collect())
        .collect();
    let mut theme_of = vec![usize::MAX; cfg.n];
    for (t, members) in themes.iter().enumerate() {
        for &e in members {
            theme_of[e] = t;
        }
    }
    let templates: Vec<Vec<u32>> = (0..cfg.redundant_themes)
        .map(|_| {
            let m = layout.range_inclusive(lo, hi) as usize;
            sample_abilities(&cdf, m, &mut layout)
        })
        .collect();

    // Coverage rows, each from its own stream.
    let rows: Vec<(Vec<u32>, Vec<f32>)> = (0..cfg.n)
        .into_par_iter()
        .with_min_len(256)
        .map(|e| {
            let mut rng = Rng::derive(cfg.seed, STREAM_COVERAGE + e as u64);
            let abilities = match theme_of[e] {
                usize::MAX => {
                    let m = rng.range_inclusive(lo, hi) as usize;
                    sample_abilities(&cdf, m, &mut rng)
                }
                t => templates[t].clone(),
            };
            let counts = abilities
                .iter()
                .map(|_| rng.range_inclusive(1, 3) as f32)
                .collect();
            (abilities, counts)
        })
        .collect();
    let mut indptr = Vec::with_capacity(cfg.n + 1);
    indptr.push(0);
    let mut indices = Vec::new();
    let mut values = Vec::new();
    for (a, c) in rows {
        indices.extend(a);
        values.extend(c);
        indptr.push(indices.len());
    }
    let counts = SparseCounts {
        rows: cfg.n,
        cols: cfg.abilities,
        indptr,
        indices,
        values,
    };
    let env_ids = (0..cfg.n).map(|i| EnvId::new(format!("syn/{i}"))).collect();
    let mut problem = Problem::from_counts(counts, Some(env_ids), None)?;

    if cfg.dim > 0 {
        let d = cfg.dim;
        let noise = 1.0 / (d as f32).sqrt();
        let mut direction = vec![(usize::MAX, 0.0f32); cfg.n];
        let dirs: Vec<Vec<f32>> = (0..clusters.len())
            .map(|c| {
                let mut v = vec![0f32; d];
                fill_normal(
                    &mut v,
                    1.0,
                    &mut Rng::derive(cfg.seed, STREAM_DIRECTION + c as u64),
                );
                let norm = v
                    .iter()
                    .map(|x| x * x)
                    .sum::<f32>()
                    .sqrt()
                    .max(f32::MIN_POSITIVE);
                v.iter_mut()
                    .for_each(|x| *x *= cfg.conflict_strength / norm);
                v
            })
            .collect();
        for (c, cl) in clusters.iter().enumerate() {
            cl.positive.iter().for_each(|&e| direction[e] = (c, 1.0));
            cl.negative.iter().for_each(|&e| direction[e] = (c, -1.0));
        }
        let mut values = vec![0f32; cfg.n * d];
        values
            .par_chunks_mut(d)
            .with_min_len(64)
            .enumerate()
            .for_each(|(e, row)| {
                fill_normal(
                    row,
                    noise,
                    &mut Rng::derive(cfg.seed, STREAM_GRADIENT + e as u64),
                );
                if let (c, sign) = direction[e]
                    && c != usize::MAX
                {
                    row.iter_mut()
                        .zip(&dirs[c])
                        .for_each(|(x, v)| *x += sign * v);
                }
            });
        problem = problem.with_gradient_rows(d, values)?;
    }
    Ok(SyntheticPool {
        problem,
        clusters,
        themes,
    })
}

/// Parse `n=N,abilities=A,dim=D,seed=S,...` (any [`SyntheticConfig`] field; `per_env=LO-HI`
/// for `abilities_per_env`) over the defaults.
pub fn parse_spec(spec: &str) -> Result<SyntheticConfig, SelectError> {
    let mut c = SyntheticConfig::default();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| bad(part, "key=value", part.to_string()))?;
        let num = |v: &str| -> Result<usize, SelectError> {
            v.replace('_', "")
                .parse()
                .map_err(|_| bad(k, "a non-negative integer", v.to_string()))
        };
        let float = |v: &str| -> Result<f32, SelectError> {
            v.parse().map_err(|_| bad(k, "a number", v.to_string()))
        };
        match k {
            "n" => c.n = num(v)?,
            "abilities" | "a" => c.abilities = num(v)?,
            "dim" | "d" => c.dim = num(v)?,
            "seed" => c.seed = num(v)? as u64,
            "zipf_s" | "skew" => c.zipf_s = float(v)?,
            "per_env" | "abilities_per_env" => {
                let (lo, hi) = v
                    .split_once('-')
                    .ok_or_else(|| bad(k, "LO-HI", v.to_string()))?;
                c.abilities_per_env = [num(lo)? as u32, num(hi)? as u32];
            }
            "conflict_clusters" | "clusters" => c.conflict_clusters = num(v)?,
            "cluster_size" => c.cluster_size = num(v)?,
            "conflict_strength" => c.conflict_strength = float(v)?,
            "redundant_themes" | "themes" => c.redundant_themes = num(v)?,
            "theme_size" => c.theme_size = num(v)?,
            _ => {
                return Err(bad(
                    k,
                    "one of n, abilities, dim, seed, zipf_s, per_env, clusters, cluster_size, \
                     conflict_strength, themes, theme_size",
                    k.to_string(),
                ));
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_planted_structure_shows() {
        let cfg = SyntheticConfig::default();
        let a = generate(&cfg).unwrap();
        assert_eq!(a, generate(&cfg).unwrap());
        let b = generate(&SyntheticConfig {
            seed: 1,
            ..cfg.clone()
        })
        .unwrap();
        assert_ne!(a.problem, b.problem);
        let p = &a.problem;
        for e in 0..p.n_envs() {
            let m = p.env_abilities(e).len();
            assert!((5..=15).contains(&m), "env {e} has {m}");
        }
        let g = p.gradients().unwrap();
        for cl in &a.clusters {
            let (x, y) = (cl.positive[0], cl.negative[0]);
            assert!(g.cosine(x, y) < -0.5, "{}", g.cosine(x, y));
            assert!(g.cosine(x, cl.positive[1]) > 0.5);
        }
        for t in &a.themes {
            assert_eq!(p.env_abilities(t[0]), p.env_abilities(t[1]));
        }
    }

    #[test]
    fn spec_parses_and_rejects_unknown_keys() {
        let c = parse_spec("n=1000,abilities=50,dim=8,seed=3,per_env=2-4").unwrap();
        assert_eq!((c.n, c.abilities, c.dim, c.seed), (1000, 50, 8, 3));
        assert_eq!(c.abilities_per_env, [2, 4]);
        assert!(parse_spec("nn=3").unwrap_err().to_string().contains("nn"));
        assert!(
            generate(&SyntheticConfig {
                n: 10,
                ..Default::default()
            })
            .is_err()
        );
    }
}
