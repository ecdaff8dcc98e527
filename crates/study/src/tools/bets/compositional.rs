//! Bet 1's pilot: does transfer follow skills on the compositional sub-pool (operations x
//! looks, `SuiteConfig::compositional`)? `cargo xtask bet compositional`.
//!
//! One process, the study's own stages: a base cloned from the solvers on the default pool
//! plus the sub-pool, profiles of the same envs, then `probes` sources of the sub-pool (drawn
//! by the transfer matrix's strata of profile overlap), each fine-tuned alone at H4 with
//! `seeds` PPO streams and evaluated on every env of the sub-pool. Transfer to a target is its
//! success after minus the base's on the same instances, averaged over the fine-tune seeds.
//! Pairs whose target shares the source's family (its noisy variant, or itself) are left out:
//! the bet is about what two different environments share.
//!
//! The go/no-go statistics, both over probes crossed with target families:
//! - **operation gap**: per probe, mean transfer to targets of the same operation on another
//!   look minus mean transfer to targets sharing neither operation nor look; its mean over
//!   probes and the bootstrap standard error;
//! - **profile rank**: Spearman of the profile overlap (meta-ability coverage cosine) of source
//!   and target with the transfer, over every pair.
//!
//! Development only: the master seeds are the pilot's own (never a record's), the evaluation
//! instances the development ones. Every fine-tune is cached in the output directory and a
//! rerun resumes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use envdist_core::{EnvId, ProfileSet};
use envdist_envs::{Suite, SuiteConfig};
use envdist_trainer::PolicyModel;
use serde::{Deserialize, Serialize};

use crate::config::{EvalConfig, ExperimentConfig, Preset};
use crate::error::Result;
use crate::layout::RunLayout;
use crate::model::ProbeEstimate;
use crate::observer::Observer;
use crate::preconditions::crossed::{Pair, crossed_rank};
use crate::stages::base;
use crate::stages::eval::evaluate;
use crate::stages::pool::PoolStage;
use crate::stages::preconditions::sources;
use crate::stages::profiles;
use crate::stages::transfer::{Harness, fine_tune};
use crate::stats::bootstrap_replicates;

use super::BET_SCHEMA_VERSION;

/// What the pilot measures; the defaults are the pre-registered design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompositionalPilot {
    /// The design's name (the docs number them).
    pub design: String,
    /// Sources fine-tuned.
    pub probes: usize,
    /// Fine-tune seeds per source (master seeds `1..=seeds`; records use 2026).
    pub seeds: u64,
    /// Environment steps of each fine-tune.
    pub steps: u64,
    /// Evaluation instances per target and scale.
    pub eval_episodes: u32,
    /// Demonstrations the base clones.
    pub base_samples: u64,
    /// Bootstrap replicates.
    pub bootstrap: u32,
}

impl Default for CompositionalPilot {
    fn default() -> Self {
        Self {
            design: "d1".into(),
            probes: 30,
            seeds: 2,
            steps: 16_000,
            eval_episodes: 96,
            base_samples: 200_000,
            bootstrap: 2_000,
        }
    }
}

/// The pre-registered thresholds of bet 1.
pub const GO_GAP_POINTS: f64 = 5.0;
/// The largest standard error of the operation gap a go accepts.
pub const GO_GAP_MAX_SE: f64 = 1.5;
/// The smallest profile rank a go accepts (its interval's low end also above 0).
pub const GO_PROFILE_RANK: f64 = 0.25;

/// One fine-tune: its source, seed and success on every target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct FineTune {
    pub source: EnvId,
    pub seed: u64,
    pub after: Vec<f32>,
}

/// The operation gap: mean over probes, its interval and its bootstrap standard error.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gap {
    /// Mean over probes, points.
    pub estimate: f64,
    /// 2.5th percentile of the replicates (probes crossed with target families).
    pub lo: f64,
    /// 97.5th percentile of the replicates.
    pub hi: f64,
    /// Standard deviation of the replicates.
    pub se: f64,
    /// Probes it is computed over.
    pub probes: usize,
}

/// Mean transfer by relation, points.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ByRelation {
    /// Targets of the source's operation on another look.
    pub same_operation: f64,
    /// Targets of the source's look asking another operation.
    pub same_look: f64,
    /// Targets sharing neither.
    pub unrelated: f64,
    /// The source's other variant (noisy or classic).
    pub same_family: f64,
}

