//! The conflict-estimates study: cheaper estimates of the per-environment gradients behind
//! AES's conflict term, measured against the full estimate the study's gradients stage
//! computes (at H4, as for selection), on the same model, profiles and environments, in one
//! process (`cargo xtask conflict-estimates`).
//!
//! An estimate is the reference config with changes joined by `+`: `head` / `all` (policy-head
//! gradients only / every parameter), `ep<N>` (N episodes per env), `d<N>` (projection
//! dimension N), `t<N>` (episodes cut after N steps), `exact` / `sampled` (single-turn envs'
//! estimator), `mean` / `value` (baseline of the sampled episodes), `lam<N>` (GAE lambda N/100
//! with the value baseline), `seed<N>` (gradient seed + N: other episodes and another
//! projection; `seed1` alone is an independent repeat of the reference), and `noise` (random
//! Gaussian rows: the floor of every statistic). For each: wall seconds and their ratio to the
//! reference's, the work done, the split-half reliability of its per-env gradients (the mean
//! over envs with signal of the Spearman-Brown corrected cosine between the gradients of the
//! env's two halves of episodes; single-turn and multi-turn envs also apart), the rank
//! agreement of all pairwise cosines with the reference's (Spearman, Kendall), the recall of
//! the reference's most negative pairs, and the overlap of the AES selection it leads to with
//! the reference's (same profiles, the study's AES: full coverage, zero-gradient environments
//! excluded). With `own_replicates`, every estimate is also rerun at gradient seed + 1 (other
//! episodes, other projection) and compared with that rerun: how much of its AES selection a
//! rerun of the gradients stage with that config would keep. The reference is itself an estimate from
//! sampled episodes: when the replicate estimate (`seed1`: the reference's config on other
//! episodes) is measured, every row is also compared with it. Agreement with the reference
//! rewards sharing its episodes, noise included; agreement with an independent replicate
//! counts only reproducible signal, and the reference's own agreement with it is the ceiling.
//! The statistics live in core (`GradientSet::cosine_agreement`) and selection
//! (`Selection::overlap`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use envdist_core::{CosineAgreement, EnvId, GradientSet, HarnessLevel, ProfileSet, Rng, Turn};
use envdist_envs::Suite;
use envdist_selection::{SelectConfig, Selection};
use envdist_trainer::{
    Device, GradientConfig, GradientCost, GradientParams, GradientReport, PolicyModel,
    per_env_gradients_report,
};
use serde::Serialize;

use crate::error::{Context, Result, io_error};
use crate::observer::Observer;
use crate::stages::gradients::gradient_config;
use crate::stages::selections::study_aes;

/// Schema version of the JSON the study writes.
pub const CONFLICT_ESTIMATES_SCHEMA_VERSION: u32 = 1;

/// The estimates measured when none are named (those of docs/conflict-estimates.md: about 4
/// minutes on 2 loaded cores at the study's size).
pub const DEFAULT_ESTIMATES: &str = "seed1,noise,head,ep32,ep16,d256,t16,head+ep32";

/// What to measure.
#[derive(Debug, Clone)]
pub struct ConflictStudy {
    /// Checkpoint of the model whose gradients are estimated (a study's `base/checkpoint`).
    pub checkpoint: PathBuf,
    /// Profiles (core's ProfileSet) the AES selections are made on.
    pub profiles: PathBuf,
    /// Environments: empty or `["all"]` for every profiled one, or ids (each needs a profile).
    pub envs: Vec<String>,
    /// Keep only N of those environments, evenly spaced in their order (a quicker subset).
    pub sample: Option<usize>,
    /// The estimates to measure.
    pub estimates: Vec<Estimate>,
    /// The reference: the study's `gradients` section.
    pub reference: GradientConfig,
    /// The study's master seed (the gradient seed derives from it as in the gradients stage).
    pub seed: u64,
    /// The study's AES (its `selection` section).
    pub selection: SelectConfig,
    /// Fraction of all pairs counted as the most conflicting (for the recall).
    pub conflict_fraction: f32,
    /// An estimate is stable when its AES overlap is at least this...
    pub min_overlap: f32,
    /// ...and its recall of the most conflicting pairs at least this.
    pub min_recall: f32,
    /// The estimate every row is also compared with, when measured.
    pub replicate: String,
    /// Device of the model.
    pub device: Device,
    /// Also write every gradient set as `DIR/<name>.safetensors`.
    pub save_sets: Option<PathBuf>,
    /// Also rerun every estimate (the reference included) at gradient seed + 1 and compare
    /// each with its own rerun.
    pub own_replicates: bool,
}

