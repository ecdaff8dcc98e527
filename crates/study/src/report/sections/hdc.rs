//! "HDC: where the curricula went": each HDC arm's episodes by harness level, where its
//! environments ended, and how its stages advanced.

use crate::model::{Arm, CurriculumTotals};
use crate::report::{Column, Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let results = i.results;
    results.analysis.as_ref()?;
    let c = &results.config;
    let mut s = Section::new("hdc", 2, "HDC: where the curricula went");
    let totals = Arm::ALL
        .into_iter()
        .filter(|a| a.has_hdc())
        .map(|arm| {
            let runs = results.arm_runs(arm);
            (
                arm,
                CurriculumTotals::of(runs.iter().filter_map(|x| x.curriculum.as_ref())),
            )
        })
        .filter(|(_, t)| t.runs > 0);
    let columns: [Column<'_, (Arm, CurriculumTotals)>; 6] = [
        ("arm", &|(arm, _)| arm.name().to_string()),
        ("episodes at H0 / H1 / H2 / H3 / H4 (share)", &|(_, t)| {
            let total: u64 = t.episodes().max(1);
            t.episodes_per_level
                .iter()
                .map(|e| format!("{:.0}%", 100.0 * *e as f64 / total as f64))
                .collect::<Vec<_>>()
                .join(" / ")
        }),
        ("final level H0..H4 (envs)", &|(_, t)| {
            t.final_levels
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(" / ")
        }),
        ("envs at H4 at the end", &|(_, t)| {
            format!("{:.0}%", 100.0 * t.share_at_h4_sum / t.runs as f32)
        }),
        ("half the envs at H4 after", &|(_, t)| {
            let half = &t.half_at_h4_after;
            if half.len() == t.runs {
                format!(
                    "{:.0}% of the episodes",
                    100.0 * half.iter().sum::<f32>() / half.len() as f32
                )
            } else {
                format!("{} of {} seeds never", t.runs - half.len(), t.runs)
            }
        }),
        ("capped / all stage advances", &|(_, t)| {
            format!("{} / {}", t.capped_advances, t.advances)
        }),
    ];
    s.table(Table::of(&columns, totals));
    let windows = match c.hdc.windows_per_level {
        0 => format!(
            "window {} scales moving by {}",
            c.hdc.window_width, c.hdc.window_step
        ),
        n => format!("each env's scale range passed in {n} windows per level"),
    };
    s.text(format!(
        "HDC settings: {windows}, competence {:.2} (EMA rate {:.2}, at \
         least {} episodes), a stage capped at {} episodes (a capped advance is a budget \
         fallback, not earned competence), review decay λ = {}.",
        c.hdc.competence_threshold,
        c.hdc.ema_rate,
        c.hdc.min_episodes,
        c.hdc.max_stage_episodes,
        c.hdc.lambda
    ));
    Some(s)
}