/// What the pilot found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PilotResults {
    /// [`BET_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What was measured.
    pub pilot: CompositionalPilot,
    /// The sub-pool's environments (the targets).
    pub targets: Vec<EnvId>,
    /// The base's success on each target (rate).
    pub base_success: Vec<f32>,
    /// The sources, in drawing order.
    pub sources: Vec<EnvId>,
    /// Each source's mean success gain on itself, points.
    pub self_gain: Vec<f64>,
    /// Mean transfer by how target and source relate (every probe and target).
    pub by_relation: ByRelation,
    /// Same operation on another look minus unrelated, per probe.
    pub operation_gap: Gap,
    /// Spearman of profile overlap with transfer over the pairs of other families.
    pub profile_rank: Option<ProbeEstimate>,
    /// `go` or `no-go`, against the thresholds fixed before the pilot ran.
    pub decision: String,
    /// Wall seconds of this invocation (a resumed run counts only what it computed).
    pub seconds: f64,
}

/// How a target relates to a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relation {
    SameFamily,
    SameOperation,
    SameLook,
    Unrelated,
}

/// The operation and the look of a sub-pool env: the look from its `look-` tag, the
/// operation as what its family name (`<operation>-<look>`) keeps once the look is cut off.
fn parts(suite: &Suite, env: &EnvId) -> (String, String) {
    let spec = suite.spec(env);
    let tags: Vec<&String> = spec
        .map(|s| s.abilities.iter().collect())
        .unwrap_or_default();
    let look = tags
        .iter()
        .find(|t| t.starts_with("look-"))
        .map(|t| t.to_string())
        .unwrap_or_default();
    let family = spec.map(|s| s.family.clone()).unwrap_or_default();
    let operation = family
        .strip_suffix(look.trim_start_matches("look-"))
        .unwrap_or(&family)
        .trim_end_matches('-')
        .to_string();
    (operation, look)
}

fn relation(suite: &Suite, source: &EnvId, target: &EnvId) -> Relation {
    let family = |e: &EnvId| suite.spec(e).map(|s| s.family.clone());
    if family(source) == family(target) {
        return Relation::SameFamily;
    }
    let (so, sl) = parts(suite, source);
    let (to, tl) = parts(suite, target);
    match (so == to, sl == tl) {
        (true, _) => Relation::SameOperation,
        (false, true) => Relation::SameLook,
        (false, false) => Relation::Unrelated,
    }
}

/// The compositional sub-pool of `suite`: its pool envs of the families the default suite
/// lacks.
pub(super) fn sub_pool(suite: &Suite) -> Vec<EnvId> {
    let default_families = Suite::default().families();
    suite
        .pool_specs()
        .into_iter()
        .filter(|s| !default_families.contains(&s.family.as_str()))
        .map(|s| s.id)
        .collect()
}

/// Run the pilot into `out` (cached: a rerun resumes).
pub fn run_compositional(
    pilot: &CompositionalPilot,
    out: &Path,
    observer: &dyn Observer,
) -> Result<PilotResults> {
    let started = Instant::now();
    let mut cfg = ExperimentConfig::preset(Preset::Cpu);
    cfg.protocol.split = crate::protocol::Split::Development;
    cfg.seed = 1;
    cfg.base.samples = pilot.base_samples;
    cfg.transfer.steps = pilot.steps;
    let suite = Arc::new(Suite::new(SuiteConfig {
        hint_style: cfg.suite.hint_style,
        compositional: true,
        ..SuiteConfig::with_canvas(cfg.suite.canvas)
    })?);
    let pool: Vec<EnvId> = suite.pool_specs().into_iter().map(|s| s.id).collect();
    let sub = sub_pool(&suite);
    let stage = PoolStage {
        families: suite.families().len(),
        conflict_pairs: suite.conflict_pairs(&pool),
        pool,
        ood: vec![],
        control: vec![],
    };
    let layout = RunLayout::new(out)?;
    envdist_core::io::write_json_atomic(out.join("pilot.json"), pilot)?;
    if !layout.base_checkpoint().exists() {
        base::run(&cfg, suite.clone(), &stage, &layout, observer)?;
    }
    let base = PolicyModel::load(&layout.base_checkpoint(), cfg.device)?;
    if !layout.profiles_file().exists() {
        profiles::run(&cfg, &suite, &stage, &layout, observer)?;
    }
    let profile_set = ProfileSet::read(layout.profiles_file())?;
    let eval = EvalConfig {
        episodes: pilot.eval_episodes,
        ..cfg.evaluation()
    };
    let base_file = out.join("base-eval.json");
    let base_success: Vec<f32> = match envdist_core::io::read_json(&base_file, None) {
        Ok(v) => v,
        Err(_) => {
            let m = evaluate(&eval, &suite, &sub, &base)?.means();
            let v: Vec<f32> = sub.iter().map(|e| m[e]).collect();
            envdist_core::io::write_json_atomic(&base_file, &v)?;
            v
        }
    };
    let drawn: Vec<EnvId> = sources(&sub, &profile_set, pilot.probes, 4, cfg.seed)
        .into_iter()
        .map(|s| s.env)
        .collect();
    let probes_dir = out.join("probes");
    std::fs::create_dir_all(&probes_dir).map_err(crate::error::io_error(&probes_dir))?;
    let mut runs: Vec<FineTune> = Vec::new();
    for (k, source) in drawn.iter().enumerate() {
        for seed in 1..=pilot.seeds {
            let file = out.join(format!("probes/{k:02}-seed{seed}.json"));
            if let Ok(run) = envdist_core::io::read_json::<FineTune>(&file, None) {
                runs.push(run);
                continue;
            }
            let tuned_cfg = ExperimentConfig {
                seed,
                ..cfg.clone()
            };
            let (policy, _) = fine_tune(
                &tuned_cfg,
                &cfg.transfer,
                &suite,
                &base,
                source,
                Harness::H4,
                observer,
            )?;
            let m = evaluate(&eval, &suite, &sub, &policy)?.means();
            let run = FineTune {
                source: source.clone(),
                seed,
                after: sub.iter().map(|e| m[e]).collect(),
            };
            envdist_core::io::write_json_atomic(&file, &run)?;
            runs.push(run);
        }
    }
    let results = analyse(
        pilot,
        &suite,
        &sub,
        &base_success,
        &drawn,
        &runs,
        &profile_set,
        started.elapsed().as_secs_f64(),
    );
    envdist_core::io::write_json_atomic(out.join("results.json"), &results)?;
    envdist_core::io::write_atomic(out.join("REPORT.md"), report(&results).as_bytes())?;
    Ok(results)
}

