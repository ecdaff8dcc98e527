//! The study's stages, wired from the library crates. Each stage is cached (see
//! [`super::stage`]), so rerunning the same command resumes where an earlier run stopped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use envdist_core::TaskSampler;
use envdist_core::{EnvFactory, EnvId, EnvSpec, GradientSet, HarnessLevel, ProfileSet, Rng};
use envdist_curriculum::{HdcConfig, HdcSampler, Mode, TraceEvent};
use envdist_envs::{Suite, SuiteConfig};
use envdist_profiling::{
    Explorer, MetaConfig, NoisyOracle, PolicyMaker, RolloutConfig, TagSegmenter,
    profile_trajectories, rollout_pool, write_outputs,
};
use envdist_selection::{Baseline, Problem, SelectConfig, baseline, select};
use envdist_trainer::{
    Device, GradientConfig, PolicyModel, RunOptions, ScaleChoice, TrainConfig, Trainer, cosine,
    evaluate,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use super::config::{Arm, ExperimentConfig};
use super::results::{ArmRun, Results, ScalingPoint, SelectionSummary, SplitScores};
use super::stage::RunDir;

/// Where the profiles stage writes its profile set, relative to the run directory.
pub const PROFILES_FILE: &str = "profiles/profiles.json";
/// Where the gradients stage writes the gradient set, relative to the run directory.
pub const GRADIENTS_FILE: &str = "gradients/gradients.safetensors";

/// Step tags that mark a conflict twin's rule inversion rather than an ability an annotator
/// could see in a trajectory; the profiling stage ignores them.
pub const IGNORED_RULE_TAGS: [&str; 2] = ["mirrored-control", "negation"];

/// The pool and held-out sets the study uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PoolStage {
    /// In-pool env ids (the candidates of selection and the ID evaluation set).
    pub pool: Vec<EnvId>,
    /// Held-out env ids (OOD evaluation set).
    pub ood: Vec<EnvId>,
    /// Families in the pool.
    pub families: usize,
    /// Conflict pairs with both members in the pool.
    pub conflict_pairs: Vec<(EnvId, EnvId)>,
}

/// Profiles output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProfileStage {
    /// `profiles.json` path (relative to the run directory).
    pub profiles_file: String,
    /// Atomic abilities seen.
    pub atomic_abilities: usize,
    /// Meta-abilities after clustering.
    pub meta_abilities: usize,
    /// Trajectories rolled out.
    pub trajectories: usize,
    /// Mean coverage cosine of conflict twins (profiles cannot tell them apart).
    pub twin_profile_cosine: Option<f32>,
}

/// Warm-up output: the base model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmupStage {
    /// Checkpoint directory (relative to the run directory).
    pub checkpoint: String,
    /// Environment steps trained.
    pub env_steps: u64,
    /// Throughput, learning included.
    pub env_steps_per_second: f32,
}

/// Gradient output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradientStage {
    /// `gradients.safetensors` path (relative to the run directory).
    pub gradients_file: String,
    /// Mean cosine between conflict twins.
    pub twin_cosine: Option<f32>,
    /// Mean cosine between non-twin pairs of the same family (themes, observation variants).
    pub same_family_cosine: Option<f32>,
    /// Mean cosine over all pairs.
    pub all_pairs_cosine: f32,
    /// Fraction of pairs with cosine below -0.1.
    pub negative_fraction: f32,
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "  {what:<28} [{{bar:30}}] {{pos}}/{{len}} {{per_sec}} ETA {{eta}} {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

fn device(cfg: &ExperimentConfig) -> Device {
    if cfg.device == "cuda" {
        Device::Cuda(0)
    } else {
        Device::Cpu
    }
}

fn eval_scale(cfg: &ExperimentConfig) -> ScaleChoice {
    match cfg.eval_scale.as_str() {
        "min" => ScaleChoice::Min,
        "max" => ScaleChoice::Max,
        _ => ScaleChoice::Mid,
    }
}

fn train_config(cfg: &ExperimentConfig, steps: u64, seed: u64) -> anyhow::Result<TrainConfig> {
    let mut t = TrainConfig::preset(&cfg.model)?;
    t.total_env_steps = steps;
    t.seed = seed;
    Ok(t)
}

