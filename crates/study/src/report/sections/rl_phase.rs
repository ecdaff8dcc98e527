//! "The RL phase": how far the arms' RL moved the base, and whether the critic learned.

use crate::model::{Arm, ArmRun, Diagnostic};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    i.results.analysis.as_ref()?;
    let results = i.results;
    let rows: Vec<(Arm, Vec<&ArmRun>)> = results
        .config
        .arms
        .iter()
        .copied()
        .filter(|a| !a.is_base())
        .map(|a| (a, results.arm_runs(a)))
        .filter(|(_, runs)| runs.iter().any(|x| !x.diagnostics.is_empty()))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let c = &results.config;
    let t = &c.rl;
    let mut s = Section::new("rl-phase", 2, "The RL phase");
    s.text(format!(
        "Every arm fine-tunes the base for {} env steps ({} envs x {} steps per update, {} \
         epochs of {}-sample minibatches, lr {} ({:?}), {} value-only warm-up updates): \
         about {:.2} in Adam steps x learning rate. The base's critic was warmed for {} \
         value-only updates on its own rollouts before any arm started.",
        c.rl.total_env_steps,
        t.num_envs,
        t.rollout_len,
        t.epochs,
        t.minibatch,
        t.lr,
        t.lr_schedule,
        c.rl.value_warmup_updates,
        c.optimisation(),
        c.base.critic_warmup_updates
    ));
    let charged = c
        .arms
        .iter()
        .filter(|a| a.recipe().is_some_and(|r| r.envs.charges_transfer_probes()));
    for arm in charged {
        s.text(format!(
            "`{}` trains {} of them: the {} transfer probes it selects with fine-tuned the base \
             for {} env steps ({} each), charged to its budget.",
            arm.name(),
            c.rl.total_env_steps.saturating_sub(c.aes_transfer_charge()),
            c.transfer.aes_transfer_probes,
            c.aes_transfer_charge(),
            c.transfer.steps
        ));
    }
    let mut table = Table::new([
        "arm",
        "training success ST: first → last update",
        "MT: first → last",
        "KL to the base at the end",
        "entropy first → last",
        "value loss first → last",
        "evaluation share of the arm's time",
    ]);
    let mean = |v: Vec<f32>| -> String {
        if v.is_empty() {
            "–".into()
        } else {
            format!("{:.2}", v.iter().sum::<f32>() / v.len() as f32)
        }
    };
    for (arm, runs) in rows {
        let first = |f: &dyn Fn(&Diagnostic) -> Option<f32>| {
            mean(
                runs.iter()
                    .filter_map(|x| {
                        x.diagnostics
                            .iter()
                            .find_map(|d| (!d.value_only).then(|| f(d)).flatten())
                    })
                    .collect(),
            )
        };
        let last = |f: &dyn Fn(&Diagnostic) -> Option<f32>| {
            mean(
                runs.iter()
                    .filter_map(|x| x.diagnostics.iter().rev().find_map(f))
                    .collect(),
            )
        };
        let share: Vec<f32> = runs
            .iter()
            .filter(|x| x.wall_seconds > 0.0)
            .map(|x| (x.eval_seconds / x.wall_seconds) as f32)
            .collect();
        table.row([
            arm.name().to_string(),
            format!(
                "{} → {}",
                first(&|d| d.success_single),
                last(&|d| d.success_single)
            ),
            format!(
                "{} → {}",
                first(&|d| d.success_multi),
                last(&|d| d.success_multi)
            ),
            last(&|d| d.kl_to_base),
            format!(
                "{} → {}",
                first(&|d| Some(d.entropy)),
                last(&|d| Some(d.entropy))
            ),
            format!(
                "{} → {}",
                first(&|d| Some(d.value_loss)),
                last(&|d| Some(d.value_loss))
            ),
            if share.is_empty() {
                "–".into()
            } else {
                format!(
                    "{:.0}%",
                    100.0 * share.iter().sum::<f32>() / share.len() as f32
                )
            },
        ]);
    }
    s.table(table);
    s.text(
        "Means over seeds; training success is with sampled actions at the arm's own harness \
         levels (the evaluation is greedy at H4). `figures/learning_curves.png` has the whole \
         curves.",
    );
    Some(s)
}
