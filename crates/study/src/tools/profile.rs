//! Profile the default pool, or a trajectory log made elsewhere, into a directory, cached: the
//! study of `cargo xtask profile`.
//!
//! Pool mode rolls out every pool environment with two policies (the noisy solver and the
//! persistent explorer), log mode reads a JSONL log and replays it in the suite for ability
//! tags; both then segment, count and cluster into meta-abilities. The output directory holds
//! `trajectories.jsonl` (pool mode), `profiles.json`, `abilities.dot`, `abilities.svg` and
//! `summary.json` ([`ProfileSummary`]). Like a stage of the experiment it is cached through
//! [`cached`]: a later run under the same [`ProfileKey`] reuses the directory instead of
//! recomputing it (`force` recomputes). The key holds the configuration and a hash of the
//! input (the pool's specs or the log's bytes), not the code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, Trajectory};
use envdist_envs::Suite;
use envdist_profiling::{
    Explorer, LlmConfig, LlmSegmenter, LogCheck, MetaConfig, NoisyOracle, PolicyMaker, PoolProfile,
    RolloutConfig, Segmenter, TagSegmenter, check_trajectories, check_usable, coverage_cosine,
    profile_trajectories, read_trajectory_log, replay_abilities, rollout_pool, write_outputs,
};
use serde::{Deserialize, Serialize};

use crate::cache::cached;
use crate::error::{Result, StudyError, io_error};
use crate::observer::{Observer, Silent};

/// Schema version of `summary.json`.
pub const SUMMARY_SCHEMA_VERSION: u32 = 1;

/// Which segmenter cuts trajectories into abilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum SegmenterKind {
    /// The environments' own step tags.
    Tags,
    /// An OpenAI-compatible endpoint (ENVDIST_LLM_URL, ENVDIST_LLM_MODEL, ENVDIST_LLM_KEY).
    Llm,
}

/// Where the trajectories come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileInput {
    /// Roll out the default pool: half the trajectories by the noisy solver, half by the
    /// explorer.
    Pool {
        /// Trajectories per environment, harness level, seed.
        rollout: RolloutConfig,
        /// Error probability of the noisy solver.
        epsilon: f32,
        /// Probability that the explorer repeats its previous action.
        persistence: f32,
    },
    /// A trajectory log made elsewhere (JSONL, see crates/profiling/README.md).
    Log(PathBuf),
}

/// One profiling run.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRequest {
    /// The trajectories.
    pub input: ProfileInput,
    /// How trajectories are cut into atomic abilities.
    pub segmenter: SegmenterKind,
    /// Tag segmenter: drop these tags (an error with the LLM segmenter).
    pub ignore_tags: Vec<String>,
    /// Meta-ability clustering.
    pub meta: MetaConfig,
    /// Output directory.
    pub out: PathBuf,
    /// Worker threads (at least 1); the outputs do not depend on it.
    pub threads: usize,
    /// Recompute even if the outputs for this configuration exist.
    pub force: bool,
}

/// Where the trajectories came from, as the cache key records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A trajectory log made elsewhere.
    Log,
    /// Rollouts of the default pool.
    Pool,
}

/// Everything the outputs depend on; equal keys mean the cached outputs can be reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileKey {
    /// Pool or log.
    pub mode: Mode,
    /// The segmenter.
    pub segmenter: SegmenterKind,
    /// Tags the tag segmenter drops.
    pub ignore_tags: Vec<String>,
    /// Meta-ability clustering.
    pub meta: MetaConfig,
    /// Pool mode: rollout settings.
    pub rollout: Option<RolloutConfig>,
    /// Pool mode: the noisy solver's error probability.
    pub epsilon: Option<f32>,
    /// Pool mode: the explorer's persistence.
    pub persistence: Option<f32>,
    /// FNV-1a of the pool specs (pool mode) or of the log's bytes (log mode).
    pub input_hash: String,
    /// The log file (log mode).
    pub input: Option<PathBuf>,
}

/// A conflict-twin pair and the cosine of its coverage vectors.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TwinPair {
    /// The first twin (lower id).
    pub a: EnvId,
    /// The second twin.
    pub b: EnvId,
    /// Cosine of the two coverage vectors.
    pub cosine: f32,
}

