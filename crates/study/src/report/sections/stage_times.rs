//! "Stage times": each stage's compute time, and training with evaluation in all.

use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let results = i.results;
    results.analysis.as_ref()?;
    let mut s = Section::new(
        "stage-times",
        2,
        "Stage times (seconds; cached stages show the time of the run that computed them)",
    );
    let mut table = Table::new(["stage", "seconds"]);
    for (k, v) in &results.stage_seconds {
        table.row([k.clone(), format!("{v:.1}")]);
    }
    let train: f64 = results
        .runs
        .iter()
        .filter(|x| !x.arm.is_base())
        .map(|x| x.wall_seconds)
        .sum::<f64>()
        + results
            .scaling
            .iter()
            .map(|p| p.run.wall_seconds)
            .sum::<f64>();
    table.row([
        "training + evaluation of every arm and seed".to_string(),
        format!("{train:.1}"),
    ]);
    s.table(table);
    Some(s)
}