/// The pilot's statistics from its runs.
#[allow(clippy::too_many_arguments)]
pub(super) fn analyse(
    pilot: &CompositionalPilot,
    suite: &Suite,
    targets: &[EnvId],
    base_success: &[f32],
    drawn: &[EnvId],
    runs: &[FineTune],
    profiles: &ProfileSet,
    seconds: f64,
) -> PilotResults {
    const PTS: f64 = 100.0;
    // Mean transfer of each probe to each target over its seeds.
    let transfer: Vec<Vec<f64>> = drawn
        .iter()
        .map(|s| {
            let mine: Vec<&FineTune> = runs.iter().filter(|r| &r.source == s).collect();
            (0..targets.len())
                .map(|i| {
                    let after =
                        mine.iter().map(|r| r.after[i] as f64).sum::<f64>() / mine.len() as f64;
                    PTS * (after - base_success[i] as f64)
                })
                .collect()
        })
        .collect();
    let mut families: Vec<String> = targets
        .iter()
        .filter_map(|t| suite.spec(t).map(|s| s.family.clone()))
        .collect();
    families.sort();
    families.dedup();
    let family_of = |e: &EnvId| {
        suite
            .spec(e)
            .and_then(|s| families.binary_search(&s.family).ok())
            .unwrap_or_default()
    };
    let profile = |e: &EnvId| profiles.profiles.iter().find(|p| &p.env == e);
    let mut pairs = Vec::new();
    let mut cells: Vec<Vec<Vec<(Relation, f64)>>> =
        vec![vec![Vec::new(); families.len()]; drawn.len()];
    let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for (p, source) in drawn.iter().enumerate() {
        for (i, t) in targets.iter().enumerate() {
            let r = relation(suite, source, t);
            let y = (transfer[p][i] * 1e6).round() / 1e6;
            let name = match r {
                Relation::SameFamily => "same_family",
                Relation::SameOperation => "same_operation",
                Relation::SameLook => "same_look",
                Relation::Unrelated => "unrelated",
            };
            if t != source {
                let e = sums.entry(name).or_default();
                e.0 += y;
                e.1 += 1;
            }
            if r == Relation::SameFamily {
                continue;
            }
            cells[p][family_of(t)].push((r, y));
            let x = profile(source)
                .zip(profile(t))
                .map(|(a, b)| envdist_profiling::pipeline::coverage_cosine(a, b));
            pairs.push(Pair {
                probe: p,
                family: family_of(t),
                transfer: y,
                x,
            });
        }
    }
    let mean_of = |name: &str| sums.get(name).map_or(f64::NAN, |(s, n)| s / *n as f64);
    let gap_stat = |ps: &[usize], fs: &[usize]| {
        let (mut total, mut n) = (0.0, 0usize);
        for &p in ps {
            let (mut same, mut ns, mut unrelated, mut nu) = (0.0, 0usize, 0.0, 0usize);
            for &f in fs {
                for &(r, y) in &cells[p][f] {
                    match r {
                        Relation::SameOperation => {
                            same += y;
                            ns += 1;
                        }
                        Relation::Unrelated => {
                            unrelated += y;
                            nu += 1;
                        }
                        _ => {}
                    }
                }
            }
            if ns > 0 && nu > 0 {
                total += same / ns as f64 - unrelated / nu as f64;
                n += 1;
            }
        }
        if n == 0 { f64::NAN } else { total / n as f64 }
    };
    let seed = 0x4245_5431;
    let reps = bootstrap_replicates(
        1,
        &[drawn.len(), families.len()],
        pilot.bootstrap,
        seed,
        |_, u| gap_stat(&u[0], &u[1]),
    );
    let interval = reps.interval();
    let mean = reps.values.iter().sum::<f64>() / reps.values.len().max(1) as f64;
    let se = (reps.values.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
        / (reps.values.len().max(2) - 1) as f64)
        .sqrt();
    let operation_gap = Gap {
        estimate: interval.estimate,
        lo: interval.lo,
        hi: interval.hi,
        se,
        probes: drawn.len(),
    };
    let profile_rank = crossed_rank(&pairs, pilot.bootstrap, seed);
    let go = operation_gap.estimate >= GO_GAP_POINTS
        && operation_gap.se <= GO_GAP_MAX_SE
        && profile_rank
            .as_ref()
            .is_some_and(|r| r.estimate >= GO_PROFILE_RANK && r.lo > 0.0);
    let self_gain = drawn
        .iter()
        .enumerate()
        .map(|(p, s)| {
            targets
                .iter()
                .position(|t| t == s)
                .map_or(f64::NAN, |i| transfer[p][i])
        })
        .collect();
    PilotResults {
        schema_version: BET_SCHEMA_VERSION,
        pilot: pilot.clone(),
        targets: targets.to_vec(),
        base_success: base_success.to_vec(),
        sources: drawn.to_vec(),
        self_gain,
        by_relation: ByRelation {
            same_operation: mean_of("same_operation"),
            same_look: mean_of("same_look"),
            unrelated: mean_of("unrelated"),
            same_family: mean_of("same_family"),
        },
        operation_gap,
        profile_rank,
        decision: if go { "go" } else { "no-go" }.into(),
        seconds,
    }
}