/// How alike the profiles of the suite's conflict twins are: the paper's reason for a
/// gradient-based conflict term is that ability profiles cannot tell twins apart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TwinReport {
    /// Conflict-twin pairs with both sides profiled.
    pub pairs: usize,
    /// Lowest twin cosine.
    pub min_cosine: f32,
    /// Mean twin cosine.
    pub mean_cosine: f32,
    /// Mean coverage cosine over all other pairs of profiled environments, for contrast.
    pub other_pairs_mean_cosine: f32,
    /// Every pair, lowest cosine first.
    pub examples: Vec<TwinPair>,
}

/// `summary.json`: what was profiled, how long it took, and the run's configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProfileSummary {
    /// Always [`SUMMARY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Environments profiled.
    pub environments: usize,
    /// Trajectories profiled.
    pub trajectories: usize,
    /// Distinct atomic abilities.
    pub atomic_abilities: usize,
    /// Meta-abilities after clustering.
    pub meta_abilities: usize,
    /// Wall time of this run.
    pub seconds: f64,
    /// Seconds spent rolling out (pool mode) or reading the log, when computed.
    pub rollout_seconds: f64,
    /// Seconds spent segmenting, counting and clustering, when computed.
    pub profile_seconds: f64,
    /// True when the outputs were reused from an earlier run.
    pub cached: bool,
    /// Worker threads of this run.
    pub threads: usize,
    /// The segmenter's name (`tags`, `llm:<model>`).
    pub segmenter: String,
    /// Share of solved trajectories per policy name.
    pub success_rate: BTreeMap<String, f32>,
    /// Conflict twins' profile similarity, when both sides of a pair were profiled.
    pub twins: Option<TwinReport>,
    /// Log entries that do not match the suite's specs (reported, still profiled).
    pub check: LogCheck,
    /// meta-ability -> its atomic abilities.
    pub meta: BTreeMap<String, Vec<String>>,
    /// The output directory.
    pub out: PathBuf,
    /// The cache key the outputs were computed under.
    pub config: ProfileKey,
}