/// Choose the pool subset (twins kept together) and the OOD set.
pub fn pool_stage(cfg: &ExperimentConfig, suite: &Suite) -> anyhow::Result<PoolStage> {
    let mut specs = suite.pool_specs();
    specs.sort_by(|a, b| a.id.cmp(&b.id));
    let by_id: BTreeMap<EnvId, EnvSpec> = specs.iter().map(|s| (s.id.clone(), s.clone())).collect();
    let mut chosen: BTreeSet<EnvId> = BTreeSet::new();
    if cfg.pool_size >= specs.len() {
        chosen.extend(specs.iter().map(|s| s.id.clone()));
    } else {
        // Round-robin over families in a seeded order so a small pool still spans many
        // families, adding each env together with its conflict twin.
        let mut rng = Rng::derive(cfg.seed, 1);
        let mut families: BTreeMap<String, Vec<EnvId>> = BTreeMap::new();
        for s in &specs {
            families
                .entry(s.family.clone())
                .or_default()
                .push(s.id.clone());
        }
        let mut fam: Vec<Vec<EnvId>> = families.into_values().collect();
        rng.shuffle(&mut fam);
        for f in &mut fam {
            rng.shuffle(f);
        }
        let mut round = 0;
        while chosen.len() < cfg.pool_size {
            let mut added = false;
            for f in &fam {
                if let Some(id) = f.get(round) {
                    added = true;
                    let twin = by_id[id]
                        .conflict_twin
                        .clone()
                        .filter(|t| by_id.contains_key(t));
                    let need = 1 + usize::from(twin.as_ref().is_some_and(|t| !chosen.contains(t)));
                    if !chosen.contains(id) && chosen.len() + need <= cfg.pool_size {
                        chosen.insert(id.clone());
                        if let Some(t) = twin {
                            chosen.insert(t);
                        }
                    }
                }
                if chosen.len() >= cfg.pool_size {
                    break;
                }
            }
            if !added {
                break;
            }
            round += 1;
        }
    }
    let pool: Vec<EnvId> = chosen.into_iter().collect();
    let families = pool
        .iter()
        .map(|id| &by_id[id].family)
        .collect::<BTreeSet<_>>()
        .len();
    let mut conflict_pairs = Vec::new();
    for id in &pool {
        if let Some(t) = &by_id[id].conflict_twin
            && id < t
            && pool.binary_search(t).is_ok()
        {
            conflict_pairs.push((id.clone(), t.clone()));
        }
    }
    let mut ood_specs = suite.ood_specs();
    ood_specs.sort_by(|a, b| a.id.cmp(&b.id));
    let ood: Vec<EnvId> = if cfg.ood_envs == 0 || cfg.ood_envs >= ood_specs.len() {
        ood_specs.iter().map(|s| s.id.clone()).collect()
    } else {
        let mut families: BTreeMap<String, Vec<EnvId>> = BTreeMap::new();
        for s in &ood_specs {
            families
                .entry(s.family.clone())
                .or_default()
                .push(s.id.clone());
        }
        let fam: Vec<Vec<EnvId>> = families.into_values().collect();
        let mut out = Vec::new();
        let mut round = 0;
        while out.len() < cfg.ood_envs {
            for f in &fam {
                if let Some(id) = f.get(round)
                    && out.len() < cfg.ood_envs
                {
                    out.push(id.clone());
                }
            }
            round += 1;
        }
        out
    };
    Ok(PoolStage {
        pool,
        ood,
        families,
        conflict_pairs,
    })
}

fn specs_of(suite: &Suite, ids: &[EnvId]) -> anyhow::Result<Vec<EnvSpec>> {
    ids.iter()
        .map(|id| {
            suite
                .spec(id)
                .cloned()
                .with_context(|| format!("unknown environment {id}"))
        })
        .collect()
}

