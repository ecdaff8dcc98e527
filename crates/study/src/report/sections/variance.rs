//! "Variance components": where each primary comparison's variance comes from, and how many
//! seeds or environments an undecided one would need.

use super::primary_claims_with;
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let target = i.results.config.analysis.detect_points;
    let rows = primary_claims_with(a, |c| c.variance.as_ref())?;
    let mut s = Section::new(
        "variance",
        3,
        "Variance components of the primary comparisons",
    );
    let mut table = Table::new([
        "comparison".to_string(),
        "seeds × envs (families)".into(),
        "seed variance (80% upper bound)".into(),
        "env variance".into(),
        "residual".into(),
        "bootstrap variance: seed part / family part".into(),
        format!("seeds for {target} points"),
        format!("families for {target} points"),
    ]);
    let count = |n: Option<usize>| n.map_or("not by this alone".into(), |n| n.to_string());
    for (c, v) in rows {
        table.row([
            c.comparison.clone(),
            format!("{} × {} ({})", v.seeds, v.envs, v.families),
            format!("{:.1} ({:.1})", v.seed, v.seed_upper80),
            format!("{:.1}", v.env),
            format!("{:.1}", v.residual),
            format!(
                "{:.2} / {:.2}",
                v.bootstrap_seed_part, v.bootstrap_unit_part
            ),
            count(v.seeds_needed),
            count(v.families_needed),
        ]);
    }
    s.table(table);
    s.text(format!(
        "Points² of the paired difference per (seed, environment), split by least squares on \
         `d = μ + a_seed + b_env + ε`; the seed variance's upper bound is its one-sided 80% \
         chi-square bound from seeds − 1 degrees of freedom. The bootstrap's variance of the mean \
         (points²) is split by resampling seeds alone and families alone; the last two columns \
         are the seeds (families as now) or families (seeds as now, each as large) that would \
         bring the detection limit at the verdict's level down to {target} points, from those \
         parts."
    ));
    Some(s)
}
