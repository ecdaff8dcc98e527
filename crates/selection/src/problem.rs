//! The selection problem: which abilities each environment covers, and (optionally) one
//! unit-normalised gradient row per environment.

use std::collections::HashMap;

use envdist_core::{AbilityProfile, EnvId, GradientSet, ProfileSet};

use crate::error::SelectError;
use crate::npy::SparseCounts;

/// Unit-normalised per-environment gradients, row-major `env x dim`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitGradients {
    dim: usize,
    rows: Vec<f32>,
    zero_rows: usize,
}

impl UnitGradients {
    /// Normalise `values` (row-major, `values.len() / dim` rows) to unit length. Zero rows stay
    /// zero (cosine 0 with everything). Non-finite values are errors naming the entry.
    pub fn new(dim: usize, mut values: Vec<f32>, source_name: &str) -> Result<Self, SelectError> {
        if dim == 0 || !values.len().is_multiple_of(dim) {
            return Err(SelectError::invalid(
                source_name,
                "gradients.shape",
                "a positive dim dividing the value count",
                format!("dim {dim} with {} values", values.len()),
            ));
        }
        if let Some(pos) = values.iter().position(|v| !v.is_finite()) {
            return Err(SelectError::invalid(
                source_name,
                format!("gradients[{}][{}]", pos / dim, pos % dim),
                "a finite value",
                values[pos].to_string(),
            ));
        }
        let mut zero_rows = 0;
        for row in values.chunks_exact_mut(dim) {
            let norm = row
                .iter()
                .map(|v| f64::from(*v).powi(2))
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 {
                let inv = (1.0 / norm) as f32;
                row.iter_mut().for_each(|v| *v *= inv);
            } else {
                zero_rows += 1;
            }
        }
        Ok(Self {
            dim,
            rows: values,
            zero_rows,
        })
    }

    /// Columns per row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Unit row of environment `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f32] {
        &self.rows[i * self.dim..(i + 1) * self.dim]
    }

    /// Rows that were all zero (kept as zero: they neither conflict nor agree).
    pub fn zero_rows(&self) -> usize {
        self.zero_rows
    }

    /// Whether environment `i`'s gradient was all zero.
    pub fn is_zero_row(&self, i: usize) -> bool {
        self.row(i).iter().all(|v| *v == 0.0)
    }

    /// Cosine similarity of environments `i` and `j`.
    ///
    /// Why not core's [`envdist_core::cosine`] (the one used by every report and summary):
    /// the greedy optimizers ask for O(n·k) cosines per selection, so the rows are normalised
    /// once here and each cosine is one f32 dot product in a fixed 8-lane order (vectorised,
    /// bit-identical across optimizers). Core's accumulates in f64 from raw rows: the two agree
    /// to within 1e-6 (`unit_cosine_agrees_with_core`), and a selection is always computed
    /// with this one.
    #[inline]
    pub fn cosine(&self, i: usize, j: usize) -> f32 {
        dot(self.row(i), self.row(j))
    }
}

/// Dot product with eight independent accumulators so the compiler vectorises it (plain
/// multiply-add: `f32::mul_add` would call a slow software fma on baseline x86-64). The
/// summation order is fixed, so every optimizer gets bit-identical similarities.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut tail = 0.0f32;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// A pool to select from: environments, the abilities they cover (sparse, with weights such
/// as counts or frequencies), and optional gradients for the conflict term.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    env_ids: Vec<EnvId>,
    abilities: Vec<String>,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    weights: Vec<f32>,
    // The transpose (ability -> environments), kept so exact coverage greedy can update
    // gains incrementally without rebuilding it per selection.
    col_ptr: Vec<usize>,
    col_envs: Vec<u32>,
    gradients: Option<UnitGradients>,
}