/// Roll out the pool with two policies and profile it.
pub fn profile_stage(
    cfg: &ExperimentConfig,
    suite: &Suite,
    pool: &PoolStage,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<ProfileStage> {
    let specs = specs_of(suite, &pool.pool)?;
    let rollout = RolloutConfig {
        trajectories_per_env: cfg.profile_trajectories,
        harness: HarnessLevel::H0,
        seed: cfg.seed ^ 0x5052_4f46,
    };
    let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.1)));
    let second: Box<PolicyMaker> = Box::new(|| Box::new(Explorer::new(0.5)));
    let pb = bar(specs.len() as u64, "profiling rollouts (envs)");
    let trajectories = rollout_pool(suite, &specs, &rollout, &*first, &*second, &|_| pb.inc(1))?;
    pb.finish_and_clear();
    // The suite tags a twin's rule inversion (`mirrored-control`, `negation`); an annotator
    // segmenting trajectories into skills would not see it (same pixels, same moves), so we
    // profile without those tags: what conflict the profiles cannot see, gradients must.
    let segmenter = TagSegmenter::new(
        true,
        IGNORED_RULE_TAGS.iter().map(|t| t.to_string()).collect(),
    );
    let profile = profile_trajectories(&trajectories, &segmenter, &MetaConfig::default())?;
    write_outputs(&profile, dir)?;
    let mut twin_cos = Vec::new();
    for (a, b) in &pool.conflict_pairs {
        if let (Some(pa), Some(pb)) = (profile.profile(a), profile.profile(b)) {
            twin_cos.push(envdist_profiling::pipeline::coverage_cosine(pa, pb));
        }
    }
    let rel = dir.join("profiles.json");
    anyhow::ensure!(
        rel.exists(),
        "profiling wrote no profiles.json in {}",
        dir.display()
    );
    Ok(ProfileStage {
        profiles_file: rel
            .strip_prefix(run_root)
            .unwrap_or(&rel)
            .display()
            .to_string(),
        atomic_abilities: profile.atomic_abilities(),
        meta_abilities: profile.meta_abilities.len(),
        trajectories: trajectories.len(),
        twin_profile_cosine: (!twin_cos.is_empty())
            .then(|| twin_cos.iter().sum::<f32>() / twin_cos.len() as f32),
    })
}

/// Train the base model on the whole pool with a uniform (harness, scale) sampler.
pub fn warmup_stage(
    cfg: &ExperimentConfig,
    suite: Arc<Suite>,
    pool: &PoolStage,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<WarmupStage> {
    let specs = specs_of(&suite, &pool.pool)?;
    let hdc = HdcConfig {
        mode: Mode::BaselineUniform,
        ..HdcConfig::default()
    };
    let mut sampler = HdcSampler::new(&specs, None, hdc, cfg.seed ^ 0x5741_524d)?;
    let tcfg = train_config(cfg, cfg.warmup_steps, cfg.seed)?;
    let factory: Arc<dyn EnvFactory> = suite;
    let mut trainer = Trainer::new(tcfg, factory, device(cfg))?;
    let pb = bar(cfg.warmup_steps, "warm-up (env steps)");
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        checkpoint_every: 20,
    };
    let summary = trainer.run(&mut sampler, &opts, &mut |s| {
        pb.set_position(s.env_steps);
        if let Some(r) = s.success_rate {
            pb.set_message(format!("success {r:.2}"));
        }
    })?;
    pb.finish_and_clear();
    let ckpt = dir.join("checkpoint");
    Ok(WarmupStage {
        checkpoint: ckpt
            .strip_prefix(run_root)
            .unwrap_or(&ckpt)
            .display()
            .to_string(),
        env_steps: trainer.env_steps(),
        env_steps_per_second: summary.env_steps_per_second,
    })
}

