//! "Verdicts on the paper's claims": every claim's difference, detection limit, p-values and
//! verdict, the primary ones first.

use crate::model::Claim;
use crate::report::format::ci_signed;
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let c = &i.results.config;
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("verdicts", 2, "Verdicts on the paper's claims");
    let mut table = Table::new([
        "claim".to_string(),
        "comparison (whole pool unless said)".into(),
        "difference, points [95% CI]".into(),
        "smallest detectable (× SE)".into(),
        "p (Holm-adjusted for primary claims)".into(),
        format!("equivalence p (±{} points)", c.analysis.equivalence_margin),
        String::new(),
        "verdict".into(),
    ]);
    let mut ordered: Vec<&Claim> = a.claims.iter().filter(|c| c.primary).collect();
    ordered.extend(a.claims.iter().filter(|c| !c.primary));
    for cl in ordered {
        table.row([
            cl.statement.clone(),
            cl.comparison.clone(),
            ci_signed(&cl.difference),
            format!("{:.1} ({:.1})", cl.mde, cl.mde_z),
            match cl.p_holm {
                Some(p) => format!("{p:.3} (raw {:.3})", cl.difference.p),
                None => format!("{:.3}", cl.difference.p),
            },
            match (cl.p_equivalence_holm, cl.p_equivalence) {
                (Some(q), Some(raw)) => format!("{q:.3} (raw {raw:.3})"),
                (None, Some(raw)) => format!("{raw:.3}"),
                _ => "–".into(),
            },
            if cl.primary { "primary" } else { "exploratory" }.into(),
            format!("**{}**", cl.verdict.word()),
        ]);
    }
    s.table(table);
    let primary = a.claims.iter().filter(|c| c.primary).count();
    s.text(format!(
        "The {primary} primary claims were named in the configuration before the run \
         (`analysis.primary`); their verdicts come from Holm-adjusted bootstrap p-values (of \
         the difference, and apart of the equivalence), so the chance of any false \
         \"supported\" or \"refuted\" among them is at most 5%, and likewise of any false \
         \"equivalent\" (the study's `power_tests` check the family-wise rate and the power at \
         the detection limit on simulated studies). Exploratory comparisons are judged by their own \
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