fn transpose(
    rows: usize,
    cols: usize,
    indptr: &[usize],
    indices: &[u32],
) -> (Vec<usize>, Vec<u32>) {
    let mut col_ptr = vec![0usize; cols + 1];
    for &c in indices {
        col_ptr[c as usize + 1] += 1;
    }
    for c in 0..cols {
        col_ptr[c + 1] += col_ptr[c];
    }
    let mut fill = col_ptr.clone();
    let mut col_envs = vec![0u32; indices.len()];
    for r in 0..rows {
        for &c in &indices[indptr[r]..indptr[r + 1]] {
            col_envs[fill[c as usize]] = r as u32;
            fill[c as usize] += 1;
        }
    }
    (col_ptr, col_envs)
}

/// The first name that repeats: `(index of its first occurrence, index of the repeat, name)`.
fn first_duplicate<'a>(names: impl Iterator<Item = &'a str>) -> Option<(usize, usize, &'a str)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, name) in names.enumerate() {
        if let Some(&first) = seen.get(name) {
            return Some((first, i, name));
        }
        seen.insert(name, i);
    }
    None
}

impl Problem {
    /// Build from a core [`ProfileSet`] (coverage keys are the abilities) and optional
    /// gradients, matched to profiles by environment id.
    pub fn from_profiles(
        profiles: &ProfileSet,
        gradients: Option<&GradientSet>,
    ) -> Result<Self, SelectError> {
        profiles.validate(std::path::Path::new("profiles"))?;
        let index: HashMap<&str, u32> = profiles
            .abilities
            .iter()
            .enumerate()
            .map(|(i, a)| (a.as_str(), i as u32))
            .collect();
        let mut indptr = vec![0];
        let mut indices = Vec::new();
        let mut weights = Vec::new();
        for p in &profiles.profiles {
            let mut row: Vec<(u32, f32)> = p
                .coverage
                .iter()
                .filter(|(_, w)| **w > 0.0)
                .filter_map(|(a, w)| index.get(a.as_str()).map(|i| (*i, *w)))
                .collect();
            row.sort_by_key(|(i, _)| *i);
            indices.extend(row.iter().map(|(i, _)| *i));
            weights.extend(row.iter().map(|(_, w)| *w));
            indptr.push(indices.len());
        }
        let n = profiles.profiles.len();
        let (col_ptr, col_envs) = transpose(n, profiles.abilities.len(), &indptr, &indices);
        let problem = Self {
            env_ids: profiles.profiles.iter().map(|p| p.env.clone()).collect(),
            abilities: profiles.abilities.clone(),
            indptr,
            indices,
            weights,
            col_ptr,
            col_envs,
            gradients: None,
        };
        match gradients {
            Some(g) => problem.with_gradients(g),
            None => Ok(problem),
        }
    }