/// Per-env projected gradients of the base model.
pub fn gradient_stage(
    cfg: &ExperimentConfig,
    suite: &Suite,
    pool: &PoolStage,
    base: &PolicyModel,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<GradientStage> {
    let gcfg = GradientConfig {
        rollouts_per_env: cfg.gradient_episodes as usize,
        dim: cfg.gradient_dim,
        seed: cfg.seed ^ 0x4752_4144,
        ..GradientConfig::default()
    };
    // One env per call: the progress bar moves, and each env's action-sampling stream is the
    // same whatever the pool (the trainer derives it from the position in the call).
    let pb = bar(pool.pool.len() as u64, "per-env gradients");
    let mut values = Vec::with_capacity(pool.pool.len() * cfg.gradient_dim);
    for id in &pool.pool {
        let g = envdist_trainer::per_env_gradients(base, suite, std::slice::from_ref(id), &gcfg)?;
        values.extend_from_slice(&g.values);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let set = GradientSet {
        env_ids: pool.pool.clone(),
        dim: cfg.gradient_dim,
        values,
        projection_seed: Some(gcfg.seed),
    };
    let path = dir.join("gradients.safetensors");
    set.write(&path)?;
    let n = set.len();
    let twin: BTreeSet<(usize, usize)> = pool
        .conflict_pairs
        .iter()
        .filter_map(|(a, b)| {
            let i = pool.pool.iter().position(|x| x == a)?;
            let j = pool.pool.iter().position(|x| x == b)?;
            Some((i.min(j), i.max(j)))
        })
        .collect();
    let family = |id: &EnvId| id.as_str().split('/').next().unwrap_or("").to_string();
    let (mut twin_c, mut fam_c, mut all_c, mut neg) = (vec![], vec![], 0.0f64, 0usize);
    let mut pairs = 0usize;
    for i in 0..n {
        for j in i + 1..n {
            let c = cosine(set.row(i), set.row(j));
            all_c += c as f64;
            pairs += 1;
            if c < -0.1 {
                neg += 1;
            }
            if twin.contains(&(i, j)) {
                twin_c.push(c);
            } else if family(&set.env_ids[i]) == family(&set.env_ids[j]) {
                fam_c.push(c);
            }
        }
    }
    let mean = |v: &[f32]| (!v.is_empty()).then(|| v.iter().sum::<f32>() / v.len() as f32);
    Ok(GradientStage {
        gradients_file: path
            .strip_prefix(run_root)
            .unwrap_or(&path)
            .display()
            .to_string(),
        twin_cosine: mean(&twin_c),
        same_family_cosine: mean(&fam_c),
        all_pairs_cosine: (all_c / pairs.max(1) as f64) as f32,
        negative_fraction: neg as f32 / pairs.max(1) as f32,
    })
}

fn summarise(
    name: &str,
    envs: &[EnvId],
    covered: usize,
    coverable: usize,
    grads: &GradientSet,
) -> SelectionSummary {
    let rows: Vec<usize> = envs
        .iter()
        .filter_map(|id| grads.env_ids.iter().position(|g| g == id))
        .collect();
    let mut cs = Vec::new();
    for (a, &i) in rows.iter().enumerate() {
        for &j in &rows[a + 1..] {
            cs.push(cosine(grads.row(i), grads.row(j)));
        }
    }
    SelectionSummary {
        name: name.to_string(),
        envs: envs.iter().map(|e| e.0.clone()).collect(),
        covered,
        coverable,
        mean_pairwise_cosine: (!cs.is_empty()).then(|| cs.iter().sum::<f32>() / cs.len() as f32),
        conflicting_pairs: cs.iter().filter(|c| **c < -0.1).count(),
    }
}

/// Environments whose gradient row is exactly zero: no episode of theirs moved the policy.
pub fn no_signal_envs(grads: &GradientSet) -> Vec<EnvId> {
    (0..grads.len())
        .filter(|&i| grads.row(i).iter().all(|v| *v == 0.0))
        .map(|i| grads.env_ids[i].clone())
        .collect()
}

/// AES, AES without conflict, coverage-only and a random-k draw per seed.
pub fn selection_stage(
    cfg: &ExperimentConfig,
    profiles: &ProfileSet,
    grads: &GradientSet,
) -> anyhow::Result<Vec<SelectionSummary>> {
    let problem = Problem::from_profiles(profiles, Some(grads))?;
    let mut sc = SelectConfig::aes(cfg.k);
    if cfg.exclude_no_signal {
        sc.must_exclude = no_signal_envs(grads);
    }
    let mut out = Vec::new();
    let aes = select(&problem, &sc)?;
    out.push(summarise(
        "aes",
        &aes.env_ids,
        aes.covered,
        aes.coverable,
        grads,
    ));
    for (name, which) in [
        ("aes-no-conflict", Baseline::NoConflict),
        ("coverage-only", Baseline::CoverageOnly),
    ] {
        let s = baseline(&problem, &sc, which)?;
        out.push(summarise(name, &s.env_ids, s.covered, s.coverable, grads));
    }
    for seed in 0..cfg.seeds {
        let s = baseline(
            &problem,
            &sc,
            Baseline::Random {
                seed: cfg.seed ^ (0x52_4e44 + seed as u64),
            },
        )?;
        out.push(summarise(
            &format!("random-k/{seed}"),
            &s.env_ids,
            s.covered,
            s.coverable,
            grads,
        ));
    }
    Ok(out)
}

fn selection<'a>(sels: &'a [SelectionSummary], name: &str) -> anyhow::Result<&'a SelectionSummary> {
    sels.iter()
        .find(|s| s.name == name)
        .with_context(|| format!("no selection named {name}"))
}

