//! Architecture invariants as absences, checked against `cargo metadata`:
//! - sibling library crates never depend on each other (they meet only through envdist-core);
//! - only `envdist-trainer` (and xtask/benches, which see everything) pulls in burn;
//! - only `envdist-profiling` (and xtask/benches) pulls in petgraph;
//! - no workspace member enables the `cuda` feature by default;
//! - the Python binding (`envdist-python`), a composition root like xtask, never reaches the
//!   trainer or burn: the wheel carries no burn;
//! - the composition roots are xtask, the benches, the Python binding and `envdist-study` (the
//!   study as a library): the only crates allowed to use every library crate, and no library
//!   crate depends on one of them.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

const SIBLINGS: [&str; 7] = [
    "envdist-envs",
    "envdist-profiling",
    "envdist-selection",
    "envdist-curriculum",
    "envdist-plot",
    "envdist-trainer",
    "envdist-world",
];
const COMPOSITION_ROOTS: [&str; 4] = [
    "xtask",
    "envdist-benches",
    "envdist-python",
    "envdist-study",
];

struct Graph {
    names: BTreeMap<String, String>,
    edges: BTreeMap<String, Vec<String>>,
    members: Vec<String>,
    metadata: serde_json::Value,
}

impl Graph {
    fn load() -> Self {
        let out = Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
            .output()
            .expect("run cargo metadata");
        assert!(
            out.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut names = BTreeMap::new();
        for p in metadata["packages"].as_array().unwrap() {
            names.insert(
                p["id"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap().to_string(),
            );
        }
        let mut edges = BTreeMap::new();
        for node in metadata["resolve"]["nodes"].as_array().unwrap() {
            let deps = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["pkg"].as_str().unwrap().to_string())
                .collect();
            edges.insert(node["id"].as_str().unwrap().to_string(), deps);
        }
        let members = metadata["workspace_members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        Self {
            names,
            edges,
            members,
            metadata,
        }
    }

    fn id_of(&self, name: &str) -> String {
        self.members
            .iter()
            .find(|id| self.names[*id] == name)
            .unwrap_or_else(|| panic!("workspace member {name} missing"))
            .clone()
    }

    fn direct(&self, name: &str) -> BTreeSet<String> {
        self.edges[&self.id_of(name)]
            .iter()
            .map(|d| self.names[d].clone())
            .collect()
    }

    /// Every package reachable from `name` (normal, build and dev dependencies alike).
    fn closure(&self, name: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.id_of(name)];
        while let Some(id) = stack.pop() {
            for d in &self.edges[&id] {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen.into_iter().map(|id| self.names[&id].clone()).collect()
    }
}

#[test]
fn workspace_has_exactly_its_members() {
    let g = Graph::load();
    let mut names: Vec<&str> = g.members.iter().map(|id| g.names[id].as_str()).collect();
    names.sort_unstable();
    let mut expected = vec!["envdist-core"];
    expected.extend(COMPOSITION_ROOTS);
    expected.extend(SIBLINGS);
    expected.sort_unstable();
    assert_eq!(names, expected);
}

#[test]
fn siblings_meet_only_through_core() {
    let g = Graph::load();
    let mut broken = Vec::new();
    for crate_name in SIBLINGS.iter().chain(["envdist-core"].iter()) {
        for dep in g.direct(crate_name) {
            let forbidden = SIBLINGS.contains(&dep.as_str())
                || COMPOSITION_ROOTS.contains(&dep.as_str())
                || (*crate_name == "envdist-core" && dep.starts_with("envdist-"));
            if forbidden {
                broken.push(format!("{crate_name} -> {dep}"));
            }
        }
    }
    assert!(broken.is_empty(), "forbidden sibling edges: {broken:?}");
}

/// Crates other than `allowed` that reach a package named `prefix` or `prefix-*`, directly or
/// transitively. `exempt_transitive` crates are checked for direct dependencies only.
fn only_allowed_reach(prefix: &str, allowed: &str, exempt_transitive: &[&str]) -> Vec<String> {
    let g = Graph::load();
    let mut broken = Vec::new();
    for crate_name in SIBLINGS.iter().chain(["envdist-core"].iter()) {
        if *crate_name == allowed {
            continue;
        }
        if exempt_transitive.contains(crate_name) {
            if g.direct(crate_name)
                .iter()
                .any(|d| d == prefix || d.starts_with(&format!("{prefix}-")))
            {
                broken.push(format!("{crate_name} depends directly on {prefix}"));
            }
            continue;
        }
        let hits: Vec<String> = g
            .closure(crate_name)
            .into_iter()
            .filter(|p| p == prefix || p.starts_with(&format!("{prefix}-")))
            .collect();
        if !hits.is_empty() {
            broken.push(format!("{crate_name} reaches {hits:?}"));
        }
    }
    broken
}

#[test]
fn only_trainer_knows_burn() {
    let broken = only_allowed_reach("burn", "envdist-trainer", &[]);
    assert!(
        broken.is_empty(),
        "burn outside envdist-trainer: {broken:?}"
    );
}

#[test]
fn only_profiling_knows_petgraph() {
    // burn's autodiff uses petgraph internally; the trainer itself must not name it.
    let broken = only_allowed_reach("petgraph", "envdist-profiling", &["envdist-trainer"]);
    assert!(
        broken.is_empty(),
        "petgraph outside envdist-profiling: {broken:?}"
    );
}

#[test]
fn python_binding_sees_the_libraries_but_not_the_trainer() {
    let g = Graph::load();
    let direct = g.direct("envdist-python");
    for lib in [
        "envdist-core",
        "envdist-envs",
        "envdist-profiling",
        "envdist-selection",
        "envdist-curriculum",
    ] {
        assert!(
            direct.contains(lib),
            "envdist-python should depend on {lib}"
        );
    }
    let reach: Vec<String> = g
        .closure("envdist-python")
        .into_iter()
        .filter(|p| p == "envdist-trainer" || p == "burn" || p.starts_with("burn-"))
        .collect();
    assert!(
        reach.is_empty(),
        "envdist-python reaches {reach:?}: no burn in the wheel"
    );
}

#[test]
fn the_study_is_a_library_of_every_library_that_xtask_wraps() {
    let g = Graph::load();
    let study = g.direct("envdist-study");
    for lib in SIBLINGS.iter().chain(["envdist-core"].iter()) {
        assert!(study.contains(*lib), "envdist-study should depend on {lib}");
    }
    assert!(
        !study.contains("anyhow"),
        "envdist-study is a library: thiserror, not anyhow"
    );
    assert!(g.direct("xtask").contains("envdist-study"));
    for root in ["envdist-python", "envdist-benches"] {
        assert!(
            !g.direct(root).contains("envdist-study"),
            "{root} should not need the study"
        );
    }
}

#[test]
fn cuda_and_libtorch_are_never_on_by_default() {
    // Neither backend builds on a bare machine (CUDA needs no GPU to build but is slow; LibTorch
    // needs PyTorch installed), so no default feature and no dependency edge may turn one on.
    let backend = |f: &str| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name.contains("cuda") || name == "tch"
    };
    let g = Graph::load();
    for p in g.metadata["packages"].as_array().unwrap() {
        if !g.members.iter().any(|m| m == p["id"].as_str().unwrap()) {
            continue;
        }
        let default = p["features"]["default"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            default.iter().all(|f| !backend(f.as_str().unwrap())),
            "{} enables cuda or tch by default",
            p["name"]
        );
        for dep in p["dependencies"].as_array().unwrap() {
            let feats: Vec<&str> = dep["features"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            assert!(
                !feats.iter().any(|f| backend(f)),
                "{} turns on cuda or tch in {}",
                p["name"],
                dep["name"]
            );
        }
    }
    assert!(backend("burn/tch") && backend("cuda") && !backend("dispatch"));
}
