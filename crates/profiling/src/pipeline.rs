//! From trajectories to a [`ProfileSet`]: segment, count, build the graph, cluster, write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use envdist_core::env::EnvFactory;
use envdist_core::{
    AbilityProfile, EnvId, FileError, MetaAbility, PROFILE_SCHEMA_VERSION, ProfileSet, Trajectory,
};
use rayon::prelude::*;

use crate::ProfilingError;
use crate::graph::AbilityGraph;
use crate::log::{ReplayReport, read_log, replay_abilities};
use crate::meta::{MetaConfig, cluster, coverage, meta_of};
use crate::segment::Segmenter;
use crate::stats::EnvAbilityStats;

/// Everything profiling a pool produces.
#[derive(Debug, Clone)]
pub struct PoolProfile {
    /// Name of the segmenter used.
    pub segmenter: String,
    /// Per-environment statistics, ordered by env id.
    pub stats: Vec<EnvAbilityStats>,
    /// The pool-wide transition graph (nodes know their meta-ability).
    pub graph: AbilityGraph,
    /// The clustering of atomic abilities, ordered by name.
    pub meta_abilities: Vec<MetaAbility>,
    /// The profiles as selection reads them: coverage over meta-abilities plus atomic counts
    /// and transitions, one per environment, ordered by env id.
    pub profiles: ProfileSet,
}

impl PoolProfile {
    /// Number of distinct atomic abilities.
    pub fn atomic_abilities(&self) -> usize {
        self.graph.nodes().len()
    }

    /// The profile of `env`, if it was profiled.
    pub fn profile(&self, env: &EnvId) -> Option<&AbilityProfile> {
        self.profiles.profiles.iter().find(|p| &p.env == env)
    }
}

/// Segment every trajectory in parallel (order preserved). A failure names the trajectory.
pub fn segment_all(
    trajectories: &[Trajectory],
    segmenter: &dyn Segmenter,
) -> Result<Vec<Vec<String>>, ProfilingError> {
    trajectories
        .par_iter()
        .enumerate()
        .map(|(index, t)| {
            segmenter
                .segment(t)
                .map_err(|source| ProfilingError::Segment {
                    env: t.task.env.to_string(),
                    index,
                    source,
                })
        })
        .collect()
}

/// Profile already segmented trajectories: `(env, ability sequence)` pairs.
pub fn profile_sequences(
    sequences: &[(EnvId, Vec<String>)],
    segmenter_name: &str,
    meta: &MetaConfig,
) -> Result<PoolProfile, ProfilingError> {
    let mut by_env: BTreeMap<EnvId, EnvAbilityStats> = BTreeMap::new();
    for (env, seq) in sequences {
        by_env
            .entry(env.clone())
            .or_insert_with(|| EnvAbilityStats::new(env.clone()))
            .add_sequence(seq);
    }
    let stats: Vec<EnvAbilityStats> = by_env.into_values().collect();
    let mut graph = AbilityGraph::from_stats(&stats);
    let meta_abilities = cluster(&stats, &graph, meta)?;
    let assignment = meta_of(&meta_abilities);
    graph.set_meta(&assignment);
    let profiles = ProfileSet {
        schema_version: PROFILE_SCHEMA_VERSION,
        abilities: meta_abilities.iter().map(|m| m.name.clone()).collect(),
        meta_abilities: meta_abilities.clone(),
        profiles: stats
            .iter()
            .map(|s| AbilityProfile {
                env: s.env.clone(),
                coverage: coverage(s, &assignment),
                atomic_counts: s.counts.clone(),
                transitions: s.transition_list(),
                trajectories: s.trajectories,
            })
            .collect(),
    };
    Ok(PoolProfile {
        segmenter: segmenter_name.to_string(),
        stats,
        graph,
        meta_abilities,
        profiles,
    })
}

/// Segment and profile `trajectories`.
pub fn profile_trajectories(
    trajectories: &[Trajectory],
    segmenter: &dyn Segmenter,
    meta: &MetaConfig,
) -> Result<PoolProfile, ProfilingError> {
    let seqs = segment_all(trajectories, segmenter)?;
    let pairs: Vec<(EnvId, Vec<String>)> = trajectories
        .iter()
        .map(|t| t.task.env.clone())
        .zip(seqs)
        .collect();
    profile_sequences(&pairs, segmenter.name(), meta)
}