/// One estimate: the reference config with some changes, kept as an overlay of the
/// reference ([`crate::overlay`], the study's one override mechanism) and a seed
/// offset.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// As written (`head+ep32`).
    pub name: String,
    /// The changes to the reference's `GradientConfig`, as a JSON object of its fields.
    patch: serde_json::Map<String, serde_json::Value>,
    /// Added to the reference's gradient seed (other episodes, another projection).
    seed_offset: u64,
    /// Random rows instead of gradients.
    noise: bool,
}

impl std::str::FromStr for Estimate {
    type Err = crate::StudyError;

    /// `head`, `all`, `ep<N>`, `d<N>`, `t<N>`, `exact`, `sampled`, `mean`, `value`, `lam<N>`,
    /// `seed<N>` joined by `+` (e.g. `head+ep32`), or `noise`.
    fn from_str(spec: &str) -> Result<Self> {
        use serde_json::json;
        let name = spec.trim().to_string();
        let mut e = Estimate {
            name: name.clone(),
            patch: serde_json::Map::new(),
            seed_offset: 0,
            noise: false,
        };
        let number = |part: &str, prefix: &str| -> Result<usize> {
            let n: usize = part[prefix.len()..].parse().map_err(|_| {
                crate::StudyError::msg(format!(
                    "estimate {name:?}: expected {prefix}<N> with N a positive integer, found {part:?}"
                ))
            })?;
            crate::ensure!(n > 0, "estimate {name:?}: {part:?} must be at least 1");
            Ok(n)
        };
        for part in name.split('+').map(str::trim) {
            let change = match part {
                "noise" => {
                    e.noise = true;
                    continue;
                }
                "head" => json!({ "params": "policy_head" }),
                "all" => json!({ "params": "all" }),
                "exact" => json!({ "single_turn": "exact" }),
                "sampled" => json!({ "single_turn": "sampled" }),
                // Lambda belongs to the value baseline: back to 1 with the mean one.
                "mean" => json!({ "baseline": "mean", "lambda": 1.0 }),
                "value" => json!({ "baseline": "value" }),
                _ if part.starts_with("lam") => {
                    let l: u32 = part[3..].parse().ok().filter(|l| *l <= 100).ok_or_else(|| {
                        crate::StudyError::msg(format!(
                            "estimate {name:?}: expected lam<N> with N in 0..=100 (lambda N/100), found {part:?}"
                        ))
                    })?;
                    json!({ "lambda": l as f32 / 100.0 })
                }
                _ if part.starts_with("seed") => {
                    e.seed_offset = number(part, "seed")? as u64;
                    continue;
                }
                _ if part.starts_with("ep") => json!({ "rollouts_per_env": number(part, "ep")? }),
                _ if part.starts_with('d') => json!({ "dim": number(part, "d")? }),
                _ if part.starts_with('t') => {
                    let t = u32::try_from(number(part, "t")?).map_err(|_| {
                        crate::StudyError::msg(format!("estimate {name:?}: {part:?} is too large"))
                    })?;
                    json!({ "max_episode_steps": t })
                }
                _ => crate::bail!(
                    "estimate {name:?}: unknown part {part:?} (expected head, all, ep<N>, d<N>, t<N>, exact, sampled, mean, value, lam<N> or seed<N>, joined by +, or noise)"
                ),
            };
            if let serde_json::Value::Object(fields) = change {
                e.patch.extend(fields);
            }
        }
        crate::ensure!(
            !e.noise || name == "noise",
            "estimate {name:?}: `noise` stands alone"
        );
        Ok(e)
    }
}

impl Estimate {
    /// The reference config with this estimate's changes.
    pub fn config(&self, reference: &GradientConfig) -> Result<GradientConfig> {
        let patch = serde_json::Value::Object(self.patch.clone());
        let mut c =
            crate::overlay::overlay(reference, &patch, &format!("estimate {:?}", self.name))?;
        c.seed = c.seed.wrapping_add(self.seed_offset);
        Ok(c)
    }
}

