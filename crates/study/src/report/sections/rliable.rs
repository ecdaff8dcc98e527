//! rliable's aggregates (Agarwal et al. 2021): IQM per arm, probability of improvement per
//! claim.

use crate::report::format::{ci, opt};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    if a.arms.iter().all(|s| s.iqm.is_none()) {
        return None;
    }
    let mut s = Section::new("rliable", 2, "rliable's aggregates");
    let mut table = Table::new(["arm", "mean, whole pool (ID)", "interquartile mean (IQM)"]);
    for arm in &a.arms {
        table.row([arm.arm.name().to_string(), ci(&arm.id), opt(&arm.iqm, ci)]);
    }
    s.table(table);
    if !a.probability_of_improvement.is_empty() {
        let mut p_table = Table::new(["claim", "P(a > b) [95% CI]"]);
        for p in &a.probability_of_improvement {
            let i = &p.probability;
            p_table.row([
                format!("{} − {}", p.a.name(), p.b.name()),
                format!("{:.2} [{:.2}, {:.2}]", i.estimate, i.lo, i.hi),
            ]);
        }
        s.table(p_table);
    }
    s.text(
        "Over the (seed, pool environment) scores; stratified bootstrap (seeds resampled within \
         each environment, the environments held fixed: rliable's default, so these intervals \
         are narrower than the crossed ones above). P(a > b): per environment the share of seed pairs where `a` scores \
         above `b` (ties a half), averaged over environments; 0.5 is no difference. Performance \
         profiles (share of scores above each threshold) are in results.json \
         (`analysis.performance_profiles`).",
    );
    Some(s)
}
