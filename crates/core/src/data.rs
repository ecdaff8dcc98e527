//! Boundary data: trajectories, ability profiles and per-environment gradient sets.
//! Each file format carries a `schema_version`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::action::ActionId;
use crate::env::{EnvId, Task};
use crate::io::{FileError, write_atomic};

/// Schema version of trajectory JSONL lines.
pub const TRAJECTORY_SCHEMA_VERSION: u32 = 1;
/// Schema version of profile files ([`ProfileSet`]).
pub const PROFILE_SCHEMA_VERSION: u32 = 1;
/// Schema version of gradient safetensors files ([`GradientSet`]).
pub const GRADIENT_SCHEMA_VERSION: u32 = 1;

/// One step of a recorded episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryStep {
    /// The action taken.
    pub action: ActionId,
    /// Reward received.
    pub reward: f32,
    /// Atomic ability tags the step exercised (from the env, or from a segmenter).
    #[serde(default)]
    pub abilities: Vec<String>,
}

/// A recorded episode: one JSONL line in a trajectory log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// Always [`TRAJECTORY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The task that was played (includes the env id).
    pub task: Task,
    /// Name of the policy that played it.
    pub policy: String,
    /// The steps in order.
    pub steps: Vec<TrajectoryStep>,
    /// Whether the episode ended solved.
    pub success: bool,
    /// Sum of rewards.
    pub episode_return: f32,
}

/// A transition between consecutive abilities within an environment's trajectories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbilityTransition {
    /// Ability before.
    pub from: String,
    /// Ability after.
    pub to: String,
    /// Times observed.
    pub count: u64,
    /// `count` divided by all transitions out of `from`.
    pub probability: f32,
}

/// What one environment exercises, as selection sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbilityProfile {
    /// The environment.
    pub env: EnvId,
    /// Coverage over the profile set's `abilities` (usually meta-abilities): name to weight
    /// (occurrence count or frequency; zero-weight abilities are omitted).
    pub coverage: BTreeMap<String, f32>,
    /// Raw atomic ability occurrence counts.
    #[serde(default)]
    pub atomic_counts: BTreeMap<String, u64>,
    /// Transition statistics between consecutive atomic abilities.
    #[serde(default)]
    pub transitions: Vec<AbilityTransition>,
    /// Number of trajectories the profile was built from.
    #[serde(default)]
    pub trajectories: u32,
}

impl AbilityProfile {
    /// A profile of coverage alone, with no rollout behind it (no atomic counts, no
    /// transitions, no trajectories): tags an annotator or a converter assigned.
    pub fn of_coverage(env: EnvId, coverage: BTreeMap<String, f32>) -> Self {
        Self {
            env,
            coverage,
            atomic_counts: BTreeMap::new(),
            transitions: Vec::new(),
            trajectories: 0,
        }
    }
}

/// A named group of atomic abilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaAbility {
    /// Name of the meta-ability.
    pub name: String,
    /// Atomic abilities in it.
    pub members: Vec<String>,
}

/// A profile file: the ability vocabulary and one profile per environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSet {
    /// Always [`PROFILE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The abilities `coverage` keys refer to, in a fixed order.
    pub abilities: Vec<String>,
    /// How atomic abilities were grouped into those abilities (empty if they are atomic).
    #[serde(default)]
    pub meta_abilities: Vec<MetaAbility>,
    /// One profile per environment.
    pub profiles: Vec<AbilityProfile>,
}

impl ProfileSet {
    /// A set at the current schema whose `abilities` are not grouped (no meta-abilities).
    pub fn of_abilities(abilities: Vec<String>, profiles: Vec<AbilityProfile>) -> Self {
        Self {
            schema_version: PROFILE_SCHEMA_VERSION,
            abilities,
            meta_abilities: Vec::new(),
            profiles,
        }
    }

    /// The profiles of `envs` only (in this set's order), with the same ability vocabulary.
    pub fn subset(&self, envs: &[EnvId]) -> ProfileSet {
        let keep: std::collections::HashSet<&EnvId> = envs.iter().collect();
        ProfileSet {
            schema_version: self.schema_version,
            abilities: self.abilities.clone(),
            meta_abilities: self.meta_abilities.clone(),
            profiles: self
                .profiles
                .iter()
                .filter(|p| keep.contains(&p.env))
                .cloned()
                .collect(),
        }
    }

