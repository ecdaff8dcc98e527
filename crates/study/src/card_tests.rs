//! The arm cards reach every place they should: a table-driven test over [`Arm::ALL`] on a
//! synthetic record where every arm ran every seed. Adding an arm is its variant and card in
//! `model/arms.rs`; this test then fails until the new arm reaches the report's tables, the
//! learning curves (where its card says it is plotted) and `results.json`.

use envdist_core::EnvId;

use crate::model::{
    Arm, ArmRun, CodeInfo, CurriculumSummary, Diagnostic, EnvSets, FLAGSHIP, Recipe, Results, Role,
};
use crate::{ExperimentConfig, Preset};

fn run(arm: Arm, seed: u32, envs: &[EnvId]) -> ArmRun {
    let per_env = envs
        .iter()
        .enumerate()
        .map(|(i, e)| (e.clone(), vec![((i + seed as usize) % 5) as f32 / 5.0]))
        .collect();
    ArmRun {
        train_envs: envs[..4].to_vec(),
        env_steps: 1,
        wall_seconds: 1.0,
        curve: vec![(0, 0.1), (10, 0.2)],
        diagnostics: vec![Diagnostic {
            env_steps: 1,
            success_single: Some(0.5),
            success_multi: None,
            value_loss: 0.1,
            entropy: 1.0,
            kl_to_base: Some(0.0),
            value_only: false,
        }],
        curriculum: arm.has_hdc().then(CurriculumSummary::default),
        env_steps_per_s: 1.0,
        ..ArmRun::evaluated(arm, seed, per_env)
    }
}

fn record() -> Results {
    let mut cfg = ExperimentConfig::preset(Preset::Smoke);
    cfg.seeds = 2;
    cfg.arms = Arm::ALL.to_vec();
    cfg.analysis.bootstrap = 100;
    let envs: Vec<EnvId> = (0..12)
        .map(|i| EnvId::new(format!("f{}/v{i}", i % 3)))
        .collect();
    let mut r = Results::new(cfg, CodeInfo::default(), Default::default());
    r.envs = EnvSets {
        pool: envs[..9].to_vec(),
        ood: envs[9..].to_vec(),
        single_turn: vec![],
        family: envs
            .iter()
            .map(|e| (e.clone(), e.as_str()[..2].to_string()))
            .collect(),
    };
    for arm in Arm::ALL {
        let seeds = if arm.is_base() { 1 } else { 2 };
        for seed in 0..seeds {
            r.runs.push(run(arm, seed, &envs));
        }
    }
    r.analysis = crate::analysis::analyse(&r);
    r
}

/// Each arm: where it must show up, by what its card says.
#[test]
fn every_arm_reaches_every_table() {
    let results = record();
    let sections = crate::report::sections(&crate::report::Inputs {
        results: &results,
        figures: &[],
        command: "test",
    });
    let section = |key: &str| {
        sections
            .iter()
            .find(|s| s.key == key)
            .unwrap_or_else(|| panic!("the report lacks its {key} section"))
    };
    // Whether a table of the section lists the arm in its first column.
    let row = |key: &str, arm: Arm| {
        section(key).tables().any(|t| {
            t.rows
                .iter()
                .any(|r| r.first().is_some_and(|c| c == arm.name()))
        })
    };
    let json = serde_json::to_value(&results).unwrap();
    let analysis = results.analysis.as_ref().expect("analysis");
    let curves: Vec<String> = crate::figures::learning_curve_series(&results)
        .into_iter()
        .map(|s| s.label)
        .collect();
    let versus = &analysis.versus_aes_hdc;
    for arm in Arm::ALL {
        let name = arm.name();
        let card = arm.card();
        // results.json: its runs, and its summary in the analysis.
        let runs = json["runs"].as_array().unwrap();
        assert!(
            runs.iter().any(|r| r["arm"] == name),
            "{name}: no run in results.json"
        );
        assert!(
            analysis.arms.iter().any(|s| s.arm == arm),
            "{name}: no summary in analysis.arms"
        );
        // The report: the main table always, the ranking and the gain split if trained,
        // the curriculum table if it has HDC.
        assert!(row("main-table", arm), "{name}: not in the main table");
        assert!(row("glance", arm), "{name}: not at a glance");
        if !arm.is_base() {
            let ranked = section("ranking").tables().next().expect("the ranking");
            assert!(ranked.column("arm").contains(&name), "{name}: not ranked");
            assert!(row("gains", arm), "{name}: not in the gain split");
            assert!(row("rl-phase", arm), "{name}: not in the RL phase table");
        }
        if arm.has_hdc() {
            assert!(row("hdc", arm), "{name}: not in the HDC table");
        }
        if let Some(g) = card.paper_gain {
            let main = section("main-table")
                .tables()
                .next()
                .expect("the main table");
            assert!(
                main.column("paper").contains(&g),
                "{name}: paper's gain not shown"
            );
        }
        // The figures and comparisons its card asks for.
        assert_eq!(
            card.plotted,
            curves.iter().any(|c| c == name),
            "{name}: learning curves"
        );
        if card.versus_flagship {
            let label = format!("{} − {name}", FLAGSHIP.name());
            assert!(
                versus.iter().any(|c| c.label == label),
                "{name}: not against the flagship"
            );
        }
        // A role with a comparison of its own reaches it.
        match card.role {
            Role::Control => assert!(
                analysis.control.iter().any(|c| c.label.contains(name)),
                "{name}: not in the control comparisons"
            ),
            Role::Hints => assert!(analysis.hints.is_some(), "{name}: no hint comparison"),
            Role::Online => assert!(analysis.online.is_some(), "{name}: no online comparison"),
            _ => {}
        }
        // Its recipe is one the stages can build.
        if let Some(Recipe { ordering, .. }) = card.recipe
            && let crate::model::Ordering::Rival(_) = ordering
        {
            assert!(ordering.rival_config().is_some(), "{name}: no sampler");
        }
    }
}