    /// Build from a sparse count matrix (rows = environments). Environment ids default to
    /// `env/<row>` and abilities to `a<col>`; given ones must be unique (a duplicate is refused,
    /// naming both positions).
    pub fn from_counts(
        counts: SparseCounts,
        env_ids: Option<Vec<EnvId>>,
        abilities: Option<Vec<String>>,
    ) -> Result<Self, SelectError> {
        let env_ids = env_ids.unwrap_or_else(|| {
            (0..counts.rows)
                .map(|i| EnvId::new(format!("env/{i}")))
                .collect()
        });
        let abilities =
            abilities.unwrap_or_else(|| (0..counts.cols).map(|j| format!("a{j}")).collect());
        if counts.rows >= u32::MAX as usize || counts.cols >= u32::MAX as usize {
            return Err(SelectError::invalid(
                "problem",
                "counts",
                "fewer than 2^32 - 1 rows and columns",
                format!("{} x {}", counts.rows, counts.cols),
            ));
        }
        if env_ids.len() != counts.rows {
            return Err(SelectError::invalid(
                "problem",
                "env_ids",
                format!("{} ids (one per row)", counts.rows),
                env_ids.len().to_string(),
            ));
        }
        if abilities.len() != counts.cols {
            return Err(SelectError::invalid(
                "problem",
                "abilities",
                format!("{} names (one per column)", counts.cols),
                abilities.len().to_string(),
            ));
        }
        // A duplicate id would make a selection name one environment twice, and must_include /
        // must_exclude (which resolve ids) pick only one of the rows.
        if let Some((field, first, again, name)) =
            first_duplicate(env_ids.iter().map(|e| e.as_str()))
                .map(|(i, j, n)| ("env_ids", i, j, n))
                .or_else(|| {
                    first_duplicate(abilities.iter().map(String::as_str))
                        .map(|(i, j, n)| ("abilities", i, j, n))
                })
        {
            return Err(SelectError::invalid(
                "problem",
                format!("{field}[{again}]"),
                format!("unique names ({name:?} is already {field}[{first}])"),
                format!("{name:?} again"),
            ));
        }
        let ok = counts.indptr.len() == counts.rows + 1
            && counts.indptr.first() == Some(&0)
            && counts.indptr.windows(2).all(|w| w[0] <= w[1])
            && counts.indptr.last() == Some(&counts.indices.len())
            && counts.values.len() == counts.indices.len()
            && counts.indptr.windows(2).all(|w| {
                counts.indices[w[0]..w[1]].windows(2).all(|p| p[0] < p[1])
                    && counts.indices[w[0]..w[1]]
                        .iter()
                        .all(|c| (*c as usize) < counts.cols)
            });
        if !ok {
            return Err(SelectError::invalid(
                "problem",
                "counts",
                "a well-formed sparse matrix (ascending columns inside each row)",
                "an inconsistent one",
            ));
        }
        if let Some(p) = counts
            .values
            .iter()
            .position(|v| !v.is_finite() || *v <= 0.0)
        {
            return Err(SelectError::invalid(
                "problem",
                format!("counts.values[{p}]"),
                "a finite positive count",
                counts.values[p].to_string(),
            ));
        }
        let (col_ptr, col_envs) =
            transpose(counts.rows, counts.cols, &counts.indptr, &counts.indices);
        Ok(Self {
            env_ids,
            abilities,
            indptr: counts.indptr,
            indices: counts.indices,
            weights: counts.values,
            col_ptr,
            col_envs,
            gradients: None,
        })
    }

    /// Attach gradients, matching rows to environments by id. Every environment needs a row
    /// and every row an environment; dimensions and values are checked.
    pub fn with_gradients(mut self, gradients: &GradientSet) -> Result<Self, SelectError> {
        if gradients.values.len() != gradients.env_ids.len() * gradients.dim {
            return Err(SelectError::invalid(
                "gradients",
                "values",
                format!("{} x {} values", gradients.env_ids.len(), gradients.dim),
                gradients.values.len().to_string(),
            ));
        }
        let mut by_id: HashMap<&EnvId, usize> = HashMap::with_capacity(gradients.len());
        for (i, id) in gradients.env_ids.iter().enumerate() {
            if by_id.insert(id, i).is_some() {
                return Err(SelectError::invalid(
                    "gradients",
                    "env_ids",
                    "unique environment ids",
                    format!("duplicate {:?}", id.0),
                ));
            }
        }
        let mine: std::collections::HashSet<&EnvId> = self.env_ids.iter().collect();
        if let Some(extra) = gradients.env_ids.iter().find(|id| !mine.contains(id)) {
            return Err(SelectError::UnknownGradientRow { env: extra.clone() });
        }
        let dim = gradients.dim;
        let mut values = Vec::with_capacity(self.env_ids.len() * dim);
        for id in &self.env_ids {
            let row = by_id
                .get(id)
                .ok_or_else(|| SelectError::MissingGradient { env: id.clone() })?;
            values.extend_from_slice(gradients.row(*row));
        }
        self.gradients = Some(UnitGradients::new(dim, values, "gradients")?);
        Ok(self)
    }