/// Refuse a profile of the log at `path` in which no trajectory exercised any ability (the
/// log has no tags and was not, or could not be, replayed): an empty profile would select
/// nothing. `replay` says what a replay did, for the hint.
pub fn check_usable(
    path: &Path,
    profile: &PoolProfile,
    trajectories: usize,
    replay: Option<&ReplayReport>,
) -> Result<(), ProfilingError> {
    if profile.atomic_abilities() > 0 {
        return Ok(());
    }
    let hint = match replay {
        None => {
            "; log each step's `abilities`, or replay the actions in their environments".to_string()
        }
        Some(r) if r.unknown_env > 0 => format!(
            "; {} trajectories are of environments the replay does not know: {}",
            r.unknown_env,
            r.describe_unknown().unwrap_or_default()
        ),
        Some(_) => String::new(),
    };
    Err(ProfilingError::NoUsableTrajectory {
        path: path.to_path_buf(),
        trajectories,
        hint,
    })
}

/// A log's profile and how it was read.
#[derive(Debug, Clone)]
pub struct LogProfile {
    /// The profile.
    pub profile: PoolProfile,
    /// Trajectories profiled.
    pub trajectories: usize,
    /// Chat turns skipped because their text names no single action.
    pub unreadable_turns: u64,
    /// Chat episodes dropped because none of their turns named an action.
    pub dropped_episodes: Vec<String>,
    /// What the replay did, when a factory was given.
    pub replay: Option<ReplayReport>,
}

/// Profile a trajectory log ([`crate::read_log`]'s formats, a trainer's chat log included):
/// read it, replay untagged trajectories in the environments `replay_with` makes (when
/// given), segment and profile. A log with no usable trajectory is an error naming the file.
pub fn profile_log(
    path: &Path,
    segmenter: &dyn Segmenter,
    meta: &MetaConfig,
    replay_with: Option<&dyn EnvFactory>,
) -> Result<LogProfile, ProfilingError> {
    let mut read = read_log(path)?;
    let replay = replay_with.map(|f| replay_abilities(&mut read.trajectories, f));
    let profile = profile_trajectories(&read.trajectories, segmenter, meta)?;
    check_usable(path, &profile, read.trajectories.len(), replay.as_ref())?;
    Ok(LogProfile {
        profile,
        trajectories: read.trajectories.len(),
        unreadable_turns: read.unreadable_turns,
        dropped_episodes: read.dropped_episodes,
        replay,
    })
}

/// Cosine similarity of two profiles' coverage vectors (0 when either is empty).
pub fn coverage_cosine(a: &AbilityProfile, b: &AbilityProfile) -> f32 {
    let dot: f32 = a
        .coverage
        .iter()
        .filter_map(|(k, x)| b.coverage.get(k).map(|y| x * y))
        .sum();
    let na = a.coverage.values().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.coverage.values().map(|x| x * x).sum::<f32>().sqrt();
    if na > 0.0 && nb > 0.0 {
        (dot / (na * nb)).min(1.0)
    } else {
        0.0
    }
}

/// Paths of the files [`write_outputs`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFiles {
    /// `profiles.json`: the [`ProfileSet`].
    pub profiles: PathBuf,
    /// `abilities.dot`: the transition graph in Graphviz DOT.
    pub graph_dot: PathBuf,
    /// `abilities.svg`: the transition graph as a figure.
    pub graph_svg: PathBuf,
}

/// Edges below this pool-wide probability are left out of the SVG figure to keep it legible
/// (the DOT file keeps every edge).
pub const SVG_MIN_EDGE_PROBABILITY: f32 = 0.05;

