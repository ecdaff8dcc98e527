//! "Verdicts on the paper's claims": every claim's difference, detection limit, p-values and
//! verdict, the primary ones first.

use crate::model::Claim;
use crate::report::format::{ci_signed, opt};
use crate::report::{Column, Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("verdicts", 2, "Verdicts on the paper's claims");
    let columns: [Column<'_, &Claim>; 11] = [
        ("claim", &|cl| cl.statement.clone()),
        ("comparison (whole pool unless said)", &|cl| {
            cl.comparison.clone()
        }),
        ("difference, points [95% CI]", &|cl| {
            format!("{} ({})", ci_signed(&cl.difference), cl.resampled)
        }),
        ("environments resampled alone", &|cl| {
            opt(&cl.env_level, ci_signed)
        }),
        ("mixed model p", &|cl| {
            cl.mixed.map_or("–".into(), |m| format!("{:.3}", m.p))
        }),
        ("smallest detectable (× SE)", &|cl| {
            format!("{:.1} ({:.1})", cl.mde, cl.mde_z)
        }),
        (
            "p (Holm-adjusted for primary claims; ± Monte-Carlo error)",
            &|cl| match cl.p_holm {
                Some(p) => format!("{p:.3} (raw {:.3} ± {:.3})", cl.difference.p, cl.p_mc_error),
                None => format!("{:.3} ± {:.3}", cl.difference.p, cl.p_mc_error),
            },
        ),
        (
            "equivalence margin, p",
            &|cl| match (cl.p_equivalence_holm, cl.p_equivalence) {
                (Some(q), Some(raw)) => format!("±{}: {q:.3} (raw {raw:.3})", cl.margin),
                (None, Some(raw)) => format!("±{}: {raw:.3}", cl.margin),
                _ => "–".into(),
            },
        ),
        ("", &|cl| {
            if cl.primary { "primary" } else { "exploratory" }.into()
        }),
        ("testable here", &|cl| match cl.testable {
            Some(true) => "yes".to_string(),
            Some(false) => format!(
                "no (the tests alone: {})",
                cl.test_verdict.map_or("–", |v| v.word())
            ),
            None => "–".into(),
        }),
        ("verdict", &|cl| format!("**{}**", cl.verdict.word())),
    ];
    let primary_first = a.claims.iter().filter(|c| c.primary);
    s.table(Table::of(
        &columns,
        primary_first.chain(a.claims.iter().filter(|c| !c.primary)),
    ));
    let primary = a.claims.iter().filter(|c| c.primary).count();
    s.text(format!(
        "The {primary} primary claims were named in the configuration before the run \
         (`analysis.primary`, docs/experiments/PROTOCOL.md); their verdicts come from \
         Holm-adjusted bootstrap p-values (of the difference, and apart of the equivalence at \
         each claim's own pre-registered margin), so the chance of any false \"supported\" or \
         \"refuted\" among them is at most 5%, and likewise of any false \"equivalent\". A \
         replicate resamples training seeds, then families, then environments within each drawn \
         family (the pool's 200 environments are variants of 24 families); the \
         environment-level bootstrap and a mixed model are sensitivity figures. A p-value within \
         a factor 2 of its threshold was bootstrapped again with more replicates. Where a \
         primary claim's mechanism cannot act in this testbed (its preconditions, above, not \
         met), its verdict is **untestable here**, whatever its difference; the Holm family \
         stays the one named before the run. Exploratory comparisons are judged by their own \
         intervals: with many of them, about one in twenty of their verdicts can be noise."
    ));
    let mdes: Vec<f64> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .map(|c| c.mde)
        .collect();
    if !mdes.is_empty() {
        let lo = mdes.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = mdes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        s.text(format!(
            "Power: the smallest difference between arms this run could detect in a primary \
             claim ranges from {lo:.1} to {hi:.1} points on the pooled ID score. {}",
            if hi <= 5.0 {
                "Every comparison can separate arms whose true difference is 5 points."
            } else if lo <= 5.0 {
                "Some comparisons can separate arms 5 points apart; the others cannot, and their \
                 \"inconclusive\" verdicts say only that any difference is smaller than their \
                 detection limit."
            } else {
                "No comparison can separate arms 5 points apart: an inconclusive verdict here \
                 means only that the difference, if any, is below the detection limit."
            }
        ));
    }
    Some(s)
}