    /// Read and validate a profile file: schema, unique env ids, coverage keys inside
    /// `abilities`, finite non-negative weights.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, FileError> {
        let path = path.as_ref();
        let set: ProfileSet = crate::io::read_json(path, Some(PROFILE_SCHEMA_VERSION))?;
        set.validate(path)?;
        Ok(set)
    }

    /// Check the invariants `read` promises; `path` is only used in error messages.
    pub fn validate(&self, path: &Path) -> Result<(), FileError> {
        let known: std::collections::HashSet<&str> =
            self.abilities.iter().map(String::as_str).collect();
        if known.len() != self.abilities.len() {
            return Err(FileError::invalid(
                path,
                "abilities",
                "unique names",
                "a duplicate",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, p) in self.profiles.iter().enumerate() {
            if !seen.insert(&p.env) {
                return Err(FileError::invalid(
                    path,
                    format!("profiles[{i}].env"),
                    "a unique environment id",
                    format!("duplicate {:?}", p.env.0),
                ));
            }
            for (name, w) in &p.coverage {
                if !known.contains(name.as_str()) {
                    return Err(FileError::invalid(
                        path,
                        format!("profiles[{i}].coverage"),
                        "ability names listed in `abilities`",
                        format!("unknown ability {name:?}"),
                    ));
                }
                if !w.is_finite() || *w < 0.0 {
                    return Err(FileError::invalid(
                        path,
                        format!("profiles[{i}].coverage.{name}"),
                        "a finite non-negative weight",
                        w.to_string(),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Per-environment gradients (usually randomly projected): a row-major `env x dim` matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct GradientSet {
    /// Row order.
    pub env_ids: Vec<EnvId>,
    /// Columns per row.
    pub dim: usize,
    /// `env_ids.len() * dim` values, row-major.
    pub values: Vec<f32>,
    /// Seed of the random projection, if one was applied.
    pub projection_seed: Option<u64>,
}

const GRADIENT_TENSOR: &str = "gradients";

/// Cosine similarity (0 when either vector is zero), accumulated in f64.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        ab += *x as f64 * *y as f64;
        aa += (*x as f64).powi(2);
        bb += (*y as f64).powi(2);
    }
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        (ab / (aa.sqrt() * bb.sqrt())) as f32
    }
}

/// Cosine below which a pair of gradients counts as conflicting in summaries.
pub const CONFLICT_COSINE: f32 = -0.1;

/// Pairwise gradient cosines of a set, summarised by kind of pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSummary {
    /// Mean cosine of the given twin pairs present in the set.
    pub twin_mean: Option<f32>,
    /// Mean cosine of the other pairs of the same family.
    pub same_family_mean: Option<f32>,
    /// Mean cosine over all pairs.
    pub all_pairs_mean: f32,
    /// Standard deviation of the cosine over all pairs: how polarised the set is.
    #[serde(default)]
    pub all_pairs_std: f32,
    /// Fraction of pairs with cosine below [`CONFLICT_COSINE`].
    pub negative_fraction: f32,
}

/// How closely one gradient set's pairwise cosines follow a reference set's over the same
/// environments: the quality of a cheap estimate of the conflict term's input
/// ([`GradientSet::cosine_agreement`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CosineAgreement {
    /// Pairs compared: `n (n - 1) / 2` for `n` environments.
    pub pairs: usize,
    /// Spearman rank correlation of the two lists of pair cosines (`None` when either list is
    /// constant, e.g. every row zero, or there are fewer than two pairs).
    pub spearman: Option<f32>,
    /// Kendall's tau-b of the two lists (`None` as for `spearman`).
    pub kendall: Option<f32>,
    /// Fraction of pairs counted as the most conflicting.
    pub conflict_fraction: f32,
    /// Size of each most-conflicting set: `ceil(conflict_fraction * pairs)`.
    pub conflict_pairs: usize,
    /// Of the reference's `conflict_pairs` most negative pairs, the fraction that are also
    /// among this set's `conflict_pairs` most negative (0 when there are no pairs).
    pub conflict_recall: f32,
    /// Mean absolute difference between the two cosines of a pair.
    pub mean_abs_diff: f32,
}

impl GradientSet {
    /// Every pair's cosine in row order `(0, 1), (0, 2), .., (0, n-1), (1, 2), ..`.
    pub fn pairwise_cosines(&self) -> Vec<f32> {
        self.pairwise_cosines_of(&(0..self.len()).collect::<Vec<_>>())
    }

    /// The cosines of every pair of `rows`, in the order of `rows` (as `pairwise_cosines`).
    fn pairwise_cosines_of(&self, rows: &[usize]) -> Vec<f32> {
        let norms: Vec<f64> = rows
            .iter()
            .map(|&i| {
                self.row(i)
                    .iter()
                    .map(|x| (*x as f64).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        let mut out = Vec::with_capacity(rows.len() * rows.len().saturating_sub(1) / 2);
        for (a, &i) in rows.iter().enumerate() {
            for (b, &j) in rows.iter().enumerate().skip(a + 1) {
                let dot: f64 = self
                    .row(i)
                    .iter()
                    .zip(self.row(j))
                    .map(|(x, y)| *x as f64 * *y as f64)
                    .sum();
                let n = norms[a] * norms[b];
                out.push(if n == 0.0 { 0.0 } else { (dot / n) as f32 });
            }
        }
        out
    }

    /// Compare this set's pairwise cosines (an estimate) with `reference`'s over the same
    /// environments, matched by id (the two may list them in different orders): rank
    /// agreement over all pairs, and the recall of the reference's `conflict_fraction` most
    /// negative pairs among this set's as many most negative ones. Fails when the two sets do
    /// not hold the same environments or `conflict_fraction` is not in `(0, 1]`.
    pub fn cosine_agreement(
        &self,
        reference: &GradientSet,
        conflict_fraction: f32,
    ) -> Result<CosineAgreement, crate::InvalidValue> {
        if !(conflict_fraction > 0.0 && conflict_fraction <= 1.0) {
            return Err(crate::InvalidValue::new(
                "conflict_fraction",
                "a fraction in (0, 1]",
                conflict_fraction,
            ));
        }
        let mut rows = Vec::with_capacity(reference.len());
        for id in &reference.env_ids {
            rows.push(self.index_of(id).ok_or_else(|| {
                crate::InvalidValue::new(
                    "env_ids",
                    "the reference's environments",
                    format!("no row for {:?}", id.0),
                )
            })?);
        }
        if self.len() != reference.len() {
            return Err(crate::InvalidValue::new(
                "env_ids",
                format!("the reference's {} environments", reference.len()),
                format!("{} environments", self.len()),
            ));
        }
        let mine = self.pairwise_cosines_of(&rows);
        let theirs = reference.pairwise_cosines();
        let pairs = theirs.len();
        let conflict_pairs = ((conflict_fraction as f64 * pairs as f64).ceil() as usize).min(pairs);
        let mean_abs_diff = mine
            .iter()
            .zip(&theirs)
            .map(|(a, b)| (a - b).abs() as f64)
            .sum::<f64>()
            / pairs.max(1) as f64;
        Ok(CosineAgreement {
            pairs,
            spearman: crate::rank::spearman(&mine, &theirs).map(|r| r as f32),
            kendall: crate::rank::kendall_tau_b(&mine, &theirs).map(|r| r as f32),
            conflict_fraction,
            conflict_pairs,
            conflict_recall: crate::rank::lowest_recall(&mine, &theirs, conflict_pairs)
                .unwrap_or(0.0) as f32,
            mean_abs_diff: mean_abs_diff as f32,
        })
    }

    /// Cosine between the rows of environments `i` and `j`.
    pub fn cosine(&self, i: usize, j: usize) -> f32 {
        cosine(self.row(i), self.row(j))
    }

    /// Row index of `env`.
    pub fn index_of(&self, env: &EnvId) -> Option<usize> {
        self.env_ids.iter().position(|e| e == env)
    }

    /// The rows of `envs` only (those this set has, in this set's order), with the same
    /// projection.
    pub fn subset(&self, envs: &[EnvId]) -> GradientSet {
        let keep: std::collections::HashSet<&EnvId> = envs.iter().collect();
        let rows: Vec<usize> = (0..self.len())
            .filter(|&i| keep.contains(&self.env_ids[i]))
            .collect();
        GradientSet {
            env_ids: rows.iter().map(|&i| self.env_ids[i].clone()).collect(),
            dim: self.dim,
            values: rows
                .iter()
                .flat_map(|&i| self.row(i).iter().copied())
                .collect(),
            projection_seed: self.projection_seed,
        }
    }

    /// Environments whose row is exactly zero: none of their episodes moved the policy (the
    /// conflict term cannot see them, and training on them yields no reward).
    pub fn zero_rows(&self) -> Vec<EnvId> {
        (0..self.len())
            .filter(|&i| self.row(i).iter().all(|v| *v == 0.0))
            .map(|i| self.env_ids[i].clone())
            .collect()
    }

    /// Mean pairwise cosine and conflicting pairs among `envs` (those with a row).
    pub fn within(&self, envs: &[EnvId]) -> (Option<f32>, usize) {
        let rows: Vec<usize> = envs.iter().filter_map(|e| self.index_of(e)).collect();
        let mut cs = Vec::new();
        for (a, &i) in rows.iter().enumerate() {
            for &j in &rows[a + 1..] {
                cs.push(self.cosine(i, j));
            }
        }
        let mean = (!cs.is_empty()).then(|| cs.iter().sum::<f32>() / cs.len() as f32);
        (mean, cs.iter().filter(|c| **c < CONFLICT_COSINE).count())
    }

    /// Every pair's cosine, summarised: the `twins` pairs, other pairs whose `family` is the
    /// same, and all pairs.
    pub fn pair_summary(
        &self,
        twins: &[(EnvId, EnvId)],
        family: impl Fn(&EnvId) -> Option<String>,
    ) -> PairSummary {
        let n = self.len();
        let twin: std::collections::BTreeSet<(usize, usize)> = twins
            .iter()
            .filter_map(|(a, b)| {
                let (i, j) = (self.index_of(a)?, self.index_of(b)?);
                Some((i.min(j), i.max(j)))
            })
            .collect();
        let families: Vec<Option<String>> = self.env_ids.iter().map(&family).collect();
        let (mut twin_c, mut fam_c, mut all_c, mut all_sq, mut neg, mut pairs) =
            (vec![], vec![], 0.0f64, 0.0f64, 0usize, 0usize);
        for i in 0..n {
            for j in i + 1..n {
                let c = self.cosine(i, j);
                all_c += c as f64;
                all_sq += (c as f64) * (c as f64);
                pairs += 1;
                if c < CONFLICT_COSINE {
                    neg += 1;
                }
                if twin.contains(&(i, j)) {
                    twin_c.push(c);
                } else if families[i].is_some() && families[i] == families[j] {
                    fam_c.push(c);
                }
            }
        }
        let mean = |v: &[f32]| (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32);
        PairSummary {
            twin_mean: mean(&twin_c),
            same_family_mean: mean(&fam_c),
            all_pairs_mean: (all_c / pairs.max(1) as f64) as f32,
            all_pairs_std: {
                let m = all_c / pairs.max(1) as f64;
                (all_sq / pairs.max(1) as f64 - m * m).max(0.0).sqrt() as f32
            },
            negative_fraction: neg as f32 / pairs.max(1) as f32,
        }
    }

    /// The gradient row of environment `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.values[i * self.dim..(i + 1) * self.dim]
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.env_ids.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.env_ids.is_empty()
    }

    /// Encode as safetensors: one F32 tensor `gradients` of shape `[envs, dim]`; env ids,
    /// schema version and projection seed in the header metadata.
    /// Fails when `values` does not hold `env_ids.len() x dim` numbers.
    pub fn to_safetensors(&self) -> Result<Vec<u8>, crate::InvalidValue> {
        let shape_error = |e: &dyn std::fmt::Display| {
            crate::InvalidValue::new(
                "values",
                format!(
                    "{} x {} values (env_ids x dim)",
                    self.env_ids.len(),
                    self.dim
                ),
                format!("{} values ({e})", self.values.len()),
            )
        };
        let bytes: Vec<u8> = self.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = safetensors::tensor::TensorView::new(
            safetensors::Dtype::F32,
            vec![self.env_ids.len(), self.dim],
            &bytes,
        )
        .map_err(|e| shape_error(&e))?;
        let mut meta = HashMap::new();
        meta.insert(
            "schema_version".to_string(),
            GRADIENT_SCHEMA_VERSION.to_string(),
        );
        meta.insert(
            "env_ids".to_string(),
            serde_json::to_string(&self.env_ids).map_err(|e| shape_error(&e))?,
        );
        if let Some(seed) = self.projection_seed {
            meta.insert("projection_seed".to_string(), seed.to_string());
        }
        safetensors::serialize([(GRADIENT_TENSOR, view)], Some(meta)).map_err(|e| shape_error(&e))
    }

    /// Write atomically as safetensors.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), FileError> {
        let path = path.as_ref();
        let bytes = self
            .to_safetensors()
            .map_err(|e| FileError::invalid(path, e.field, e.expected, e.found))?;
        write_atomic(path, &bytes)
    }

    /// Read a gradient file and check shape, metadata and that every value is finite.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, FileError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| FileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_safetensors(&bytes, path)
    }

    /// Decode safetensors bytes; `path` is only used in error messages.
    pub fn from_safetensors(bytes: &[u8], path: &Path) -> Result<Self, FileError> {
        let bad = |field: &str, expected: &str, found: String| {
            FileError::invalid(path, field, expected, found)
        };
        let (_, header) = safetensors::SafeTensors::read_metadata(bytes)
            .map_err(|e| bad("header", "a safetensors header", e.to_string()))?;
        let meta = header.metadata().clone().unwrap_or_default();
        let version = meta.get("schema_version").cloned().unwrap_or_default();
        if version != GRADIENT_SCHEMA_VERSION.to_string() {
            return Err(bad(
                "__metadata__.schema_version",
                &GRADIENT_SCHEMA_VERSION.to_string(),
                format!("{version:?}"),
            ));
        }
        let env_ids: Vec<EnvId> = meta
            .get("env_ids")
            .ok_or_else(|| {
                bad(
                    "__metadata__.env_ids",
                    "a JSON array of env ids",
                    "nothing".into(),
                )
            })
            .and_then(|s| {
                serde_json::from_str(s).map_err(|e| {
                    bad(
                        "__metadata__.env_ids",
                        "a JSON array of env ids",
                        e.to_string(),
                    )
                })
            })?;
        let projection_seed = match meta.get("projection_seed") {
            None => None,
            Some(s) => Some(s.parse::<u64>().map_err(|_| {
                bad(
                    "__metadata__.projection_seed",
                    "an unsigned integer",
                    s.clone(),
                )
            })?),
        };
        let tensors = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| bad("header", "a safetensors file", e.to_string()))?;
        let t = tensors.tensor(GRADIENT_TENSOR).map_err(|_| {
            bad(
                GRADIENT_TENSOR,
                "a tensor named `gradients`",
                "no such tensor".into(),
            )
        })?;
        if t.dtype() != safetensors::Dtype::F32 {
            return Err(bad(
                GRADIENT_TENSOR,
                "dtype F32",
                format!("{:?}", t.dtype()),
            ));
        }
        let shape = t.shape().to_vec();
        if shape.len() != 2 || shape[0] != env_ids.len() {
            return Err(bad(
                "gradients.shape",
                &format!("[{}, dim] (one row per env id)", env_ids.len()),
                format!("{shape:?}"),
            ));
        }
        let values: Vec<f32> = t
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(pos) = values.iter().position(|v| !v.is_finite()) {
            let dim = shape[1].max(1);
            return Err(bad(
                &format!("gradients[{}][{}]", pos / dim, pos % dim),
                "a finite value",
                values[pos].to_string(),
            ));
        }
        Ok(Self {
            env_ids,
            dim: shape[1],
            values,
            projection_seed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_round_trip_and_nan_rejected() {
        let g = GradientSet {
            env_ids: vec![EnvId::new("a/x"), EnvId::new("b/y")],
            dim: 3,
            values: vec![1.0, 2.0, 3.0, -1.0, 0.5, 0.0],
            projection_seed: Some(42),
        };
        let bytes = g.to_safetensors().unwrap();
        let back = GradientSet::from_safetensors(&bytes, Path::new("g.safetensors")).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.row(1), &[-1.0, 0.5, 0.0]);

        let mut bad = g.clone();
        bad.values[4] = f32::NAN;
        let bytes = bad.to_safetensors().unwrap();
        let e = GradientSet::from_safetensors(&bytes, Path::new("g.safetensors"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("g.safetensors") && e.contains("gradients[1][1]"),
            "{e}"
        );
        let e = GradientSet::from_safetensors(b"garbage", Path::new("g.safetensors"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("g.safetensors"), "{e}");
    }

    fn set(ids: &[&str], dim: usize, values: Vec<f32>) -> GradientSet {
        GradientSet {
            env_ids: ids.iter().map(|i| EnvId::new(*i)).collect(),
            dim,
            values,
            projection_seed: None,
        }
    }

    #[test]
    fn cosine_agreement_matches_rows_by_id_and_ranks_pairs() {
        // Four envs in 2-d: a and b agree, c opposes a, d is orthogonal to a.
        let reference = set(
            &["e/a", "e/b", "e/c", "e/d"],
            2,
            vec![1.0, 0.0, 0.9, 0.1, -1.0, 0.2, 0.0, 1.0],
        );
        assert_eq!(reference.pairwise_cosines().len(), 6);
        assert_eq!(reference.pairwise_cosines()[0], reference.cosine(0, 1));
        // The same rows in another order (and scaled): perfect agreement.
        let shuffled = set(
            &["e/d", "e/c", "e/b", "e/a"],
            2,
            vec![0.0, 2.0, -2.0, 0.4, 1.8, 0.2, 2.0, 0.0],
        );
        let a = shuffled.cosine_agreement(&reference, 0.2).unwrap();
        assert_eq!(a.pairs, 6);
        assert_eq!(a.conflict_pairs, 2);
        assert!((a.spearman.unwrap() - 1.0).abs() < 1e-6, "{a:?}");
        assert!((a.kendall.unwrap() - 1.0).abs() < 1e-6, "{a:?}");
        assert_eq!(a.conflict_recall, 1.0);
        assert!(a.mean_abs_diff < 1e-6);
        // c's gradient negated: the pairs with c change sign, the two most negative pairs
        // (a-c, b-c) become aligned and the ranking is mostly lost (rho = 1 - 6*38/210).
        let flipped = set(
            &["e/a", "e/b", "e/c", "e/d"],
            2,
            vec![1.0, 0.0, 0.9, 0.1, 1.0, -0.2, 0.0, 1.0],
        );
        let f = flipped.cosine_agreement(&reference, 0.2).unwrap();
        assert!(
            (f.spearman.unwrap() - (1.0 - 228.0 / 210.0)).abs() < 1e-5,
            "{f:?}"
        );
        assert_eq!(f.conflict_recall, 0.0);
        // Zero rows: cosines 0, a constant list has no ranking.
        let zero = set(&["e/a", "e/b", "e/c", "e/d"], 2, vec![0.0; 8]);
        let z = zero.cosine_agreement(&reference, 0.5).unwrap();
        assert_eq!((z.spearman, z.kendall), (None, None));
    }

    #[test]
    fn cosine_agreement_refuses_other_envs_and_bad_fractions() {
        let reference = set(&["e/a", "e/b", "e/c"], 1, vec![1.0, -1.0, 0.5]);
        let fewer = set(&["e/a", "e/b"], 1, vec![1.0, -1.0]);
        let e = fewer.cosine_agreement(&reference, 0.1).unwrap_err();
        assert!(e.to_string().contains("e/c"), "{e}");
        let more = set(&["e/a", "e/b", "e/c", "e/d"], 1, vec![1.0, -1.0, 0.5, 1.0]);
        let e = more.cosine_agreement(&reference, 0.1).unwrap_err();
        assert_eq!(e.field, "env_ids");
        for q in [0.0, -0.1, 1.5, f32::NAN] {
            let e = reference.cosine_agreement(&reference, q).unwrap_err();
            assert_eq!(e.field, "conflict_fraction");
        }
        let single = set(&["e/a"], 1, vec![1.0]);
        let s = single.cosine_agreement(&single, 0.05).unwrap();
        assert_eq!((s.pairs, s.conflict_pairs, s.spearman), (0, 0, None));
    }

    #[test]
    fn profile_validation_names_the_field() {
        let mut cov = BTreeMap::new();
        cov.insert("navigate".to_string(), 2.0);
        let set = ProfileSet {
            schema_version: PROFILE_SCHEMA_VERSION,
            abilities: vec!["count".into()],
            meta_abilities: vec![],
            profiles: vec![AbilityProfile {
                env: EnvId::new("maze/classic"),
                coverage: cov,
                atomic_counts: BTreeMap::new(),
                transitions: vec![],
                trajectories: 1,
            }],
        };
        let e = set.validate(Path::new("p.json")).unwrap_err().to_string();
        assert!(
            e.contains("profiles[0].coverage") && e.contains("navigate"),
            "{e}"
        );
    }
}
