//! Bet 1's statistics on made-up fine-tunes whose transfer is known: the operation gap and the
//! profile rank find it, and the decision follows the pre-registered thresholds.

use std::collections::BTreeMap;

use envdist_core::{AbilityProfile, EnvId, ProfileSet};
use envdist_envs::{Suite, SuiteConfig};

use super::compositional::{CompositionalPilot, FineTune, analyse, sub_pool};

/// The sub-pool, its profiles (coverage of its two tags) and 12 sources spread over it.
fn world() -> (Suite, Vec<EnvId>, ProfileSet, Vec<EnvId>) {
    let suite = Suite::new(SuiteConfig {
        compositional: true,
        ..SuiteConfig::with_canvas(32)
    })
    .unwrap();
    let sub = sub_pool(&suite);
    let profiles = sub
        .iter()
        .map(|e| {
            let tags = &suite.spec(e).unwrap().abilities;
            let coverage: BTreeMap<String, f32> = tags.iter().map(|t| (t.clone(), 1.0)).collect();
            AbilityProfile::of_coverage(e.clone(), coverage)
        })
        .collect();
    let mut abilities: Vec<String> = suite.abilities().into_iter().collect();
    abilities.sort();
    let sources = sub.iter().step_by(3).take(12).cloned().collect();
    (
        suite,
        sub,
        ProfileSet::of_abilities(abilities, profiles),
        sources,
    )
}

/// Two seeds per source; a target gains `same_operation` points when it shares the source's
/// operation (its own family too), nothing otherwise, plus a seed's small wobble.
fn runs(suite: &Suite, targets: &[EnvId], sources: &[EnvId], same_operation: f32) -> Vec<FineTune> {
    let op = |e: &EnvId| {
        let spec = suite.spec(e).unwrap();
        spec.abilities
            .iter()
            .find(|t| !t.starts_with("look-") && !t.ends_with("-robust"))
            .cloned()
    };
    sources
        .iter()
        .flat_map(|s| {
            (1..=2u64).map(move |seed| FineTune {
                source: s.clone(),
                seed,
                after: targets
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let gain = if op(t) == op(s) { same_operation } else { 0.0 };
                        0.5 + gain / 100.0 + 0.001 * ((i as u64 + seed) % 3) as f32
                    })
                    .collect(),
            })
        })
        .collect()
}

#[test]
fn a_known_operation_gap_is_found_and_decides() {
    let (suite, targets, profiles, sources) = world();
    let base = vec![0.5; targets.len()];
    let pilot = CompositionalPilot {
        bootstrap: 200,
        ..CompositionalPilot::default()
    };
    let with_gap = runs(&suite, &targets, &sources, 10.0);
    let r = analyse(
        &pilot, &suite, &targets, &base, &sources, &with_gap, &profiles, 0.0,
    );
    assert!(
        (r.operation_gap.estimate - 10.0).abs() < 0.5,
        "{:?}",
        r.operation_gap
    );
    assert!(r.operation_gap.se < 0.5, "{:?}", r.operation_gap);
    // Tags give a same-look pair the overlap of a same-operation one, so the rank stays well
    // under 1 even here, where only the operation transfers.
    let rank = r.profile_rank.as_ref().unwrap();
    assert!(rank.estimate > 0.25 && rank.lo > 0.0, "{rank:?}");
    assert!(r.by_relation.same_operation > 9.0 && r.by_relation.unrelated.abs() < 1.0);
    assert_eq!(r.decision, "go");
    // A gap under the 5-point bar is a no-go however precise.
    let small = runs(&suite, &targets, &sources, 3.0);
    let r = analyse(
        &pilot, &suite, &targets, &base, &sources, &small, &profiles, 0.0,
    );
    assert!((r.operation_gap.estimate - 3.0).abs() < 0.5);
    assert_eq!(r.decision, "no-go");
}