    /// The same problem with its environments in `order` (`order[i]` is the old index of new
    /// environment `i`; a permutation of `0..n_envs`). Everything about an environment moves
    /// with it, so the problem is the one its profiles would build in that order.
    pub(crate) fn permuted(&self, order: &[usize]) -> Problem {
        debug_assert_eq!(order.len(), self.n_envs());
        let mut indptr = Vec::with_capacity(order.len() + 1);
        indptr.push(0);
        let mut indices = Vec::with_capacity(self.indices.len());
        let mut weights = Vec::with_capacity(self.weights.len());
        for &old in order {
            let span = self.indptr[old]..self.indptr[old + 1];
            indices.extend_from_slice(&self.indices[span.clone()]);
            weights.extend_from_slice(&self.weights[span]);
            indptr.push(indices.len());
        }
        let (col_ptr, col_envs) = transpose(order.len(), self.abilities.len(), &indptr, &indices);
        let gradients = self.gradients.as_ref().map(|g| UnitGradients {
            dim: g.dim,
            rows: order
                .iter()
                .flat_map(|&old| g.row(old).iter().copied())
                .collect(),
            zero_rows: g.zero_rows,
        });
        Problem {
            env_ids: order.iter().map(|&old| self.env_ids[old].clone()).collect(),
            abilities: self.abilities.clone(),
            indptr,
            indices,
            weights,
            col_ptr,
            col_envs,
            gradients,
        }
    }

    /// Attach gradients given in this problem's environment order (`n x dim`, row-major).
    pub fn with_gradient_rows(mut self, dim: usize, values: Vec<f32>) -> Result<Self, SelectError> {
        if dim == 0 || values.len() != self.n_envs() * dim {
            return Err(SelectError::invalid(
                "gradients",
                "values",
                format!("{} x {dim} values", self.n_envs()),
                values.len().to_string(),
            ));
        }
        self.gradients = Some(UnitGradients::new(dim, values, "gradients")?);
        Ok(self)
    }

    /// Number of environments.
    pub fn n_envs(&self) -> usize {
        self.env_ids.len()
    }

    /// Number of abilities.
    pub fn n_abilities(&self) -> usize {
        self.abilities.len()
    }

    /// Environment ids in row order.
    pub fn env_ids(&self) -> &[EnvId] {
        &self.env_ids
    }

    /// Ability names in column order.
    pub fn abilities(&self) -> &[String] {
        &self.abilities
    }

    /// Abilities environment `i` covers (ascending column indices).
    #[inline]
    pub fn env_abilities(&self, i: usize) -> &[u32] {
        &self.indices[self.indptr[i]..self.indptr[i + 1]]
    }

    /// Environments that cover ability `a` (ascending).
    #[inline]
    pub fn ability_envs(&self, a: usize) -> &[u32] {
        &self.col_envs[self.col_ptr[a]..self.col_ptr[a + 1]]
    }

    /// The weights (counts or frequencies) of `env_abilities(i)`.
    pub fn env_weights(&self, i: usize) -> &[f32] {
        &self.weights[self.indptr[i]..self.indptr[i + 1]]
    }

    /// Number of (environment, ability) pairs.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// The gradients, if attached.
    pub fn gradients(&self) -> Option<&UnitGradients> {
        self.gradients.as_ref()
    }

    /// Index of an environment id.
    pub fn env_index(&self, id: &EnvId) -> Option<usize> {
        self.env_ids.iter().position(|e| e == id)
    }

    /// Per ability, how many environments cover it and its summed weight.
    pub fn ability_totals(&self) -> (Vec<u32>, Vec<f64>) {
        let mut envs = vec![0u32; self.n_abilities()];
        let mut mass = vec![0f64; self.n_abilities()];
        for (c, w) in self.indices.iter().zip(&self.weights) {
            envs[*c as usize] += 1;
            mass[*c as usize] += f64::from(*w);
        }
        (envs, mass)
    }

    /// The coverage as a core [`ProfileSet`] (e.g. to save a synthetic pool).
    pub fn to_profile_set(&self) -> ProfileSet {
        let profiles = (0..self.n_envs())
            .map(|i| {
                let coverage = self
                    .env_abilities(i)
                    .iter()
                    .zip(self.env_weights(i))
                    .map(|(c, w)| (self.abilities[*c as usize].clone(), *w))
                    .collect();
                AbilityProfile::of_coverage(self.env_ids[i].clone(), coverage)
            })
            .collect();
        ProfileSet::of_abilities(self.abilities.clone(), profiles)
    }

