//! "Variance components": where each primary comparison's variance comes from, and how many
//! seeds or environments an undecided one would need.

use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let target = i.results.config.analysis.detect_points;
    let rows: Vec<_> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .filter_map(|c| c.variance.as_ref().map(|v| (c, v)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut s = Section::new(
        "variance",
        3,
        "Variance components of the primary comparisons",
    );
    let mut table = Table::new([
        "comparison".to_string(),
        "seeds × envs".into(),
        "seed variance".into(),
        "env variance".into(),
        "residual".into(),
        "SE".into(),
        format!("seeds for {target} points"),
        format!("envs for {target} points"),
    ]);
    let count = |n: Option<usize>| n.map_or("not by this alone".into(), |n| n.to_string());
    for (c, v) in rows {
        table.row([
            c.comparison.clone(),
            format!("{} × {}", v.seeds, v.envs),
            format!("{:.1}", v.seed),
            format!("{:.1}", v.env),
            format!("{:.1}", v.residual),
            format!("{:.2}", v.se),
            count(v.seeds_needed),
            count(v.envs_needed),
        ]);
    }
    s.table(table);
    s.text(format!(
        "Points² of the paired difference per (seed, environment), split by least squares on \
         `d = μ + a_seed + b_env + ε`; SE is the standard error of the mean they imply. The last \
         two columns: seeds (environments as now) or environments (seeds as now) that would \
         bring the detection limit at the verdict's level down to {target} points."
    ));
    Some(s)
}