/// Which environments and which curriculum mode an arm trains with.
pub fn arm_plan(
    arm: Arm,
    seed: u32,
    pool: &PoolStage,
    sels: &[SelectionSummary],
) -> anyhow::Result<(Vec<EnvId>, Mode)> {
    let ids = |name: &str| -> anyhow::Result<Vec<EnvId>> {
        Ok(selection(sels, name)?
            .envs
            .iter()
            .map(|e| EnvId::new(e.clone()))
            .collect())
    };
    let random = format!("random-k/{seed}");
    Ok(match arm {
        Arm::Base => bail!("the base arm is not trained"),
        Arm::AllPool => (pool.pool.clone(), Mode::BaselineH4),
        Arm::RandomK => (ids(&random)?, Mode::BaselineH4),
        Arm::Aes => (ids("aes")?, Mode::BaselineH4),
        Arm::AesHdc => (ids("aes")?, Mode::Full),
        Arm::RandomKHdc => (ids(&random)?, Mode::Full),
        Arm::AesNoConflict => (ids("aes-no-conflict")?, Mode::BaselineH4),
        Arm::AesHarnessOnly => (ids("aes")?, Mode::HarnessOnly),
        Arm::AesScaleOnly => (ids("aes")?, Mode::ScaleOnly),
    })
}

/// The fixed evaluation seeds shared by every arm.
pub fn eval_seeds(cfg: &ExperimentConfig) -> Vec<u64> {
    (0..cfg.eval_episodes as u64)
        .map(|i| 9_000_000 + i)
        .collect()
}

/// Evaluate `model` at H4 on the pool (ID) and held-out (OOD) sets.
pub fn evaluate_model(
    cfg: &ExperimentConfig,
    suite: &Suite,
    pool: &PoolStage,
    model: &PolicyModel,
) -> anyhow::Result<(BTreeMap<String, f32>, SplitScores)> {
    let mut envs = pool.pool.clone();
    envs.extend(pool.ood.iter().cloned());
    let report = evaluate(
        model,
        suite,
        &envs,
        &eval_seeds(cfg),
        HarnessLevel::H4,
        eval_scale(cfg),
    )?;
    let per_env = report
        .per_env
        .iter()
        .map(|s| (s.env.0.clone(), s.success))
        .collect();
    Ok((
        per_env,
        SplitScores {
            st_id: report.st_id,
            mt_id: report.mt_id,
            st_ood: report.st_ood,
            mt_ood: report.mt_ood,
        },
    ))
}

/// Forwards to an [`HdcSampler`] and records a [`TraceEvent`] per reported episode, for the
/// curriculum-trace figure. State and restore are the inner sampler's, so checkpoints are
/// unchanged by the recording.
struct TracingSampler {
    inner: HdcSampler,
    trace: Vec<TraceEvent>,
}

impl TaskSampler for TracingSampler {
    fn sample(&mut self) -> envdist_core::Task {
        self.inner.sample()
    }
    fn update(&mut self, outcome: &envdist_core::EpisodeOutcome) {
        self.inner.update(outcome);
        if let Some(e) = self.inner.trace_event(self.trace.len() as u64, outcome) {
            self.trace.push(e);
        }
    }
    fn state(&self) -> serde_json::Value {
        self.inner.state()
    }
    fn restore(
        &mut self,
        state: &serde_json::Value,
    ) -> Result<(), envdist_core::SamplerStateError> {
        self.inner.restore(state)
    }
}

