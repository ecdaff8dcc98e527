//! Profiling the real environment suite: determinism across thread counts, every atomic
//! ability in one meta-ability, declared tags only, and conflict twins that profiles cannot
//! tell apart.

use std::collections::BTreeSet;
use std::path::Path;

use envdist_core::env::EnvFactory;
use envdist_core::{ProfileSet, Trajectory};
use envdist_envs::Suite;
use envdist_profiling::{
    Explorer, MetaConfig, NoisyOracle, PolicyMaker, PoolProfile, RolloutConfig, TagSegmenter,
    check_trajectories, coverage_cosine, profile_trajectories, rollout_pool,
};

use crate::temp_dir;

fn run(threads: usize, suite: &Suite, t: u32, noise: bool) -> (Vec<Trajectory>, PoolProfile) {
    let specs = suite.pool_specs();
    let config = RolloutConfig {
        trajectories_per_env: t,
        seed: 5,
        ..RolloutConfig::default()
    };
    let eps = if noise { 0.1 } else { 0.0 };
    let first: Box<PolicyMaker> = Box::new(move || Box::new(NoisyOracle::new(eps)));
    let second: Box<PolicyMaker> = if noise {
        Box::new(|| Box::new(Explorer::new(0.5)))
    } else {
        Box::new(|| Box::new(NoisyOracle::new(0.0)))
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| {
            let ts = rollout_pool(suite, &specs, &config, &*first, &*second, &|_| {}).unwrap();
            let p = profile_trajectories(&ts, &TagSegmenter::default(), &MetaConfig::default())
                .unwrap();
            (ts, p)
        })
}

#[test]
fn pool_profiles_are_deterministic_complete_and_valid() {
    let suite = Suite::with_canvas(16).unwrap();
    let (ts1, p1) = run(1, &suite, 4, true);
    let (ts2, p2) = run(2, &suite, 4, true);
    assert_eq!(ts1, ts2);
    assert_eq!(p1.profiles, p2.profiles);
    assert_eq!(p1.meta_abilities, p2.meta_abilities);

    let pool = suite.pool_specs();
    assert_eq!(p1.profiles.profiles.len(), pool.len());
    assert_eq!(ts1.len(), pool.len() * 4);
    // The suite's tags are all declared in its specs.
    let check = check_trajectories(&ts1, &suite.specs());
    assert!(check.is_clean(), "{:?}", check.describe());
    // Every atomic ability that fired is in exactly one meta-ability.
    let mut members: Vec<&String> = p1
        .meta_abilities
        .iter()
        .flat_map(|m| m.members.iter())
        .collect();
    members.sort();
    let before = members.len();
    members.dedup();
    assert_eq!(members.len(), before);
    let atomic: Vec<String> = p1.graph.nodes().iter().map(|n| n.name.clone()).collect();
    assert_eq!(members.into_iter().cloned().collect::<Vec<_>>(), atomic);
    p1.profiles.validate(Path::new("memory")).unwrap();

    let dir = temp_dir("xtask-profile");
    let files = envdist_profiling::write_outputs(&p1, &dir).unwrap();
    assert_eq!(ProfileSet::read(&files.profiles).unwrap(), p1.profiles);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn conflict_twins_have_near_identical_profiles() {
    // Noise-free solver in both roles: what remains is the twins' own procedural variety.
    let suite = Suite::with_canvas(16).unwrap();
    let (ts, p) = run(2, &suite, 10, false);
    let specs = suite.pool_specs();
    // The suite marks some twins with a control/answer variant tag; an annotator blind to
    // those sees only the games' abilities. Twins whose rules differ in other declared
    // abilities too (tic-tac-toe's misère variant) are different games to a profile and are
    // left out.
    let variant_tags: BTreeSet<String> = ["mirrored-control", "negation"]
        .into_iter()
        .map(String::from)
        .collect();
    let mut pairs = Vec::new();
    for spec in &specs {
        let Some(twin) = &spec.conflict_twin else {
            continue;
        };
        let Some(other) = specs.iter().find(|s| &s.id == twin) else {
            continue;
        };
        let game = |abilities: &[String]| -> BTreeSet<String> {
            abilities
                .iter()
                .filter(|a| !variant_tags.contains(*a))
                .cloned()
                .collect()
        };
        if game(&spec.abilities) == game(&other.abilities) {
            pairs.push((
                spec.id.clone(),
                twin.clone(),
                spec.abilities == other.abilities,
            ));
        }
    }
    assert!(!pairs.is_empty(), "the pool has no conflict twins");
    let blind = profile_trajectories(
        &ts,
        &TagSegmenter::new(true, variant_tags.into_iter().collect()),
        &MetaConfig::default(),
    )
    .unwrap();
    for (a, b, same_tags) in pairs {
        let c = coverage_cosine(blind.profile(&a).unwrap(), blind.profile(&b).unwrap());
        assert!(c > 0.95, "{a} vs {b}: cosine {c} without marking tags");
        if same_tags {
            let c = coverage_cosine(p.profile(&a).unwrap(), p.profile(&b).unwrap());
            assert!(c > 0.95, "{a} vs {b}: cosine {c}");
        }
    }
}
