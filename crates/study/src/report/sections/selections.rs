//! "Selections": what each selection chose, what it covers, its gradient conflict and its
//! certified gap, and how much the seeds' selections agree.

use crate::model::{EnvSource, Results, SelectionSummary};
use crate::report::{Column, Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let results = i.results;
    results.analysis.as_ref()?;
    let c = &results.config;
    let mut s = Section::new("selections", 2, "Selections");
    let columns: [Column<'_, &SelectionSummary>; 6] = [
        ("selection", &|sel| sel.name.to_string()),
        ("envs", &|sel| sel.envs.len().to_string()),
        ("abilities covered", &|sel| {
            format!("{}/{}", sel.covered, sel.coverable)
        }),
        ("mean pairwise gradient cosine", &|sel| {
            sel.mean_pairwise_cosine
                .map_or("–".into(), |c| format!("{c:+.3}"))
        }),
        ("pairs with cosine < −0.1", &|sel| {
            sel.conflicting_pairs.to_string()
        }),
        ("certified gap to optimum", &|sel| {
            sel.certificate_gap
                .map_or("–".into(), |g| format!("≤ {:.1}%", 100.0 * g))
        }),
    ];
    s.table(Table::of(&columns, &results.selections));
    if let Some(overlap) = overlap(results) {
        s.table(overlap);
        s.text(
            "Each training seed selects from per-environment gradients of its own (seed i: the \
             gradient seed of the master seed + i, other episodes and another projection; the \
             random draws draw anew), so every interval of an arm that selects includes its \
             selection's noise.",
        );
    }
    for sel in results.selections.iter().filter(|s| s.note.is_some()) {
        s.text(format!(
            "Note on `{}`: {}",
            sel.name,
            sel.note.as_deref().unwrap_or("")
        ));
    }
    s.text(format!(
        "AES enforces full ability coverage, breaks ties between equal-scoring environments \
         in a seeded random order, and {} environments whose gradient is exactly zero.",
        if c.selection.exclude_zero_gradient {
            "excludes (as unknown)"
        } else {
            "keeps (as conflict-free, the paper's literal objective)"
        }
    ));
    Some(s)
}

/// How much the seeds' selections agree: each seed selects from its own gradients (or draws
/// anew), so this is the selection's own noise, inside every interval of its arms.
fn overlap(results: &Results) -> Option<Table> {
    if results.config.seeds < 2 {
        return None;
    }
    let mut table = Table::new([
        "selection",
        "picks shared by two seeds (mean over pairs)",
        "picks in every seed's",
    ]);
    for source in EnvSource::SELECTIONS {
        let sets: Vec<&Vec<envdist_core::EnvId>> = results
            .config
            .seed_indices()
            .filter_map(|seed| {
                let id = source.at_seed(seed)?;
                results
                    .selections
                    .iter()
                    .find(|s| s.name == id)
                    .map(|s| &s.envs)
            })
            .collect();
        if sets.len() < 2 {
            continue;
        }
        let (mut shared, mut pairs) = (0usize, 0usize);
        for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                shared += sets[i].iter().filter(|e| sets[j].contains(e)).count();
                pairs += 1;
            }
        }
        let everywhere = sets[0]
            .iter()
            .filter(|e| sets.iter().all(|s| s.contains(e)))
            .count();
        table.row([
            source.name().to_string(),
            format!("{:.1} of {}", shared as f64 / pairs as f64, sets[0].len()),
            everywhere.to_string(),
        ]);
    }
    Some(table)
}