/// Train one arm at one seed from the base model, then evaluate it.
#[allow(clippy::too_many_arguments)]
pub fn train_arm(
    cfg: &ExperimentConfig,
    suite: Arc<Suite>,
    pool: &PoolStage,
    base: &PolicyModel,
    envs: &[EnvId],
    mode: Mode,
    arm: Arm,
    label: &str,
    seed: u32,
    dir: &Path,
) -> anyhow::Result<ArmRun> {
    let start = Instant::now();
    let specs = specs_of(&suite, envs)?;
    let hdc = HdcConfig {
        mode,
        ..HdcConfig::default()
    };
    let stream = cfg.seed ^ (seed as u64 + 1).wrapping_mul(0x9E37_79B9);
    let mut sampler = TracingSampler {
        inner: HdcSampler::new(&specs, None, hdc, stream)?,
        trace: Vec::new(),
    };
    let tcfg = train_config(cfg, cfg.train_steps, stream)?;
    let factory: Arc<dyn EnvFactory> = suite.clone();
    let mut trainer = Trainer::from_policy(tcfg, factory, base)?;
    let pb = bar(cfg.train_steps, &format!("{label} seed {seed}"));
    let mut curve = Vec::new();
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        checkpoint_every: 20,
    };
    trainer.run(&mut sampler, &opts, &mut |s| {
        pb.set_position(s.env_steps);
        if let Some(r) = s.success_rate {
            curve.push((s.env_steps, r));
            pb.set_message(format!("success {r:.2}"));
        }
    })?;
    // Where the curriculum stood at the end, and how it got there.
    envdist_core::io::write_json_atomic(
        dir.join("curriculum_status.json"),
        &sampler.inner.status(),
    )?;
    envdist_core::io::write_jsonl_atomic(dir.join("curriculum_trace.jsonl"), &sampler.trace)?;
    pb.finish_and_clear();
    let model = trainer.policy();
    let (per_env, scores) = evaluate_model(cfg, &suite, pool, &model)?;
    Ok(ArmRun {
        arm,
        seed,
        train_envs: envs.iter().map(|e| e.0.clone()).collect(),
        per_env,
        scores,
        relative_gain: None,
        env_steps: trainer.env_steps(),
        wall_seconds: start.elapsed().as_secs_f64(),
        curve,
    })
}