    /// The (unit-normalised) gradients as a core [`GradientSet`], if attached.
    pub fn gradient_set(&self) -> Option<GradientSet> {
        self.gradients.as_ref().map(|g| GradientSet {
            env_ids: self.env_ids.clone(),
            dim: g.dim,
            values: g.rows.clone(),
            projection_seed: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> ProfileSet {
        let mk = |env: &str, cov: &[(&str, f32)]| AbilityProfile {
            trajectories: 4,
            ..AbilityProfile::of_coverage(
                EnvId::new(env),
                cov.iter().map(|(a, w)| (a.to_string(), *w)).collect(),
            )
        };
        ProfileSet::of_abilities(
            vec!["count".into(), "navigate".into(), "push".into()],
            vec![
                mk("maze/a", &[("navigate", 3.0), ("count", 0.0)]),
                mk("count/b", &[("count", 2.0), ("push", 1.0)]),
            ],
        )
    }

    fn grads(ids: &[&str], dim: usize, values: Vec<f32>) -> GradientSet {
        GradientSet {
            env_ids: ids.iter().map(|s| EnvId::new(*s)).collect(),
            dim,
            values,
            projection_seed: None,
        }
    }

    #[test]
    fn profiles_and_gradients_match_by_id() {
        let g = grads(&["count/b", "maze/a"], 2, vec![0.0, -2.0, 3.0, 4.0]);
        let p = Problem::from_profiles(&profiles(), Some(&g)).unwrap();
        assert_eq!(p.env_abilities(0), &[1]);
        assert_eq!(p.env_abilities(1), &[0, 2]);
        let u = p.gradients().unwrap();
        assert_eq!(u.row(0), &[0.6, 0.8]);
        assert_eq!(u.row(1), &[0.0, -1.0]);
        assert!((u.cosine(0, 1) + 0.8).abs() < 1e-6);
        let back = p.to_profile_set();
        assert_eq!(back.profiles[1].coverage.len(), 2);
    }

    #[test]
    fn gradient_mismatches_name_the_id() {
        let g = grads(&["maze/a"], 2, vec![1.0, 0.0]);
        let e = Problem::from_profiles(&profiles(), Some(&g))
            .unwrap_err()
            .to_string();
        assert!(e.contains("count/b"), "{e}");
        let g = grads(&["maze/a", "count/b", "odd/x"], 1, vec![1.0, 0.0, 2.0]);
        let e = Problem::from_profiles(&profiles(), Some(&g))
            .unwrap_err()
            .to_string();
        assert!(e.contains("odd/x"), "{e}");
        let g = grads(&["maze/a", "count/b"], 1, vec![1.0, f32::NAN]);
        let e = Problem::from_profiles(&profiles(), Some(&g))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gradients[1][0]"), "{e}");
    }

    #[test]
    fn unit_cosine_agrees_with_core() {
        let mut rng = envdist_core::Rng::seed_from_u64(5);
        let dim = 37;
        let values: Vec<f32> = (0..4 * dim).map(|_| rng.next_f32() * 2.0 - 1.0).collect();
        let unit = UnitGradients::new(dim, values.clone(), "test").unwrap();
        for i in 0..4 {
            for j in 0..4 {
                let core =
                    envdist_core::cosine(&values[i * dim..][..dim], &values[j * dim..][..dim]);
                assert!((unit.cosine(i, j) - core).abs() < 1e-6, "{i} {j}");
            }
        }
    }

    #[test]
    fn dot_matches_naive_sum() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.25 - 2.0).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.125).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn duplicate_ids_and_ability_names_are_refused_naming_both_rows() {
        let counts =
            || SparseCounts::from_dense(3, 2, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], "t").unwrap();
        let ids = |v: &[&str]| Some(v.iter().map(|s| EnvId::new(*s)).collect());
        let e = Problem::from_counts(counts(), ids(&["a/x", "b/y", "a/x"]), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("env_ids[2]") && e.contains("\"a/x\" is already env_ids[0]"),
            "{e}"
        );
        let e = Problem::from_counts(counts(), None, Some(vec!["n".into(), "n".into()]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("abilities[1]") && e.contains("already abilities[0]"),
            "{e}"
        );
        assert!(Problem::from_counts(counts(), ids(&["a/x", "b/y", "c/z"]), None).is_ok());
    }
}