/// Run `request` on `request.threads` worker threads, or reuse its output directory when it
/// holds the outputs of the same [`ProfileKey`]. The segmenter is built first, so a bad LLM
/// configuration fails before any rollout. `observer` sees the rollout progress and a
/// `warning: ...` note per log entry the suite does not know.
pub fn profile(request: &ProfileRequest, observer: &dyn Observer) -> Result<ProfileSummary> {
    crate::ensure!(
        request.threads >= 1,
        "threads: expected at least 1, found {}",
        request.threads
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(request.threads)
        .build()
        .map_err(|e| StudyError::msg(format!("building the worker thread pool: {e}")))?;
    pool.install(|| profile_in_pool(request, observer))
}

fn profile_in_pool(request: &ProfileRequest, observer: &dyn Observer) -> Result<ProfileSummary> {
    let start = Instant::now();
    request.meta.validate()?;
    let suite = Suite::default();
    let segmenter = make_segmenter(request.segmenter, &request.ignore_tags, &suite)?;
    let key = cache_key(request, &suite)?;
    if request.force {
        let _ = std::fs::remove_file(request.out.join("stage.json"));
    }
    // The directory's own stage record; its events are not worth a line of their own.
    let (mut summary, info) = cached(&request.out, "profile", &key, &Silent, |_| {
        compute(request, &suite, segmenter.as_ref(), &key, observer)
    })?;
    if info.cached {
        summary.cached = true;
        summary.threads = request.threads;
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

fn make_segmenter(
    kind: SegmenterKind,
    ignore_tags: &[String],
    suite: &Suite,
) -> Result<Box<dyn Segmenter>> {
    crate::ensure!(
        kind == SegmenterKind::Tags || ignore_tags.is_empty(),
        "ignore_tags: applies to the tag segmenter only, found {}",
        ignore_tags.join(",")
    );
    Ok(match kind {
        SegmenterKind::Tags => Box::new(TagSegmenter::new(true, ignore_tags.to_vec())),
        SegmenterKind::Llm => {
            let mut config = LlmConfig::from_env()?;
            if config.vocabulary.is_empty() {
                config.vocabulary = suite.abilities().into_iter().collect();
            }
            Box::new(LlmSegmenter::new(config)?)
        }
    })
}

fn cache_key(request: &ProfileRequest, suite: &Suite) -> Result<ProfileKey> {
    let mut key = ProfileKey {
        mode: Mode::Pool,
        segmenter: request.segmenter,
        ignore_tags: request.ignore_tags.clone(),
        meta: request.meta.clone(),
        rollout: None,
        epsilon: None,
        persistence: None,
        input_hash: String::new(),
        input: None,
    };
    match &request.input {
        ProfileInput::Log(file) => {
            let bytes = std::fs::read(file).map_err(io_error(file))?;
            key.mode = Mode::Log;
            key.input_hash = envdist_core::hash::fnv1a_hex(&bytes);
            key.input = Some(file.clone());
        }
        ProfileInput::Pool {
            rollout,
            epsilon,
            persistence,
        } => {
            let specs_json = serde_json::to_vec(&suite.pool_specs())?;
            key.rollout = Some(rollout.clone());
            key.epsilon = Some(*epsilon);
            key.persistence = Some(*persistence);
            key.input_hash = envdist_core::hash::fnv1a_hex(&specs_json);
        }
    }
    Ok(key)
}

/// Roll out (or read the log), profile, write the outputs and `summary.json` into the output
/// directory.
fn compute(
    request: &ProfileRequest,
    suite: &Suite,
    segmenter: &dyn Segmenter,
    key: &ProfileKey,
    observer: &dyn Observer,
) -> Result<ProfileSummary> {
    let start = Instant::now();
    let out = &request.out;
    let mut replay = None;
    let trajectories: Vec<Trajectory> = match &request.input {
        ProfileInput::Log(file) => {
            // Untagged trajectories (a trainer's chat log) get their tags by replay in the suite.
            let mut log = read_trajectory_log(file)?;
            replay = Some(replay_abilities(&mut log, suite));
            log
        }
        ProfileInput::Pool {
            rollout,
            epsilon,
            persistence,
        } => {
            let specs = suite.pool_specs();
            let bar = observer.progress("rollouts (envs)", specs.len() as u64);
            let (eps, pers) = (*epsilon, *persistence);
            let first: Box<PolicyMaker> = Box::new(move || Box::new(NoisyOracle::new(eps)));
            let second: Box<PolicyMaker> = Box::new(move || Box::new(Explorer::new(pers)));
            let trajectories =
                rollout_pool(suite, &specs, rollout, &*first, &*second, &|_| bar.inc(1))?;
            bar.finish();
            envdist_core::io::write_jsonl_atomic(out.join("trajectories.jsonl"), &trajectories)?;
            trajectories
        }
    };
    let rollout_seconds = start.elapsed().as_secs_f64();
    let check = check_trajectories(&trajectories, &suite.specs());
    for line in check.describe() {
        observer.note(&format!("warning: {line}"));
    }

    let t1 = Instant::now();
    let profile = profile_trajectories(&trajectories, segmenter, &request.meta)?;
    if let ProfileInput::Log(file) = &request.input {
        check_usable(file, &profile, trajectories.len(), replay.as_ref())?;
    }
    write_outputs(&profile, out)?;
    let profile_seconds = t1.elapsed().as_secs_f64();

    let mut summary = ProfileSummary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        environments: profile.profiles.profiles.len(),
        trajectories: trajectories.len(),
        atomic_abilities: profile.atomic_abilities(),
        meta_abilities: profile.meta_abilities.len(),
        seconds: 0.0,
        rollout_seconds,
        profile_seconds,
        cached: false,
        threads: request.threads,
        segmenter: profile.segmenter.clone(),
        success_rate: success_rates(&trajectories),
        twins: twin_report(&profile, suite),
        check,
        meta: profile
            .meta_abilities
            .iter()
            .map(|m| (m.name.clone(), m.members.clone()))
            .collect(),
        out: out.clone(),
        config: key.clone(),
    };
    summary.seconds = start.elapsed().as_secs_f64();
    envdist_core::io::write_json_atomic(out.join("summary.json"), &summary)?;
    Ok(summary)
}

/// Share of solved trajectories per policy name.
pub fn success_rates(trajectories: &[Trajectory]) -> BTreeMap<String, f32> {
    let mut n: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for t in trajectories {
        let e = n.entry(t.policy.as_str()).or_default();
        e.0 += t.success as u32;
        e.1 += 1;
    }
    n.into_iter()
        .map(|(k, (s, t))| (k.to_string(), s as f32 / t.max(1) as f32))
        .collect()
}

/// The coverage cosine of every conflict-twin pair of `suite` whose members were both
/// profiled, beside the mean over all other pairs; `None` without such a pair.
pub fn twin_report(profile: &PoolProfile, suite: &Suite) -> Option<TwinReport> {
    let ids: Vec<EnvId> = profile
        .profiles
        .profiles
        .iter()
        .map(|p| p.env.clone())
        .collect();
    let mut pairs: Vec<TwinPair> = suite
        .conflict_pairs(&ids)
        .into_iter()
        .filter_map(|(a, b)| {
            let cosine = coverage_cosine(profile.profile(&a)?, profile.profile(&b)?);
            Some(TwinPair { a, b, cosine })
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let seen: BTreeSet<(EnvId, EnvId)> = pairs.iter().map(|p| (p.a.clone(), p.b.clone())).collect();
    let ps = &profile.profiles.profiles;
    let (mut total, mut count) = (0.0f64, 0usize);
    for i in 0..ps.len() {
        for j in i + 1..ps.len() {
            let (a, b) = (&ps[i].env, &ps[j].env);
            let key = if a < b {
                (a.clone(), b.clone())
            } else {
                (b.clone(), a.clone())
            };
            if !seen.contains(&key) {
                total += coverage_cosine(&ps[i], &ps[j]) as f64;
                count += 1;
            }
        }
    }
    pairs.sort_by(|a, b| a.cosine.total_cmp(&b.cosine).then_with(|| a.a.cmp(&b.a)));
    Some(TwinReport {
        pairs: pairs.len(),
        min_cosine: pairs[0].cosine,
        mean_cosine: pairs.iter().map(|p| p.cosine).sum::<f32>() / pairs.len() as f32,
        other_pairs_mean_cosine: (total / count.max(1) as f64) as f32,
        examples: pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "envdist-study-profile-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn request(input: ProfileInput, out: PathBuf) -> ProfileRequest {
        ProfileRequest {
            input,
            segmenter: SegmenterKind::Tags,
            ignore_tags: Vec::new(),
            meta: MetaConfig::default(),
            out,
            threads: 1,
            force: false,
        }
    }

    #[test]
    fn a_log_is_profiled_once_and_then_reused_until_forced() {
        let d = temp("log");
        let log = d.join("agent.jsonl");
        let lines: Vec<String> = [(1, "navigate"), (1, "wall-follow"), (2, "navigate")]
            .iter()
            .map(|(episode, tag)| {
                serde_json::json!({"schema_version": 1, "env": "maze/classic",
                    "episode": episode, "action": "up", "abilities": [tag]})
                .to_string()
            })
            .collect();
        std::fs::write(&log, lines.join("\n") + "\n").unwrap();
        let mut req = request(ProfileInput::Log(log.clone()), d.join("out"));
        let first = profile(&req, &Silent).unwrap();
        assert_eq!((first.environments, first.trajectories), (1, 2));
        assert!(!first.cached);
        assert_eq!(first.config.mode, Mode::Log);
        assert_eq!(first.config.input.as_deref(), Some(log.as_path()));
        let written: ProfileSummary =
            envdist_core::io::read_json(d.join("out/summary.json"), Some(SUMMARY_SCHEMA_VERSION))
                .unwrap();
        assert_eq!(written.meta, first.meta);
        assert!(d.join("out/profiles.json").exists());
        let again = profile(&req, &Silent).unwrap();
        assert!(again.cached);
        assert_eq!(again.meta, first.meta);
        req.force = true;
        assert!(!profile(&req, &Silent).unwrap().cached);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bad_requests_are_refused_by_name() {
        let d = temp("bad");
        let mut req = request(ProfileInput::Log(d.join("missing.jsonl")), d.join("out"));
        let e = profile(&req, &Silent).unwrap_err().to_string();
        assert!(e.contains("missing.jsonl"), "{e}");
        req.threads = 0;
        let e = profile(&req, &Silent).unwrap_err().to_string();
        assert!(e.contains("threads") && e.contains('0'), "{e}");
        req.threads = 1;
        req.segmenter = SegmenterKind::Llm;
        req.ignore_tags = vec!["negation".into()];
        let e = profile(&req, &Silent).unwrap_err().to_string();
        assert!(e.contains("ignore_tags") && e.contains("negation"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn success_rates_are_per_policy() {
        let t = |policy: &str, success| Trajectory {
            schema_version: 1,
            task: envdist_core::Task {
                env: EnvId::new("maze/classic"),
                seed: 0,
                harness: envdist_core::HarnessLevel::H4,
                scale: 1,
            },
            policy: policy.into(),
            steps: Vec::new(),
            success,
            episode_return: 0.0,
        };
        let rates = success_rates(&[t("a", true), t("a", false), t("b", true)]);
        assert_eq!(rates["a"], 0.5);
        assert_eq!(rates["b"], 1.0);
    }
}