/// Run the whole study into `run_dir`.
pub fn run_experiment(cfg: &ExperimentConfig, run_dir: &Path) -> anyhow::Result<Results> {
    cfg.validate().map_err(|e| anyhow::anyhow!(e))?;
    let t0 = Instant::now();
    let run = RunDir::new(run_dir)?;
    envdist_core::io::write_json_atomic(run.root().join("config.json"), cfg)?;
    let mut results = Results::new(cfg.clone());
    let suite = Arc::new(Suite::new(SuiteConfig {
        canvas: cfg.canvas,
        ..SuiteConfig::default()
    }));
    // Compute time of every stage, whether computed now or loaded from the cache (then it is
    // the time the run that computed it took), so a resumed run still reports the full cost.
    let compute = std::cell::Cell::new(0.0f64);
    let say = |stage: &str, info: &super::stage::StageInfo| {
        let how = if info.cached { "cached" } else { "done" };
        eprintln!("[{stage}] {how} ({:.1}s)", info.seconds);
        compute.set(compute.get() + info.seconds);
    };

    let pool_key = (cfg.seed, cfg.pool_size, cfg.ood_envs, cfg.canvas);
    let (pool, info) = run.stage("pool", &pool_key, |_| pool_stage(cfg, &suite))?;
    say("pool", &info);
    results.stage_seconds.insert("pool".into(), info.seconds);
    results
        .facts
        .insert("pool environments".into(), pool.pool.len().to_string());
    results
        .facts
        .insert("pool families".into(), pool.families.to_string());
    results.facts.insert(
        "held-out (OOD) environments".into(),
        pool.ood.len().to_string(),
    );
    results.facts.insert(
        "conflict pairs in pool".into(),
        pool.conflict_pairs.len().to_string(),
    );

    let profile_key = (&pool_key, cfg.profile_trajectories, IGNORED_RULE_TAGS);
    let (prof, info) = run.stage("profiles", &profile_key, |dir| {
        profile_stage(cfg, &suite, &pool, dir, run.root())
    })?;
    say("profiles", &info);
    results
        .stage_seconds
        .insert("profiles".into(), info.seconds);
    results
        .facts
        .insert("atomic abilities".into(), prof.atomic_abilities.to_string());
    results
        .facts
        .insert("meta-abilities".into(), prof.meta_abilities.to_string());
    if let Some(c) = prof.twin_profile_cosine {
        results
            .facts
            .insert("profile cosine of conflict twins".into(), format!("{c:.3}"));
    }
    let profiles = ProfileSet::read(run.root().join(&prof.profiles_file))?;

    let warm_key = (&pool_key, cfg.warmup_steps, &cfg.model, &cfg.device);
    let (warm, info) = run.stage("warmup", &warm_key, |dir| {
        warmup_stage(cfg, suite.clone(), &pool, dir, run.root())
    })?;
    say("warmup", &info);
    results.stage_seconds.insert("warmup".into(), info.seconds);
    results.facts.insert(
        "training throughput (env steps/s, learning included)".into(),
        format!("{:.0}", warm.env_steps_per_second),
    );
    let base = PolicyModel::load(&run.root().join(&warm.checkpoint), device(cfg))?;

    let grad_key = (&warm_key, cfg.gradient_episodes, cfg.gradient_dim);
    let (grad, info) = run.stage("gradients", &grad_key, |dir| {
        gradient_stage(cfg, &suite, &pool, &base, dir, run.root())
    })?;
    say("gradients", &info);
    results
        .stage_seconds
        .insert("gradients".into(), info.seconds);
    if let Some(c) = grad.twin_cosine {
        results.facts.insert(
            "gradient cosine of conflict twins (mean)".into(),
            format!("{c:.3}"),
        );
    }
    if let Some(c) = grad.same_family_cosine {
        results.facts.insert(
            "gradient cosine of same-family non-twins (mean)".into(),
            format!("{c:.3}"),
        );
    }
    results.facts.insert(
        "gradient cosine over all pairs (mean)".into(),
        format!("{:.3}", grad.all_pairs_cosine),
    );
    results.facts.insert(
        "pairs with gradient cosine < -0.1".into(),
        format!("{:.1}%", 100.0 * grad.negative_fraction),
    );
    let grads = GradientSet::read(run.root().join(&grad.gradients_file))?;
    results.facts.insert(
        "envs with an exactly zero gradient (never solved by the base)".into(),
        no_signal_envs(&grads).len().to_string(),
    );

    // The extension flag joins the key only when on, so default runs keep their caches.
    let sel_key = if cfg.exclude_no_signal {
        serde_json::json!([&grad_key, cfg.k, cfg.seeds, "exclude-no-signal"])
    } else {
        serde_json::to_value((&grad_key, cfg.k, cfg.seeds))?
    };
    let (sels, info) = run.stage("selections", &sel_key, |_| {
        selection_stage(cfg, &profiles, &grads)
    })?;
    say("selections", &info);
    results
        .stage_seconds
        .insert("selections".into(), info.seconds);
    results.selections = sels.clone();

    let eval_key = (&warm_key, cfg.eval_episodes, &cfg.eval_scale, cfg.ood_envs);
    let (base_eval, info) = run.stage("arms/base", &eval_key, |_| {
        evaluate_model(cfg, &suite, &pool, &base)
    })?;
    say("arms/base", &info);
    results.runs.push(ArmRun {
        arm: Arm::Base,
        seed: 0,
        train_envs: vec![],
        per_env: base_eval.0.clone(),
        scores: base_eval.1.clone(),
        relative_gain: None,
        env_steps: 0,
        wall_seconds: info.seconds,
        curve: vec![],
    });
    for &arm in cfg.arms.iter().filter(|a| **a != Arm::Base) {
        for seed in 0..cfg.seeds {
            let (envs, mode) = arm_plan(arm, seed, &pool, &sels)?;
            let name = format!("arms/{}/seed{seed}", arm.name());
            let key = (&eval_key, &sel_key, cfg.train_steps, arm, seed, &envs);
            let (mut r, info) = run.stage(&name, &key, |dir| {
                train_arm(
                    cfg,
                    suite.clone(),
                    &pool,
                    &base,
                    &envs,
                    mode,
                    arm,
                    arm.name(),
                    seed,
                    dir,
                )
            })?;
            say(&name, &info);
            r.relative_gain = r.scores.relative_gain_over(&base_eval.1);
            results.runs.push(r);
        }
    }

    for &size in &cfg.scaling_sizes {
        for seed in 0..cfg.seeds {
            let mut rng = Rng::derive(cfg.seed ^ 0x5343_414c, (size as u64) << 8 | seed as u64);
            let mut ids = pool.pool.clone();
            rng.shuffle(&mut ids);
            ids.truncate(size);
            ids.sort();
            let name = format!("scaling/n{size}/seed{seed}");
            let key = (&eval_key, cfg.train_steps, size, seed, &ids);
            let (r, info) = run.stage(&name, &key, |dir| {
                let label = format!("scaling n={size}");
                train_arm(
                    cfg,
                    suite.clone(),
                    &pool,
                    &base,
                    &ids,
                    Mode::BaselineH4,
                    Arm::RandomK,
                    &label,
                    seed,
                    dir,
                )
            })?;
            say(&name, &info);
            results.scaling.push(ScalingPoint {
                pool_size: size,
                seed,
                scores: r.scores,
            });
        }
    }

    results.total_seconds = t0.elapsed().as_secs_f64();
    results.compute_seconds = compute.get();
    Ok(results)
}
