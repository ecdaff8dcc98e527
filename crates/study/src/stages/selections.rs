//! Stage `selections`: for every training seed, from that seed's own gradients, AES (full
//! ability coverage enforced, seeded tie-breaks, zero-gradient environments treated as
//! unknown, each constraint relaxed only where infeasible), AES without conflict,
//! coverage-only and AES on the control pool; and a random-k draw per seed on both pools. Every choice is a field of `envdist-selection`'s [`SelectConfig`]
//! ([`study_aes_config`]), so `select` in Rust, `xtask select` and Python's `envdist.select`
//! make the same selection from the same profiles and gradients.

use std::collections::BTreeMap;

use envdist_core::{EnvId, GradientSet, ProfileSet};
use envdist_selection::{Baseline, Problem, SelectConfig, Selection, TieBreak, baseline, select};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::ExperimentConfig;
use crate::error::{Context, Result};
use crate::model::{EnvSource, SelectionId, SelectionSummary};

/// Every selection the arms train on, by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SelectionSet(BTreeMap<SelectionId, SelectionSummary>);

impl SelectionSet {
    /// The selection `id`, or an error naming it.
    pub fn get(&self, id: SelectionId) -> Result<&SelectionSummary> {
        self.0
            .get(&id)
            .with_context(|| format!("no selection named {id}"))
    }

    /// Every selection, in report order (AES, its ablations, random draws, control pool).
    pub fn in_order(&self) -> Vec<SelectionSummary> {
        self.0.values().cloned().collect()
    }

    /// A set of these selections (tests).
    pub fn from_summaries(items: impl IntoIterator<Item = SelectionSummary>) -> Self {
        Self(items.into_iter().map(|s| (s.name, s)).collect())
    }
}

/// The stage's key: profiles, every training seed's gradients (at H4), the master seed, the
/// number of seeds (one selection of each kind per seed) and the `selection` section, over
/// selection's code.
pub fn key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    profiles: &StageKey,
    gradients: &[StageKey],
) -> Result<StageKey> {
    let mut key =
        StageKey::new(code, &[Crate::Core, Crate::Selection])?.after("profiles", profiles)?;
    for (i, g) in gradients.iter().enumerate() {
        // Seed 0's part keeps the name it had when there was one set of gradients.
        let name = if i == 0 {
            "gradients".to_string()
        } else {
            format!("gradients-seed{i}")
        };
        key = key.after(&name, g)?;
    }
    key.with("seed", &cfg.seed)?
        .with("seeds", &cfg.seeds)?
        .with("selection", &cfg.selection)
}

/// The study's AES over a pool of `pool_size` environments: the `selection` section with its
/// budget capped at the pool (the section's other choices: [`crate::presets::study_selection`]).
pub fn study_aes_config(section: &SelectConfig, pool_size: usize, certify: bool) -> SelectConfig {
    SelectConfig {
        k: section.k.min(pool_size),
        certify,
        ..section.clone()
    }
}

/// The selection problem over `envs`: their profiles and gradients.
pub fn problem(profiles: &ProfileSet, grads: &GradientSet, envs: &[EnvId]) -> Result<Problem> {
    let profiles = profiles.subset(envs);
    let profiled: Vec<EnvId> = profiles.profiles.iter().map(|p| p.env.clone()).collect();
    Ok(Problem::from_profiles(
        &profiles,
        Some(&grads.subset(&profiled)),
    )?)
}

fn summarise(id: SelectionId, s: &Selection, grads: &GradientSet) -> SelectionSummary {
    let (mean_pairwise_cosine, conflicting_pairs) = grads.within(&s.env_ids);
    SelectionSummary {
        name: id,
        envs: s.env_ids.clone(),
        covered: s.covered,
        coverable: s.coverable,
        mean_pairwise_cosine,
        conflicting_pairs,
        certificate_gap: s.certificate.as_ref().and_then(|c| c.gap_fraction),
        note: s.relaxation.as_ref().map(|r| r.to_string()),
    }
}

/// Every selection the arms train on: for each training seed `s`, AES and its ablations from
/// that seed's gradients `grads[s]`, and a random draw.
pub fn run(
    cfg: &ExperimentConfig,
    pool: &PoolStage,
    profiles: &ProfileSet,
    grads: &[GradientSet],
    transfer_response: Option<&GradientSet>,
) -> Result<SelectionSet> {
    let mut out = Vec::new();
    for (seed, g) in cfg.seed_indices().zip(grads) {
        for (envs, control) in [(&pool.pool, false), (&pool.control, true)] {
            out.extend(seed_selections(cfg, seed, envs, control, profiles, g)?);
        }
        // AES with the conflict term from measured transfer: the same problem and settings,
        // the transfer response in place of the gradients (one matrix for every seed: the
        // seeds differ in their PPO streams only).
        if let Some(response) = transfer_response {
            let problem = problem(profiles, response, &pool.pool)?;
            let sc = study_aes_config(&cfg.selection, pool.pool.len(), true);
            let s = select(&problem, &sc)?;
            let id = SelectionId {
                source: EnvSource::AesTransfer,
                seed,
            };
            out.push(summarise(id, &s, g));
        }
    }
    Ok(SelectionSet::from_summaries(out))
}

/// The selections of one training seed on the main pool or the control pool.
fn seed_selections(
    cfg: &ExperimentConfig,
    seed: u32,
    envs: &[EnvId],
    control: bool,
    profiles: &ProfileSet,
    grads: &GradientSet,
) -> Result<Vec<SelectionSummary>> {
    let mut out = Vec::new();
    let problem = problem(profiles, grads, envs)?;
    let sc = study_aes_config(&cfg.selection, envs.len(), true);
    let aes = select(&problem, &sc)?;
    let (aes_source, random_source) = if control {
        (EnvSource::ControlAes, EnvSource::ControlRandomK)
    } else {
        (EnvSource::Aes, EnvSource::RandomK)
    };
    let id = |source: EnvSource| SelectionId { source, seed };
    out.push(summarise(id(aes_source), &aes, grads));
    if !control {
        // The ablations share AES's constraints as AES could keep them.
        let shared = SelectConfig {
            relax: false,
            exclude_zero_gradient: sc.exclude_zero_gradient && aes.relaxation.is_none(),
            ..sc.clone()
        };
        for (source, which) in [
            (EnvSource::AesNoConflict, Baseline::NoConflict),
            (EnvSource::CoverageOnly, Baseline::CoverageOnly),
        ] {
            let s = baseline(&problem, &shared, which)?;
            out.push(summarise(id(source), &s, grads));
        }
    }
    // Random draws ignore coverage and gradients: the paper's random-k baseline.
    let plain = SelectConfig {
        certify: false,
        tie_break: TieBreak::Seeded(cfg.seed),
        ..SelectConfig::aes(cfg.selection.k.min(envs.len()))
    };
    let draw = Baseline::Random {
        seed: cfg.seed ^ (0x52_4e44 + seed as u64) ^ (control as u64) << 40,
    };
    out.push(summarise(
        id(random_source),
        &baseline(&problem, &plain, draw)?,
        grads,
    ));
    Ok(out)
}

/// The study's AES selection over `envs` with these gradients (no certificate), as the
/// selections stage makes it: the online arm's re-selections and `conflict-estimates` use it.
pub fn study_aes(
    section: &SelectConfig,
    profiles: &ProfileSet,
    grads: &GradientSet,
    envs: &[EnvId],
) -> Result<Selection> {
    let problem = problem(profiles, grads, envs)?;
    Ok(select(
        &problem,
        &study_aes_config(section, envs.len(), false),
    )?)
}