/// One measured gradient set.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// The estimate's name.
    pub name: String,
    /// The gradient config (absent for `noise`).
    pub config: Option<GradientConfig>,
    /// Wall seconds it took.
    pub seconds: f64,
    /// The work it did.
    pub cost: GradientCost,
    /// Environments whose gradient is exactly zero (no episode's return differed).
    pub zero_rows: usize,
    /// The AES selection on the profiles with these gradients, in pick order.
    pub selection: Vec<EnvId>,
    /// How reproducible its per-env gradients are (absent for `noise`).
    pub split_half: Option<SplitHalf>,
}

/// Split-half reliability of a gradient set: per env with signal (a non-zero gradient), the
/// cosine `r` between the gradients of its two halves of episodes and the Spearman-Brown
/// reliability `2r / (1 + r)` of the whole (negative `r` counted as 0).
#[derive(Debug, Clone, Serialize)]
pub struct SplitHalf {
    /// Environments with signal.
    pub envs: usize,
    /// Of which single-turn.
    pub single_turn_envs: usize,
    /// Mean split-half cosine.
    pub cosine_mean: Option<f32>,
    /// Mean reliability.
    pub reliability_mean: Option<f32>,
    /// Mean reliability over the single-turn envs with signal.
    pub reliability_single_turn: Option<f32>,
    /// Mean reliability over the multi-turn envs with signal.
    pub reliability_multi_turn: Option<f32>,
    /// Fraction of the envs with signal whose reliability is at least 0.7.
    pub reliable_fraction: Option<f32>,
    /// Every env's split-half cosine (the report's env order; 0 for zero rows).
    pub per_env_cosine: Vec<f32>,
}

impl SplitHalf {
    /// The statistics of `report`, whose envs have the turns `turns`.
    pub fn of(report: &GradientReport, turns: &[Turn]) -> Self {
        let zero = report.set.zero_rows();
        let mean = |v: &[f32]| (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32);
        let (mut cos, mut all, mut st, mut mt) = (vec![], vec![], vec![], vec![]);
        for (i, id) in report.set.env_ids.iter().enumerate() {
            if zero.contains(id) {
                continue;
            }
            let r = report.reliability(i);
            cos.push(report.split_half_cosine[i]);
            all.push(r);
            match turns[i] {
                Turn::Single => st.push(r),
                Turn::Multi => mt.push(r),
            }
        }
        let reliable = all.iter().filter(|r| **r >= 0.7).count() as f32;
        Self {
            envs: all.len(),
            single_turn_envs: st.len(),
            cosine_mean: mean(&cos),
            reliability_mean: mean(&all),
            reliability_single_turn: mean(&st),
            reliability_multi_turn: mean(&mt),
            reliable_fraction: (!all.is_empty()).then(|| reliable / all.len() as f32),
            per_env_cosine: report.split_half_cosine.clone(),
        }
    }
}

/// One gradient set compared with another (the reference, or the replicate).
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// Rank agreement of the pairwise cosines.
    pub agreement: CosineAgreement,
    /// `|AES selection ∩ the other's| / k`.
    pub selection_overlap: f32,
}

/// An estimate's rerun at gradient seed + 1 and the comparison with it.
#[derive(Debug, Serialize)]
pub struct OwnReplicate {
    /// The rerun (a measured row when one has its config, else `<name>@seed+1`).
    pub measured: Measured,
    /// The estimate against it.
    pub comparison: Comparison,
}

/// One row of the report.
#[derive(Debug, Serialize)]
pub struct Row {
    /// The measurement.
    #[serde(flatten)]
    pub measured: Measured,
    /// `seconds` over the reference's.
    pub cost_ratio: f64,
    /// Against the reference (absent for the reference itself).
    pub vs_reference: Option<Comparison>,
    /// Against the replicate, when it was measured (absent for the replicate itself).
    pub vs_replicate: Option<Comparison>,
    /// Its own rerun at gradient seed + 1, when `own_replicates` (absent for `noise`).
    pub own_replicate: Option<OwnReplicate>,
    /// Against the reference: `selection_overlap >= min_overlap` and
    /// `conflict_recall >= min_recall` (absent for the reference).
    pub stable: Option<bool>,
}