/// A short markdown page of what the pilot found.
fn report(r: &PilotResults) -> String {
    let g = &r.operation_gap;
    let rank = r.profile_rank.as_ref().map_or("not computed".into(), |p| {
        format!(
            "{:+.2} [{:+.2}, {:+.2}] over {} pairs (ties allow {})",
            p.estimate,
            p.lo,
            p.hi,
            p.pairs.unwrap_or(0),
            p.max.map_or("?".into(), |m| format!("{m:+.2}"))
        )
    });
    let base = 100.0 * r.base_success.iter().map(|&x| x as f64).sum::<f64>()
        / r.base_success.len().max(1) as f64;
    let own = r.self_gain.iter().sum::<f64>() / r.self_gain.len().max(1) as f64;
    let b = &r.by_relation;
    format!(
        "# Bet 1 pilot, design {}: {}\n\n\
         {} sources x {} fine-tune seeds, {} env steps each, {} instances per target and scale; \
         {:.0} s.\n\n\
         - base success on the sub-pool: {base:.1}%; a source's gain on itself: {own:+.1} points\n\
         - mean transfer by relation (points): same operation, other look {:+.2}; same look, \
         other operation {:+.2}; unrelated {:+.2}; same family {:+.2}\n\
         - operation gap (same operation minus unrelated, per probe): {:+.2} [{:+.2}, {:+.2}], \
         se {:.2} (go needs >= {GO_GAP_POINTS} with se <= {GO_GAP_MAX_SE})\n\
         - profile overlap ranks transfer: {rank} (go needs >= {GO_PROFILE_RANK}, lo > 0)\n",
        r.pilot.design,
        r.decision,
        r.sources.len(),
        r.pilot.seeds,
        r.pilot.steps,
        r.pilot.eval_episodes,
        r.seconds,
        b.same_operation,
        b.same_look,
        b.unrelated,
        b.same_family,
        g.estimate,
        g.lo,
        g.hi,
        g.se,
    )
}

/// Where `cargo xtask bet compositional` writes by default.
pub fn default_out(pilot: &CompositionalPilot) -> PathBuf {
    PathBuf::from(format!("runs/bet-compositional-{}", pilot.design))
}
