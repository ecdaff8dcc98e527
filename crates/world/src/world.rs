//! The generator: families of environments, the abilities each requires (with a direction),
//! the rule-inverted twins, base difficulties, and each environment's unit skill vector over
//! the learner's parameters.
//!
//! Every random draw is made whatever the knobs' values (a family draws whether it has a twin
//! even when `twin_fraction` is 0), from streams derived from the seed, so the same seed gives
//! the same families, abilities and base difficulties at every point of a sweep: a sweep's
//! cells are paired by seed.

use std::collections::HashMap;

use envdist_core::{Checked, EnvId, EnvSpec, HarnessLevel, Rng, ScaleRange, Split, Turn};

use crate::config::WorldConfig;

const STRUCTURE_STREAM: u64 = 0x5354_5255;
const DIFFICULTY_STREAM: u64 = 0x4449_4646;

/// One family (task) of the world.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Its name, `f00`, `f01`, ...
    pub name: String,
    /// The abilities it requires (indices into [`World::ability_names`]), in draw order.
    pub abilities: Vec<usize>,
    /// Its rule-inverted twin variant (an environment index), if it has one.
    pub twin: Option<usize>,
}

/// One environment of the world.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldEnv {
    /// Index of its family.
    pub family: usize,
    /// Its base logit at H4 and the smallest scale, before any training.
    pub base_logit: f32,
    /// The abilities it requires, each with its direction (+1, or -1 where a twin inverts
    /// the rule).
    pub abilities: Vec<(usize, f32)>,
    /// Whether this is its family's rule-inverted twin (its family's task is inverted too).
    pub inverted: bool,
    /// Its skill vector: (parameter index, weight), unit norm, parameters ascending.
    pub skill: Vec<(usize, f32)>,
}

/// A generated world: a pool of environments with known abilities, transfer and conflicts.
#[derive(Debug, Clone)]
pub struct World {
    config: WorldConfig,
    seed: u64,
    families: Vec<Family>,
    envs: Vec<WorldEnv>,
    specs: Vec<EnvSpec>,
    ability_names: Vec<String>,
    index: HashMap<EnvId, usize>,
    overlap: Vec<f32>,
    dim: usize,
}

impl World {
    /// Generate the world of `config` from `seed`.
    pub fn generate(config: &Checked<WorldConfig>, seed: u64) -> Self {
        let c: &WorldConfig = config;
        let (nf, nv, k) = (c.families, c.variants, c.abilities);
        let n = nf * nv;
        let mut structure = Rng::derive(seed, STRUCTURE_STREAM);
        let mut difficulty = Rng::derive(seed, DIFFICULTY_STREAM);
        let popularity: Vec<f64> = (0..k)
            .map(|i| 1.0 / (1.0 + i as f64).powf(c.ability_skew as f64))
            .collect();
        let mut families = Vec::with_capacity(nf);
        let mut envs = Vec::with_capacity(n);
        for f in 0..nf {
            let span = (c.max_family_abilities - c.min_family_abilities) as u64 + 1;
            let m = c.min_family_abilities + structure.below(span) as usize;
            let mut weights = popularity.clone();
            let mut abilities = Vec::with_capacity(m);
            for _ in 0..m {
                let a = structure.weighted_index(&weights).unwrap_or(0);
                weights[a] = 0.0;
                abilities.push(a);
            }
            let has_twin = structure.next_f32() < c.twin_fraction;
            let family_offset = difficulty.normal() * c.family_spread;
            let inverted_count = ((c.twin_inverted_share * m as f32).ceil() as usize).clamp(1, m);
            let twin = has_twin.then_some(f * nv + nv - 1);
            for v in 0..nv {
                let inverted = has_twin && v == nv - 1;
                let variant_offset = difficulty.normal() * c.variant_spread;
                let directed = abilities
                    .iter()
                    .enumerate()
                    .map(|(i, &a)| {
                        (
                            a,
                            if inverted && i < inverted_count {
                                -1.0
                            } else {
                                1.0
                            },
                        )
                    })
                    .collect();
                envs.push(WorldEnv {
                    family: f,
                    base_logit: c.base_logit + family_offset + variant_offset,
                    abilities: directed,
                    inverted,
                    skill: Vec::new(),
                });
            }
            families.push(Family {
                name: format!("f{f:02}"),
                abilities,
                twin,
            });
        }
        let layout = Layout { n, nf, k };
        for (e, env) in envs.iter_mut().enumerate() {
            env.skill = layout.skill(c, e, env);
        }
        let ability_names: Vec<String> = (0..k).map(|a| format!("a{a:02}")).collect();
        let specs: Vec<EnvSpec> = envs
            .iter()
            .enumerate()
            .map(|(e, env)| {
                let fam = &families[env.family];
                let v = e % nv;
                let variant = if env.inverted {
                    "inverted".to_string()
                } else if v == 0 {
                    "classic".to_string()
                } else {
                    format!("theme-{v}")
                };
                let conflict_twin = match (fam.twin.is_some(), env.inverted, v) {
                    (true, true, _) => Some(EnvId::new(format!("{}/classic", fam.name))),
                    (true, false, 0) => Some(EnvId::new(format!("{}/inverted", fam.name))),
                    _ => None,
                };
                EnvSpec {
                    id: EnvId::new(format!("{}/{variant}", fam.name)),
                    family: fam.name.clone(),
                    variant,
                    turn: Turn::Single,
                    scale: ScaleRange {
                        min: 1,
                        max: c.scale_max,
                    },
                    split: Split::Pool,
                    abilities: env
                        .abilities
                        .iter()
                        .map(|(a, _)| ability_names[*a].clone())
                        .collect(),
                    conflict_twin,
                    instruction: "a skill-world task".into(),
                    max_steps: 1,
                }
            })
            .collect();
        let index = specs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
        // How much of `e`'s work training on `s` does: all of it within a family, else the
        // share of `e`'s abilities `s` requires.
        let mut overlap = vec![0.0f32; n * n];
        for s in 0..n {
            for e in 0..n {
                overlap[s * n + e] = if envs[s].family == envs[e].family {
                    1.0
                } else {
                    let shared = envs[e]
                        .abilities
                        .iter()
                        .filter(|(a, _)| envs[s].abilities.iter().any(|(b, _)| a == b))
                        .count();
                    shared as f32 / envs[e].abilities.len().max(1) as f32
                };
            }
        }
        Self {
            config: c.clone(),
            seed,
            families,
            envs,
            specs,
            ability_names,
            index,
            overlap,
            dim: layout.dim(),
        }
    }

