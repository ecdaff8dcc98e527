//! "HDC: where the curricula went": each HDC arm's episodes by harness level, where its
//! environments ended, and how its stages advanced.

use crate::model::{Arm, CurriculumTotals};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let results = i.results;
    results.analysis.as_ref()?;
    let c = &results.config;
    let mut s = Section::new("hdc", 2, "HDC: where the curricula went");
    let mut table = Table::new([
        "arm",
        "episodes at H0 / H1 / H2 / H3 / H4 (share)",
        "final level H0..H4 (envs)",
        "envs at H4 at the end",
        "half the envs at H4 after",
        "capped / all stage advances",
    ]);
    for arm in Arm::ALL.into_iter().filter(|a| a.has_hdc()) {
        let t = CurriculumTotals::of(
            results
                .arm_runs(arm)
                .iter()
                .filter_map(|x| x.curriculum.as_ref()),
        );
        if t.runs == 0 {
            continue;
        }
        let (eps, fin, half) = (t.episodes_per_level, t.final_levels, &t.half_at_h4_after);
        let total: u64 = t.episodes().max(1);
        table.row([
            arm.name().to_string(),
            eps.iter()
                .map(|e| format!("{:.0}%", 100.0 * *e as f64 / total as f64))
                .collect::<Vec<_>>()
                .join(" / "),
            fin.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(" / "),
            format!("{:.0}%", 100.0 * t.share_at_h4_sum / t.runs as f32),
            if half.len() == t.runs {
                format!(
                    "{:.0}% of the episodes",
                    100.0 * half.iter().sum::<f32>() / half.len() as f32
                )
            } else {
                format!("{} of {} seeds never", t.runs - half.len(), t.runs)
            },
            format!("{} / {}", t.capped_advances, t.advances),
        ]);
    }
    s.table(table);
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