/// What the study measured (written as JSON).
#[derive(Debug, Serialize)]
pub struct Report {
    /// Always [`CONFLICT_ESTIMATES_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The checkpoint measured.
    pub checkpoint: String,
    /// The profiles selected on.
    pub profiles: String,
    /// The device.
    pub device: String,
    /// Worker threads.
    pub threads: usize,
    /// The 1-minute load average when the run started and ended (the machine is shared).
    pub load_average: [Option<f32>; 2],
    /// The environments measured.
    pub envs: Vec<EnvId>,
    /// AES budget.
    pub k: usize,
    /// Fraction of pairs counted as the most conflicting.
    pub conflict_fraction: f32,
    /// Stability threshold on the AES overlap.
    pub min_overlap: f32,
    /// Stability threshold on the conflict recall.
    pub min_recall: f32,
    /// Name of the replicate row, if one was measured.
    pub replicate: Option<String>,
    /// The reference first, then the estimates in the order asked for.
    pub rows: Vec<Row>,
}

fn load_average() -> Option<f32> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The environments to measure, in profile order.
fn pick_envs(args: &ConflictStudy, profiles: &ProfileSet) -> Result<Vec<EnvId>> {
    let all: Vec<EnvId> = profiles.profiles.iter().map(|p| p.env.clone()).collect();
    let listed: Vec<&str> = args
        .envs
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    let mut envs = if listed.is_empty() || listed == ["all"] {
        all
    } else {
        let mut out = Vec::with_capacity(listed.len());
        for id in listed {
            let id = EnvId::new(id);
            if !all.contains(&id) {
                crate::bail!("envs: {id} has no profile in {}", args.profiles.display());
            }
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    };
    if let Some(n) = args.sample {
        crate::ensure!(
            n >= 2,
            "sample {n}: at least 2 environments are needed to form pairs"
        );
        if n < envs.len() {
            let len = envs.len();
            envs = (0..n).map(|i| envs[i * len / n].clone()).collect();
        }
    }
    crate::ensure!(
        envs.len() >= 2,
        "at least 2 environments are needed to form pairs"
    );
    Ok(envs)
}

fn fmt_opt(x: Option<f32>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

/// The markdown table of a report.
pub fn table(r: &Report) -> String {
    let mut s = String::new();
    let rep = r.replicate.as_deref().unwrap_or("replicate");
    let _ = writeln!(
        s,
        "| estimate | seconds | cost ratio | params | backward passes | env steps | zero rows | reliability | ST | MT | Spearman | Kendall | recall@{}% | AES overlap | stable | Spearman vs {rep} | recall vs {rep} | overlap vs {rep} | Spearman vs own rerun | overlap vs own rerun |",
        100.0 * r.conflict_fraction
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|"
    );
    let cells = |c: Option<&Comparison>, kendall: bool| match c {
        None => {
            if kendall {
                "1 | 1 | 1 | 1".to_string()
            } else {
                "- | - | -".to_string()
            }
        }
        Some(c) => {
            let mut t = fmt_opt(c.agreement.spearman);
            if kendall {
                let _ = write!(t, " | {}", fmt_opt(c.agreement.kendall));
            }
            let _ = write!(
                t,
                " | {:.2} | {:.2}",
                c.agreement.conflict_recall, c.selection_overlap
            );
            t
        }
    };
    for row in &r.rows {
        let m = &row.measured;
        let sh = m.split_half.as_ref();
        let own = row.own_replicate.as_ref().map_or("- | -".to_string(), |o| {
            format!(
                "{} | {:.2}",
                fmt_opt(o.comparison.agreement.spearman),
                o.comparison.selection_overlap
            )
        });
        let _ = writeln!(
            s,
            "| {} | {:.1} | {:.3} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            m.name,
            m.seconds,
            row.cost_ratio,
            m.cost.params,
            m.cost.backward_passes,
            m.cost.env_steps,
            m.zero_rows,
            fmt_opt(sh.and_then(|h| h.reliability_mean)),
            fmt_opt(sh.and_then(|h| h.reliability_single_turn)),
            fmt_opt(sh.and_then(|h| h.reliability_multi_turn)),
            cells(row.vs_reference.as_ref(), true),
            match row.stable {
                None => "(reference)",
                Some(true) => "yes",
                Some(false) => "no",
            },
            cells(row.vs_replicate.as_ref(), false),
            own,
        );
    }
    s
}

/// Measure every estimate of `study` (progress to `observer`, one line per estimate as a note).
pub fn run(study: &ConflictStudy, observer: &dyn Observer) -> Result<Report> {
    let args = study;
    let load_start = load_average();
    crate::ensure!(
        (0.0..=1.0).contains(&args.min_overlap) && (0.0..=1.0).contains(&args.min_recall),
        "min_overlap and min_recall: expected fractions in [0, 1]"
    );
    let profiles = ProfileSet::read(&args.profiles)?;
    let envs = pick_envs(args, &profiles)?;
    crate::ensure!(
        args.selection.k > 0 && args.selection.k <= envs.len(),
        "k {}: expected 1..={} (the environments measured)",
        args.selection.k,
        envs.len()
    );
    let model = PolicyModel::load(&args.checkpoint, args.device)
        .with_context(|| format!("loading {}", args.checkpoint.display()))?;
    let canvas = model.config().image_size as u32;
    let suite = Arc::new(Suite::with_canvas(canvas)?);
    let reference_cfg = gradient_config(&args.reference, args.seed, HarnessLevel::H4);
    let mut turns: Vec<Turn> = Vec::with_capacity(envs.len());
    for id in &envs {
        match suite.spec(id) {
            Some(s) => turns.push(s.turn),
            None => crate::bail!("envs: {id} is not an environment of the suite"),
        }
    }
    if let Some(dir) = &args.save_sets {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    }
    observer.note(&format!(
        "conflict-estimates: {} envs, {} params, reference {} episodes x d = {}, {} estimates",
        envs.len(),
        model.num_params(),
        reference_cfg.rollouts_per_env,
        reference_cfg.dim,
        args.estimates.len()
    ));

    // Selection and bookkeeping for one gradient set.
    let finish = |name: &str,
                  config: Option<GradientConfig>,
                  seconds: f64,
                  cost: GradientCost,
                  set: GradientSet|
     -> Result<(Measured, GradientSet, Selection)> {
        let selection = study_aes(&args.selection, &profiles, &set, &envs)?;
        if let Some(r) = &selection.relaxation {
            observer.note(&format!("  {name}: {r}"));
        }
        if let Some(dir) = &args.save_sets {
            set.write(dir.join(format!("{name}.safetensors")))?;
        }
        observer.note(&format!(
            "  {name:<14} {seconds:>8.1} s (play {:.1}, backward {:.1}, project {:.1})",
            cost.play_seconds, cost.backward_seconds, cost.project_seconds
        ));
        Ok((
            Measured {
                name: name.to_string(),
                config,
                seconds,
                cost,
                zero_rows: set.zero_rows().len(),
                selection: selection.env_ids.clone(),
                split_half: None,
            },
            set,
            selection,
        ))
    };
    let measure = |name: &str,
                   cfg: &GradientConfig|
     -> Result<(Measured, GradientSet, Selection)> {
        let progress = observer.progress(name, envs.len() as u64);
        let t = Instant::now();
        let report =
            per_env_gradients_report(&model, suite.as_ref(), &envs, cfg, &mut |_| progress.inc(1))?;
        let seconds = t.elapsed().as_secs_f64();
        progress.finish();
        let split_half = SplitHalf::of(&report, &turns);
        observer.note(&format!(
            "  {name:<14} split-half reliability {} (ST {}, MT {}) over {} envs with signal",
            fmt_opt(split_half.reliability_mean),
            fmt_opt(split_half.reliability_single_turn),
            fmt_opt(split_half.reliability_multi_turn),
            split_half.envs
        ));
        let mut out = finish(name, Some(cfg.clone()), seconds, report.cost, report.set)?;
        out.0.split_half = Some(split_half);
        Ok(out)
    };
    let noise = |name: &str| -> Result<(Measured, GradientSet, Selection)> {
        let t = Instant::now();
        let mut rng = Rng::seed_from_u64(reference_cfg.seed ^ 0x4e4f_4953);
        let set = GradientSet {
            env_ids: envs.clone(),
            dim: reference_cfg.dim,
            values: (0..envs.len() * reference_cfg.dim)
                .map(|_| rng.normal())
                .collect(),
            projection_seed: None,
        };
        let cost = GradientCost {
            envs: envs.len(),
            ..GradientCost::default()
        };
        finish(name, None, t.elapsed().as_secs_f64(), cost, set)
    };

    // Untimed warm-up of both gradient paths on two envs (allocator, thread pool, caches), so
    // the reference, timed first, does not pay for them.
    for params in [GradientParams::All, GradientParams::PolicyHead] {
        let warm = GradientConfig {
            rollouts_per_env: 8,
            params,
            ..reference_cfg.clone()
        };
        per_env_gradients_report(&model, suite.as_ref(), &envs[..2], &warm, &mut |_| {})?;
    }
    let mut measured = vec![measure("reference", &reference_cfg)?];
    for e in &args.estimates {
        measured.push(if e.noise {
            noise(&e.name)?
        } else {
            measure(&e.name, &e.config(&reference_cfg)?)?
        });
    }
    let compare_sets = |a: &(Measured, GradientSet, Selection),
                        b: &(Measured, GradientSet, Selection)|
     -> Result<Comparison> {
        Ok(Comparison {
            agreement: a.1.cosine_agreement(&b.1, args.conflict_fraction)?,
            selection_overlap: a.2.overlap(&b.2),
        })
    };
    let compare = |i: usize, j: usize| compare_sets(&measured[i], &measured[j]);
    // Each estimate against its own rerun at seed + 1: a measured row when one has that config
    // (the reference's is `seed1`), else measured here.
    let mut own = Vec::with_capacity(measured.len());
    for i in 0..measured.len() {
        let Some(cfg) = measured[i]
            .0
            .config
            .as_ref()
            .filter(|_| args.own_replicates)
        else {
            own.push(None);
            continue;
        };
        let rerun = GradientConfig {
            seed: cfg.seed.wrapping_add(1),
            ..cfg.clone()
        };
        let found = (0..measured.len()).find(|&j| measured[j].0.config.as_ref() == Some(&rerun));
        own.push(Some(match found {
            Some(j) => OwnReplicate {
                measured: measured[j].0.clone(),
                comparison: compare(i, j)?,
            },
            None => {
                let name = format!("{}@seed+1", measured[i].0.name);
                let other = measure(&name, &rerun)?;
                OwnReplicate {
                    comparison: compare_sets(&measured[i], &other)?,
                    measured: other.0,
                }
            }
        }));
    }
    let replicate = (1..measured.len()).find(|&i| measured[i].0.name == args.replicate);
    let mut rows = Vec::with_capacity(measured.len());
    for (i, own_replicate) in own.into_iter().enumerate() {
        let vs_reference = (i > 0).then(|| compare(i, 0)).transpose()?;
        let vs_replicate = match replicate {
            Some(r) if r != i => Some(compare(i, r)?),
            _ => None,
        };
        let stable = vs_reference.as_ref().map(|c| {
            c.selection_overlap >= args.min_overlap
                && c.agreement.conflict_recall >= args.min_recall
        });
        rows.push((vs_reference, vs_replicate, own_replicate, stable));
    }
    let reference_seconds = measured[0].0.seconds.max(1e-9);
    let rows: Vec<Row> = measured
        .into_iter()
        .zip(rows)
        .map(
            |((m, _, _), (vs_reference, vs_replicate, own_replicate, stable))| Row {
                cost_ratio: m.seconds / reference_seconds,
                measured: m,
                vs_reference,
                vs_replicate,
                own_replicate,
                stable,
            },
        )
        .collect();
    Ok(Report {
        schema_version: CONFLICT_ESTIMATES_SCHEMA_VERSION,
        checkpoint: args.checkpoint.display().to_string(),
        profiles: args.profiles.display().to_string(),
        device: args.device.to_string(),
        threads: rayon::current_num_threads(),
        load_average: [load_start, load_average()],
        envs,
        k: args.selection.k,
        conflict_fraction: args.conflict_fraction,
        min_overlap: args.min_overlap,
        min_recall: args.min_recall,
        replicate: replicate.map(|_| args.replicate.clone()),
        rows,
    })
}

#[cfg(test)]
mod tests;
