//! "Size and power": the primary claims' family-wise error and power, simulated at the fitted
//! variance components and at the seed variances' upper bounds.

use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let p = a.precision.as_ref()?;
    let mut s = Section::new(
        "precision",
        3,
        "Size and power of the primary claims, simulated",
    );
    let mut table = Table::new([
        "seed variance",
        "family-wise false \"supported\"/\"refuted\" (no true difference)",
        "power at the effect",
    ]);
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    table.row(["as fitted".to_string(), pct(p.size), pct(p.power)]);
    table.row([
        "at its 80% upper bound".to_string(),
        pct(p.size_at_upper),
        pct(p.power_at_upper),
    ]);
    s.table(table);
    s.text(format!(
        "{} simulated studies per cell, each with every primary claim's own fitted components \
         (seed, family, environment within family, residual; the mixed model's), analysed as \
         this record is ({} bootstrap replicates, families resampled, Holm over the primary \
         claims). Power: the share of claims with a true difference of {} points called \
         supported. Simulation error at most ±{:.1} points of a share.",
        p.simulations,
        p.replicates,
        p.effect,
        100.0 * p.mc_error
    ));
    Some(s)
}
