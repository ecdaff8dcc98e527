//! Every reader of this crate (and core's profile and gradient files, which selection
//! consumes) under mutation fuzzing (`envdist_core::fuzz`): each input parses to a value that
//! selection then runs on, or is an error naming the file; never a panic, a huge allocation or
//! a hang. `ENVDIST_FUZZ_INPUTS=100000 cargo test -p envdist-selection --lib fuzz --
//! --nocapture` is the long run (docs/fuzzing.md).

use std::path::Path;

use crate::npy::tests::npy;
use crate::{
    Problem, SelectConfig, Selection, SyntheticConfig, read_counts_npy, read_index_npy, select,
    synthetic,
};
use envdist_core::fuzz::{Fuzz, TrackingAllocator, scratch_dir};
use envdist_core::{GradientSet, ProfileSet};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

/// A small real pool: profiles and gradients as selection's synthetic generator makes them.
fn pool() -> Problem {
    synthetic::generate(&SyntheticConfig {
        n: 12,
        abilities: 9,
        abilities_per_env: [1, 4],
        dim: 6,
        conflict_clusters: 1,
        cluster_size: 4,
        redundant_themes: 1,
        theme_size: 3,
        seed: 3,
        ..Default::default()
    })
    .unwrap()
    .problem
}

/// The selection a parsed pool supports: AES with conflict when there are gradients.
fn select_on(problem: &Problem) -> Result<(), String> {
    let k = problem.n_envs().clamp(1, 4);
    let mut config = SelectConfig::aes(k);
    if problem.gradients().is_none() {
        config = config.without_conflict();
    }
    select(problem, &config)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn fuzz_counts_npy() {
    let dense: Vec<u8> = (0..6 * 5).map(|i| (i * 7 % 4) as u8).collect();
    let as_f4: Vec<u8> = dense
        .iter()
        .flat_map(|&v| f32::from(v).to_le_bytes())
        .collect();
    let as_i8: Vec<u8> = dense
        .iter()
        .flat_map(|&v| i64::from(v).to_le_bytes())
        .collect();
    let dir = scratch_dir("counts-npy");
    let summary = Fuzz::new("counts-npy")
        .seed("u1", npy("|u1", false, "(6, 5)", &dense))
        .seed(
            "b1",
            npy(
                "|b1",
                false,
                "(6, 5)",
                &dense.iter().map(|&v| u8::from(v > 1)).collect::<Vec<_>>(),
            ),
        )
        .seed("f4 fortran", npy("<f4", true, "(5, 6)", &as_f4))
        .seed("i8", npy("<i8", false, "(6, 5)", &as_i8))
        .seed(
            "shipped",
            std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/small_counts.npy"),
            )
            .unwrap(),
        )
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run_on_file(&dir.join("counts.npy"), |path| {
            let counts = read_counts_npy(path).map_err(|e| e.to_string())?;
            let problem = Problem::from_counts(counts, None, None).map_err(|e| e.to_string())?;
            // Selection must run on whatever the reader accepts; its refusals (k larger than
            // the pool) are not the reader's to name.
            let _ = select_on(&problem);
            Ok(())
        });
    summary.assert_clean();
}

#[test]
fn fuzz_index_npy() {
    let ranking: Vec<u8> = [3i64, 0, 7, 1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let dir = scratch_dir("index-npy");
    let summary = Fuzz::new("index-npy")
        .seed("i8", npy("<i8", false, "(4,)", &ranking))
        .seed("u2", npy("<u2", false, "(3,)", &[1, 0, 2, 0, 9, 0]))
        .seed(
            "shipped",
            std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/data/small_ref_greedy_ranking.npy"),
            )
            .unwrap(),
        )
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run_on_file(&dir.join("ranking.npy"), |path| {
            read_index_npy(path).map(drop).map_err(|e| e.to_string())
        });
    summary.assert_clean();
}

#[test]
fn fuzz_profiles() {
    let problem = pool();
    let dir = scratch_dir("profiles");
    let seed = dir.join("seed.json");
    envdist_core::io::write_json_atomic(&seed, &problem.to_profile_set()).unwrap();
    let summary = Fuzz::new("profiles")
        .seed("synthetic pool", std::fs::read(&seed).unwrap())
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run_on_file(&dir.join("profiles.json"), |path| {
            let set = ProfileSet::read(path).map_err(|e| e.to_string())?;
            let problem = Problem::from_profiles(&set, None).map_err(|e| e.to_string())?;
            let _ = select_on(&problem);
            Ok(())
        });
    summary.assert_clean();
}

#[test]
fn fuzz_gradients() {
    let problem = pool();
    let grads = problem.gradient_set().unwrap();
    let dir = scratch_dir("gradients");
    let seed = dir.join("seed.safetensors");
    grads.write(&seed).unwrap();
    let unprojected = GradientSet {
        projection_seed: None,
        ..grads.clone()
    };
    let seed2 = dir.join("seed2.safetensors");
    unprojected.write(&seed2).unwrap();
    let summary = Fuzz::new("gradients")
        .seed("synthetic pool", std::fs::read(&seed).unwrap())
        .seed("no projection seed", std::fs::read(&seed2).unwrap())
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run_on_file(&dir.join("gradients.safetensors"), |path| {
            let g = GradientSet::read(path).map_err(|e| e.to_string())?;
            // What every consumer computes from a gradient set.
            let _ = (g.pairwise_cosines(), g.zero_rows());
            if let Ok(p) = pool().with_gradients(&g) {
                let _ = select_on(&p);
            }
            Ok(())
        });
    summary.assert_clean();
}

#[test]
fn fuzz_select_config() {
    let problem = pool();
    let dir = scratch_dir("select-config");
    let configs = [
        SelectConfig::aes(4),
        SelectConfig {
            require_full_coverage: true,
            must_include: vec![problem.env_ids()[1].clone()],
            must_exclude: vec![problem.env_ids()[2].clone()],
            optimizer: crate::Optimizer::Stochastic {
                epsilon: 0.1,
                seed: 5,
            },
            aggregation: crate::Aggregation::Mean,
            ..SelectConfig::aes(5)
        },
    ];
    let mut fuzz = Fuzz::new("select-config");
    for (i, c) in configs.iter().enumerate() {
        fuzz = fuzz.seed(format!("config {i}"), serde_json::to_vec_pretty(c).unwrap());
    }
    let summary = fuzz
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run_on_file(&dir.join("select.json"), |path| {
            let config: SelectConfig =
                envdist_core::io::read_json(path, None).map_err(|e| e.to_string())?;
            // The config's own checks name `config` and the field, not the file: they run
            // against a pool, after the file was read.
            if let Ok(checked) = config.validate(&problem) {
                let _ = crate::select_checked(&problem, &checked);
            }
            Ok(())
        });
    summary.assert_clean();
}

#[test]
fn fuzz_selection_file() {
    let problem = pool();
    let dir = scratch_dir("selection");
    let seed = dir.join("seed.json");
    select(&problem, &SelectConfig::aes(4))
        .unwrap()
        .write(&seed)
        .unwrap();
    let summary = Fuzz::new("selection")
        .seed("aes", std::fs::read(&seed).unwrap())
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run_on_file(&dir.join("selection.json"), |path| {
            let s = Selection::read(path).map_err(|e| e.to_string())?;
            let _ = s.gains();
            Ok(())
        });
    summary.assert_clean();
}