    /// The configuration it was generated from.
    pub fn config(&self) -> &WorldConfig {
        &self.config
    }

    /// The seed it was generated from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of environments.
    pub fn len(&self) -> usize {
        self.envs.len()
    }

    /// Whether the pool is empty (never, for a checked configuration).
    pub fn is_empty(&self) -> bool {
        self.envs.is_empty()
    }

    /// The environments, in pool order.
    pub fn envs(&self) -> &[WorldEnv] {
        &self.envs
    }

    /// The families.
    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// The environments' specs (for samplers), in pool order.
    pub fn specs(&self) -> &[EnvSpec] {
        &self.specs
    }

    /// The specs of the environments at `indices`, in that order.
    pub fn specs_at(&self, indices: &[usize]) -> Vec<EnvSpec> {
        indices.iter().map(|&i| self.specs[i].clone()).collect()
    }

    /// The environments' ids, in pool order.
    pub fn ids(&self) -> Vec<EnvId> {
        self.specs.iter().map(|s| s.id.clone()).collect()
    }

    /// The index of `env`.
    pub fn index_of(&self, env: &EnvId) -> Option<usize> {
        self.index.get(env).copied()
    }

    /// The annotator's vocabulary.
    pub fn ability_names(&self) -> &[String] {
        &self.ability_names
    }

    /// Number of learner parameters.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The true transfer kernel of environments `i` and `j`: the inner product of their skill
    /// vectors (1 for `i == j`), which is also the cosine of their exact gradients.
    pub fn kernel(&self, i: usize, j: usize) -> f32 {
        let (a, b) = (&self.envs[i].skill, &self.envs[j].skill);
        let (mut x, mut y, mut sum) = (0, 0, 0.0f32);
        while x < a.len() && y < b.len() {
            match a[x].0.cmp(&b[y].0) {
                std::cmp::Ordering::Less => x += 1,
                std::cmp::Ordering::Greater => y += 1,
                std::cmp::Ordering::Equal => {
                    sum += a[x].1 * b[y].1;
                    x += 1;
                    y += 1;
                }
            }
        }
        sum
    }

    /// How much of environment `e`'s work an episode of `s` does, in [0, 1]: 1 within a
    /// family (itself included), else the share of `e`'s abilities `s` also requires. The
    /// rest of the episode is, for `e`, unrelated training: what makes it drift.
    pub fn overlap(&self, s: usize, e: usize) -> f32 {
        self.overlap[s * self.envs.len() + e]
    }

    /// Whether `i` and `j` belong to the same family.
    pub fn same_family(&self, i: usize, j: usize) -> bool {
        self.envs[i].family == self.envs[j].family
    }

    /// Whether `i` and `j` are a rule-inverted twin pair.
    pub fn twins(&self, i: usize, j: usize) -> bool {
        self.same_family(i, j) && self.envs[i].inverted != self.envs[j].inverted && {
            let nv = self.config.variants;
            i.is_multiple_of(nv) || j.is_multiple_of(nv)
        }
    }

    /// The abilities `i` and `j` both require.
    pub fn shared_abilities(&self, i: usize, j: usize) -> usize {
        self.envs[i]
            .abilities
            .iter()
            .filter(|(a, _)| self.envs[j].abilities.iter().any(|(b, _)| a == b))
            .count()
    }

