//! REPORT.md: the paper-shaped tables, our facts beside the paper's, and the figures.

use std::fmt::Write as _;

use super::config::Arm;
use super::results::{Results, arm_gain, main_table, mean_std, paper_ablation};

fn gain_text(results: &Results, arm: Arm) -> String {
    match arm_gain(results, arm) {
        Some((m, s)) if results.arm_runs(arm).len() > 1 => {
            format!("{:+.1}% ± {:.1}", 100.0 * m, 100.0 * s)
        }
        Some((m, _)) => format!("{:+.1}%", 100.0 * m),
        None => "–".into(),
    }
}

/// One sentence per comparison the issue asks about, stating what was measured.
pub fn findings(results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let g = |a| arm_gain(results, a);
    let cmp = |a: Arm, b: Arm| -> Option<String> {
        let (ma, sa) = g(a)?;
        let (mb, sb) = g(b)?;
        let single = results.arm_runs(a).len() < 2 || results.arm_runs(b).len() < 2;
        let verdict = if single {
            if ma > mb {
                "above (single seed: no spread to judge by)"
            } else if ma < mb {
                "below (single seed: no spread to judge by)"
            } else {
                "equal to"
            }
        } else if (ma - mb).abs() <= sa.max(sb) {
            "within the seed spread of"
        } else if ma > mb {
            "above"
        } else {
            "below"
        };
        Some(format!(
            "`{}` ({:+.1}% ± {:.1}) is {} `{}` ({:+.1}% ± {:.1}).",
            a.name(),
            100.0 * ma,
            100.0 * sa,
            verdict,
            b.name(),
            100.0 * mb,
            100.0 * sb
        ))
    };
    for (a, b) in [
        (Arm::AesHdc, Arm::AllPool),
        (Arm::AesHdc, Arm::RandomK),
        (Arm::Aes, Arm::RandomK),
        (Arm::Aes, Arm::AesNoConflict),
        (Arm::RandomKHdc, Arm::RandomK),
        (Arm::AesHdc, Arm::Aes),
        (Arm::AesHdc, Arm::AesHarnessOnly),
        (Arm::AesHdc, Arm::AesScaleOnly),
    ] {
        if let Some(s) = cmp(a, b) {
            out.push(s);
        }
    }
    out
}