/// Write `profiles.json`, `abilities.dot` and `abilities.svg` into `dir`, each atomically.
pub fn write_outputs(profile: &PoolProfile, dir: &Path) -> Result<OutputFiles, FileError> {
    let files = OutputFiles {
        profiles: dir.join("profiles.json"),
        graph_dot: dir.join("abilities.dot"),
        graph_svg: dir.join("abilities.svg"),
    };
    envdist_core::io::write_json_atomic(&files.profiles, &profile.profiles)?;
    envdist_core::io::write_atomic(&files.graph_dot, profile.graph.to_dot().as_bytes())?;
    envdist_core::io::write_atomic(
        &files.graph_svg,
        profile.graph.to_svg(SVG_MIN_EDGE_PROBABILITY).as_bytes(),
    )?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Explorer, NoisyOracle};
    use crate::rollout::{PolicyMaker, RolloutConfig, rollout_pool};
    use crate::segment::TagSegmenter;
    use crate::test_support::{tmp_dir, traj};
    use crate::toy::ToyFactory;
    use envdist_core::env::EnvFactory;

    #[test]
    fn hand_written_trajectories_give_exact_profiles() {
        let ts = vec![
            traj("e/a", &[&["nav"], &["nav"], &["pick"], &["nav", "door"]]),
            traj("e/a", &[&["nav"], &["door"]]),
            traj("e/b", &[&["count"]]),
        ];
        let p =
            profile_trajectories(&ts, &TagSegmenter::default(), &MetaConfig::default()).unwrap();
        let a = p.profile(&EnvId::new("e/a")).unwrap();
        // Segments: [nav, pick, nav, door] and [nav, door].
        assert_eq!(a.trajectories, 2);
        assert_eq!(a.atomic_counts["nav"], 3);
        assert_eq!(a.atomic_counts["door"], 2);
        assert_eq!(a.atomic_counts["pick"], 1);
        let t: Vec<(&str, &str, u64, f32)> = a
            .transitions
            .iter()
            .map(|t| (t.from.as_str(), t.to.as_str(), t.count, t.probability))
            .collect();
        assert_eq!(
            t,
            [
                ("nav", "door", 2, 2.0 / 3.0),
                ("nav", "pick", 1, 1.0 / 3.0),
                ("pick", "nav", 1, 1.0),
            ]
        );
        let total: f32 = a.coverage.values().sum();
        assert!((total - 1.0).abs() < 1e-6);
        p.profiles.validate(Path::new("mem")).unwrap();
        assert_eq!(p.atomic_abilities(), 4);
        assert_eq!(p.segmenter, "tags");

        let d = tmp_dir("pipeline-out");
        let files = write_outputs(&p, &d).unwrap();
        let back = ProfileSet::read(&files.profiles).unwrap();
        assert_eq!(back, p.profiles);
        assert!(
            std::fs::read_to_string(&files.graph_dot)
                .unwrap()
                .starts_with("digraph")
        );
        assert!(
            std::fs::read_to_string(&files.graph_svg)
                .unwrap()
                .starts_with("<svg")
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_log_without_abilities_is_refused_unless_replayed() {
        let d = tmp_dir("pipeline-log");
        let p = d.join("steps.jsonl");
        let line = "{\"schema_version\":1,\"env\":\"toy/walk\",\"episode\":1,\"action\":\"right\",\"scale\":3}\n";
        std::fs::write(&p, line.repeat(2)).unwrap();
        let seg = TagSegmenter::default();
        let meta = MetaConfig::default();
        let e = profile_log(&p, &seg, &meta, None).unwrap_err().to_string();
        assert!(
            e.contains("steps.jsonl") && e.contains("no usable trajectory"),
            "{e}"
        );
        let got = profile_log(&p, &seg, &meta, Some(&ToyFactory)).unwrap();
        assert_eq!(got.trajectories, 1);
        assert_eq!(got.replay.unwrap().replayed, 1);
        let walk = got.profile.profile(&EnvId::new("toy/walk")).unwrap();
        assert!(walk.atomic_counts.contains_key("navigate"), "{walk:?}");
        let other = d.join("other.jsonl");
        std::fs::write(&other, line.replace("toy/walk", "zzz/unknown")).unwrap();
        let e = profile_log(&other, &seg, &meta, Some(&ToyFactory))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("other.jsonl") && e.contains("does not know"),
            "{e}"
        );
        // A misspelt id is named, with the id it most likely meant.
        let misspelt = d.join("misspelt.jsonl");
        std::fs::write(&misspelt, line.replace("toy/walk", "toy/wakl")).unwrap();
        let e = profile_log(&misspelt, &seg, &meta, Some(&ToyFactory))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"toy/wakl\" (1 trajectories; nearest: toy/walk, toy/mirror)"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn conflict_twins_have_identical_profiles() {
        let f = ToyFactory;
        let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.0)));
        let second: Box<PolicyMaker> = Box::new(|| Box::new(Explorer::new(0.5)));
        let config = RolloutConfig {
            trajectories_per_env: 8,
            ..RolloutConfig::default()
        };
        let ts = rollout_pool(&f, &f.specs(), &config, &*first, &*first, &|_| {}).unwrap();
        let p =
            profile_trajectories(&ts, &TagSegmenter::default(), &MetaConfig::default()).unwrap();
        let walk = p.profile(&EnvId::new("toy/walk")).unwrap();
        let mirror = p.profile(&EnvId::new("toy/mirror")).unwrap();
        // A noiseless solver plays the mirrored twin with opposite actions but the same
        // abilities: the profiles cannot tell the twins apart.
        assert!((coverage_cosine(walk, mirror) - 1.0).abs() < 1e-6);
        assert_eq!(walk.atomic_counts, mirror.atomic_counts);
        // With the explorer in the mix they stay close but need not be identical.
        let ts2 = rollout_pool(&f, &f.specs(), &config, &*first, &*second, &|_| {}).unwrap();
        let p2 =
            profile_trajectories(&ts2, &TagSegmenter::default(), &MetaConfig::default()).unwrap();
        let c = coverage_cosine(
            p2.profile(&EnvId::new("toy/walk")).unwrap(),
            p2.profile(&EnvId::new("toy/mirror")).unwrap(),
        );
        assert!(c > 0.9, "{c}");
    }
}