    /// The logit of environment `e` at `level` and `scale` before training: its base logit,
    /// the harness's scaffold and the H4 scarcity at the level, less the scale's difficulty.
    pub fn offset(&self, e: usize, level: HarnessLevel, scale: u32) -> f32 {
        let c = &self.config;
        let h = level.index() as f32;
        let span = (c.scale_max - 1).max(1) as f32;
        let frac = (scale.saturating_sub(1) as f32 / span).min(1.0);
        self.envs[e].base_logit + c.scaffold * (4.0 - h) / 4.0
            - c.h4_scarcity * h / 4.0
            - c.scale_difficulty * frac.powf(c.scale_curve)
    }

    /// The scales evaluation plays: the smallest, the middle and the largest (as the study's
    /// evaluation does), without repeats.
    pub fn eval_scales(&self) -> Vec<u32> {
        let r = ScaleRange {
            min: 1,
            max: self.config.scale_max,
        };
        let mut s = vec![r.min, r.mid(), r.max];
        s.dedup();
        s
    }
}

/// Where each kind of parameter sits: private (one per environment), the families' tasks
/// (undirected, then directed), the abilities (undirected, then directed), the trunk.
struct Layout {
    n: usize,
    nf: usize,
    k: usize,
}

impl Layout {
    fn dim(&self) -> usize {
        self.n + 2 * self.nf + 2 * self.k + 1
    }

    fn skill(&self, c: &WorldConfig, e: usize, env: &WorldEnv) -> Vec<(usize, f32)> {
        let mut out = Vec::new();
        let mut push = |i: usize, w: f32| {
            if w != 0.0 {
                out.push((i, w));
            }
        };
        let chi = c.conflict;
        push(e, c.private_share().sqrt());
        let task_dir = if env.inverted { -1.0 } else { 1.0 };
        let fam = c.family_share.sqrt();
        push(self.n + env.family, fam * (1.0 - chi).sqrt());
        let m = env.abilities.len() as f32;
        let per = (c.transfer / m).sqrt();
        let base = self.n + 2 * self.nf;
        let mut undirected: Vec<(usize, f32)> = env
            .abilities
            .iter()
            .map(|&(a, _)| (base + a, per * (1.0 - chi).sqrt()))
            .collect();
        undirected.sort_by_key(|p| p.0);
        for (i, w) in undirected {
            push(i, w);
        }
        push(self.n + self.nf + env.family, fam * chi.sqrt() * task_dir);
        let mut directed: Vec<(usize, f32)> = env
            .abilities
            .iter()
            .map(|&(a, d)| (base + self.k + a, per * chi.sqrt() * d))
            .collect();
        directed.sort_by_key(|p| p.0);
        for (i, w) in directed {
            push(i, w);
        }
        push(self.dim() - 1, c.trunk.sqrt());
        out.sort_by_key(|p| p.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::Validate;

    fn world(c: WorldConfig, seed: u64) -> World {
        World::generate(&c.checked().unwrap(), seed)
    }

    #[test]
    fn skills_are_unit_and_twins_conflict() {
        let w = world(
            WorldConfig {
                twin_fraction: 1.0,
                ..Default::default()
            },
            3,
        );
        assert_eq!(w.len(), 64);
        for e in 0..w.len() {
            assert!((w.kernel(e, e) - 1.0).abs() < 1e-5, "{e}");
        }
        let nv = w.config().variants;
        let (classic, twin, theme) = (0, nv - 1, 1);
        assert!(w.twins(classic, twin) && !w.twins(classic, theme));
        // Twins share less than a theme does: the directed part of the task and of the
        // inverted abilities cancels.
        assert!(w.kernel(classic, twin) < w.kernel(classic, theme));
        assert_eq!(
            w.specs()[twin].conflict_twin.as_ref().unwrap(),
            &w.specs()[classic].id
        );
        assert_eq!(
            w.specs()[classic].conflict_twin.as_ref().unwrap(),
            &w.specs()[twin].id
        );
        assert_eq!(w.index_of(&w.specs()[5].id), Some(5));
    }

    #[test]
    fn knobs_do_not_move_the_draws() {
        let a = world(WorldConfig::default(), 9);
        let b = world(
            WorldConfig {
                transfer: 0.1,
                twin_fraction: 0.0,
                family_spread: 0.0,
                ..Default::default()
            },
            9,
        );
        for (x, y) in a.families().iter().zip(b.families()) {
            assert_eq!(x.abilities, y.abilities);
        }
        // Only the family offsets moved: variant offsets are the same draws.
        let d = |w: &World, e: usize| w.envs()[e].base_logit - w.envs()[e - 1].base_logit;
        assert!((d(&a, 2) - d(&b, 2)).abs() < 1e-6);
        assert!(b.families().iter().all(|f| f.twin.is_none()));
    }

    #[test]
    fn transfer_off_leaves_only_the_private_skill() {
        let w = world(
            WorldConfig {
                transfer: 0.0,
                family_share: 0.0,
                ..Default::default()
            },
            1,
        );
        for i in 0..w.len() {
            for j in 0..w.len() {
                let k = w.kernel(i, j);
                assert_eq!(k != 0.0, i == j, "{i} {j} {k}");
            }
        }
    }
}