/// Render REPORT.md.
pub fn render(results: &Results, figures: &[(String, String)]) -> String {
    let c = &results.config;
    let mut r = String::new();
    let _ = writeln!(
        r,
        "# envdist experiment report (preset `{}`)\n",
        c.preset.name()
    );
    let _ = writeln!(
        r,
        "Reproduce: `cargo xtask experiment --config config.json --out NEW_DIR` with the \
         `config.json` beside this report (every field of the run; it started from preset \
         `{}`). Compute time of all stages {:.1} min on this machine (a stage loaded from the \
         cache counts the time of the run that computed it); this invocation took {:.1} min.\n",
        c.preset.name(),
        results.compute_seconds / 60.0,
        results.total_seconds / 60.0
    );
    let _ = writeln!(
        r,
        "Every arm trains from the same base model (the warm-up model) for the same budget of \
         {} environment steps per seed, {} seed(s) per arm; evaluation is greedy, at harness H4 \
         (image + instruction only), at the `{}` scale of each environment, {} fixed seed(s) per \
         environment, on the {} pool environments (ID) and {} held-out environments (OOD). \
         Scores are success rates in percent, mean ± standard deviation over seeds. The relative \
         gain is the mean over the four columns of (arm − base) / base, skipping columns where \
         the base scores 0.\n",
        c.train_steps,
        c.seeds,
        c.eval_scale,
        c.eval_episodes,
        results.facts.pool_envs,
        results.facts.ood_envs,
    );
    let _ = writeln!(r, "## Main table\n");
    r.push_str(&main_table(results, &Arm::ALL));
    let _ = writeln!(
        r,
        "\nThe paper column is the paper's average relative gain (Qwen3-VL-4B/8B, 200 → 30 \
         environments). Its absolute scores are not comparable with a small policy trained for \
         minutes on a CPU; only directions are.\n"
    );
    let _ = writeln!(r, "## Ablations\n");
    let _ = writeln!(
        r,
        "| arm | what it removes | avg. relative gain | paper |\n|---|---|---|---|"
    );
    for (arm, what) in [
        (Arm::Aes, "the whole curriculum (AES selection only)"),
        (
            Arm::AesNoConflict,
            "the conflict term of selection (no curriculum)",
        ),
        (
            Arm::AesHarnessOnly,
            "scale progression (harness weakening only)",
        ),
        (
            Arm::AesScaleOnly,
            "harness weakening (scale progression only)",
        ),
        (Arm::AesHdc, "nothing (AES + full HDC)"),
    ] {
        if results.arm_runs(arm).is_empty() {
            continue;
        }
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} |",
            arm.name(),
            what,
            gain_text(results, arm),
            paper_ablation(arm).unwrap_or("")
        );
    }
    let _ = writeln!(r, "\n## Findings, as measured\n");
    let f = findings(results);
    if f.is_empty() {
        let _ = writeln!(r, "(not enough arms ran to compare)");
    }
    for line in f {
        let _ = writeln!(r, "- {line}");
    }
    let _ = writeln!(r, "\n## Selections\n");
    let _ = writeln!(
        r,
        "| selection | envs | abilities covered | mean pairwise gradient cosine | pairs with cosine < −0.1 |\n|---|---|---|---|---|"
    );
    for s in &results.selections {
        let _ = writeln!(
            r,
            "| {} | {} | {}/{} | {} | {} |",
            s.name,
            s.envs.len(),
            s.covered,
            s.coverable,
            s.mean_pairwise_cosine
                .map_or("–".into(), |c| format!("{c:+.3}")),
            s.conflicting_pairs
        );
    }
    if !results.scaling.is_empty() {
        let _ = writeln!(r, "\n## Pool size vs score (random subsets, same budget)\n");
        let _ = writeln!(
            r,
            "| envs | seeds | mean success over the four columns |\n|---|---|---|"
        );
        let mut sizes: Vec<usize> = results.scaling.iter().map(|p| p.pool_size).collect();
        sizes.dedup();
        for size in sizes {
            let xs: Vec<f32> = results
                .scaling
                .iter()
                .filter(|p| p.pool_size == size)
                .map(|p| {
                    let cols: Vec<f32> = p.scores.columns().iter().flatten().copied().collect();
                    cols.iter().sum::<f32>() / cols.len().max(1) as f32
                })
                .collect();
            if let Some((m, s)) = mean_std(&xs) {
                let _ = writeln!(
                    r,
                    "| {size} | {} | {:.1} ± {:.1} |",
                    xs.len(),
                    100.0 * m,
                    100.0 * s
                );
            }
        }
    }
    let _ = writeln!(r, "\n## Facts of this run\n");
    let _ = writeln!(r, "| fact | value |\n|---|---|");
    for (k, v) in results.facts.rows() {
        let _ = writeln!(r, "| {k} | {v} |");
    }
    let _ = writeln!(
        r,
        "\n## Stage times (seconds; cached stages show the time of the run that computed them)\n"
    );
    let _ = writeln!(r, "| stage | seconds |\n|---|---|");
    for (k, v) in &results.stage_seconds {
        let _ = writeln!(r, "| {k} | {v:.1} |");
    }
    for run in &results.runs {
        if run.arm != Arm::Base {
            let _ = writeln!(
                r,
                "| train+eval {} seed {} | {:.1} |",
                run.arm.name(),
                run.seed,
                run.wall_seconds
            );
        }
    }
    if !figures.is_empty() {
        let _ = writeln!(r, "\n## Figures\n");
        for (title, file) in figures {
            let _ = writeln!(r, "### {title}\n\n![{title}]({file})\n");
        }
    }
    r
}
