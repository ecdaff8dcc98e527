//! The compositional sub-pool keeps the promises its design rests on: it is off by default,
//! every environment names its operation and its look, a slot means one thing in every
//! environment, and the looks are different pixels at the canvases the study renders.

use std::collections::{BTreeMap, BTreeSet};

use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, EnvSpec, HarnessLevel, Meaning, Task};
use envdist_envs::{Suite, SuiteConfig};

fn suite(canvas: u32) -> Suite {
    Suite::new(SuiteConfig {
        compositional: true,
        ..SuiteConfig::with_canvas(canvas)
    })
    .unwrap()
}

/// The sub-pool: what the compositional suite has beyond the default one.
fn sub_pool(suite: &Suite) -> Vec<EnvSpec> {
    let default: BTreeSet<String> = Suite::with_canvas(32)
        .unwrap()
        .specs()
        .into_iter()
        .map(|s| s.id.to_string())
        .collect();
    suite
        .specs()
        .into_iter()
        .filter(|s| !default.contains(s.id.as_str()))
        .collect()
}

const OPERATIONS: [&str; 5] = [
    "count",
    "compare-sides",
    "locate",
    "name-colour",
    "same-colour",
];
const LOOKS: [&str; 4] = ["squares", "diamonds", "rings", "bars"];

#[test]
fn the_sub_pool_is_off_by_default_and_names_operation_and_look() {
    assert_eq!(Suite::default().pool_specs().len(), 200);
    let suite = suite(32);
    let sub = sub_pool(&suite);
    assert_eq!(sub.len(), OPERATIONS.len() * LOOKS.len() * 2);
    for spec in &sub {
        let op = OPERATIONS
            .iter()
            .find(|op| spec.abilities.iter().any(|a| a == *op))
            .unwrap_or_else(|| panic!("{}: no operation tag in {:?}", spec.id, spec.abilities));
        let look = LOOKS
            .iter()
            .find(|l| spec.abilities.contains(&format!("look-{l}")))
            .unwrap_or_else(|| panic!("{}: no look tag in {:?}", spec.id, spec.abilities));
        assert_eq!(spec.family, format!("{op}-{look}"));
        assert!(spec.conflict_twin.is_none(), "{}: no twins", spec.id);
    }
}

#[test]
fn a_slot_means_one_thing_in_every_environment() {
    let suite = suite(16);
    let mut meaning_of: BTreeMap<ActionId, (Meaning, String)> = BTreeMap::new();
    for spec in sub_pool(&suite) {
        let mut env = suite.make(&spec.id).unwrap();
        for seed in 0..4 {
            env.reset(&Task {
                env: spec.id.clone(),
                seed,
                harness: HarnessLevel::H4,
                scale: spec.scale.max,
            });
            let vocabulary = env.answer_vocabulary();
            for (action, meanings) in vocabulary.answers() {
                let first = meanings[0];
                let (seen, at) = meaning_of
                    .entry(*action)
                    .or_insert_with(|| (first, spec.id.to_string()));
                assert_eq!(
                    *seen, first,
                    "{action} means {seen:?} in {at} but {first:?} in {}",
                    spec.id
                );
            }
            assert!(
                env.legal_actions()
                    .iter()
                    .all(|a| !vocabulary.meanings(a).is_empty()),
                "{}: a legal answer without a meaning",
                spec.id
            );
        }
    }
    assert_eq!(meaning_of.len(), 16, "the layout fills the 16 answer slots");
}

/// The object's pixels (the saturated ones; the board and the clutter are grey), cut to their
/// bounding box.
fn object_mask(suite: &Suite, id: &str, seed: u64) -> Vec<Vec<bool>> {
    let mut env = suite.make(&id.into()).unwrap();
    let spec = suite.spec(&id.into()).unwrap().clone();
    let image = env
        .reset(&Task {
            env: spec.id.clone(),
            seed,
            harness: HarnessLevel::H4,
            scale: spec.scale.min,
        })
        .image;
    let coloured = |x: u32, y: u32| {
        let p = image.get(x, y);
        p.iter().max().unwrap() - p.iter().min().unwrap() > 80
    };
    let pts: Vec<(u32, u32)> = (0..image.height)
        .flat_map(|y| (0..image.width).map(move |x| (x, y)))
        .filter(|&(x, y)| coloured(x, y))
        .collect();
    let x0 = pts.iter().map(|p| p.0).min().unwrap();
    let x1 = pts.iter().map(|p| p.0).max().unwrap();
    let y0 = pts.iter().map(|p| p.1).min().unwrap();
    let y1 = pts.iter().map(|p| p.1).max().unwrap();
    (y0..=y1)
        .map(|y| (x0..=x1).map(|x| coloured(x, y)).collect())
        .collect()
}

#[test]
fn the_looks_are_different_pixels_at_the_studys_canvases() {
    for canvas in [32, 64] {
        let suite = suite(canvas);
        let masks: Vec<Vec<Vec<bool>>> = LOOKS
            .iter()
            .map(|l| object_mask(&suite, &format!("name-colour-{l}/classic"), 3))
            .collect();
        for i in 0..LOOKS.len() {
            for j in i + 1..LOOKS.len() {
                assert_ne!(
                    masks[i], masks[j],
                    "{} and {} draw alike at {canvas} px",
                    LOOKS[i], LOOKS[j]
                );
            }
        }
    }
}
