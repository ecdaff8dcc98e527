//! The study's presets: its choices for every section, including those of the libraries'
//! configurations it embeds ([`study_rl`], [`study_gradients`], [`study_selection`],
//! [`study_hdc`]), each with the pilots that sized it.

use std::collections::BTreeMap;

use envdist_core::InvalidValue;
use envdist_curriculum::HdcConfig;
use envdist_selection::{SelectConfig, TieBreak};
use envdist_trainer::{Device, GradientConfig, LrSchedule, TrainConfig, TrainPreset};

use crate::config::{
    AnalysisConfig, BaseConfig, EXPERIMENT_SCHEMA_VERSION, EvalConfig, ExperimentConfig,
    OnlineConfig, PoolConfig, Preset, ProfilesConfig, ProtocolConfig, SuiteSection, TransferConfig,
};
use crate::model::{Arm, ClaimId};
use crate::protocol::Split;

/// Training seeds of the `cpu` presets: four seeds of the nine trained arms at the budget below,
/// with the precondition probes, fit the 60 minutes of the `cpu` preset on two cores of the
/// slower host (an AMD EPYC; an Intel Xeon takes about two thirds of it). The primary claims
/// want more (each record's `variance` says how many, from its bootstrap's own variance):
/// docs/experiments/PROTOCOL.md.
const CPU_SEEDS: u32 = 4;

/// The values of `preset`.
pub fn values(preset: Preset) -> ExperimentConfig {
    // The `cpu` values are sized from measured throughput on 2 cores (about 2,500-3,000
    // env steps/s with learning): the whole study in at most 45 minutes on the machine they
    // were measured on (an AMD EPYC runs the same stages 1.6-2.0x slower).
    let base = ExperimentConfig {
        schema_version: EXPERIMENT_SCHEMA_VERSION,
        preset,
        seed: 2026,
        seeds: CPU_SEEDS,
        // The records: confirmatory. The smoke preset (a test fixture) is a development run.
        protocol: ProtocolConfig {
            split: Split::Confirmatory,
        },
        device: Device::Cpu,
        suite: SuiteSection::default(),
        model: TrainPreset::Cpu,
        pool: PoolConfig::default(),
        profiles: ProfilesConfig::default(),
        base: BaseConfig::default(),
        gradients: study_gradients(),
        polarisation: false,
        selection: study_selection(30, 2026),
        rl: study_rl(TrainPreset::Cpu, 480_000),
        balance_turns: true,
        eval: EvalConfig::default(),
        analysis: AnalysisConfig {
            margins: study_margins(),
            ..AnalysisConfig::default()
        },
        hdc: study_hdc(),
        online: OnlineConfig {
            every_steps: 8_000,
            ..OnlineConfig::default()
        },
        transfer: TransferConfig::default(),
        scaling_sizes: vec![],
        arms: Arm::central(),
    };
    match preset {
        Preset::Smoke => ExperimentConfig {
            seeds: 2,
            protocol: ProtocolConfig::default(),
            suite: SuiteSection {
                canvas: 16,
                ..SuiteSection::default()
            },
            // The unit-test network: 128 steps per update, so even a tiny budget has
            // several updates (checkpoints, re-selections, resume all get exercised).
            model: TrainPreset::Tiny,
            pool: PoolConfig {
                size: 40,
                ood_envs: 8,
            },
            profiles: ProfilesConfig { trajectories: 4 },
            base: BaseConfig {
                samples: 2_048,
                critic_warmup_updates: 4,
                ..BaseConfig::default()
            },
            gradients: GradientConfig {
                rollouts_per_env: 4,
                dim: 64,
                ..study_gradients()
            },
            // Every arm and stage, so that a change anywhere moves the smoke record.
            polarisation: true,
            arms: Arm::ALL.to_vec(),
            // Full ability coverage of a 40-env pool takes about 13 picks.
            selection: study_selection(14, 2026),
            rl: TrainConfig {
                value_warmup_updates: 1,
                ..study_rl(TrainPreset::Tiny, 1_024)
            },
            eval: EvalConfig {
                episodes: 2,
                ..EvalConfig::default()
            },
            analysis: AnalysisConfig {
                bootstrap: 200,
                simulations: 20,
                margins: study_margins(),
                ..AnalysisConfig::default()
            },
            online: OnlineConfig {
                every_steps: 512,
                episodes: 2,
                dim: 32,
            },
            transfer: TransferConfig {
                probes: 2,
                steps: 256,
                eval_episodes: 2,
                matrix_probes: 4,
                strata: 2,
                harness_probes: 2,
                aes_transfer_probes: 2,
            },
            scaling_sizes: vec![4],
            ..base
        },
        Preset::Cpu => base,
        Preset::CpuFull => ExperimentConfig {
            polarisation: true,
            scaling_sizes: vec![10, 100],
            arms: Arm::ALL.to_vec(),
            analysis: AnalysisConfig {
                primary: ClaimId::central(),
                margins: study_margins(),
                ..AnalysisConfig::default()
            },
            ..base
        },
        // Not yet run (no GPU lent to this work): the `cpu` study on one GPU, with more
        // seeds; docs/gpu.md says what its first timed run must decide.
        Preset::GpuLite => ExperimentConfig {
            device: Device::Cuda(0),
            seeds: 5,
            ..base
        },
        Preset::Gpu => ExperimentConfig {
            seeds: 8,
            device: Device::Cuda(0),
            suite: SuiteSection {
                canvas: 64,
                ..SuiteSection::default()
            },
            model: TrainPreset::Gpu,
            base: BaseConfig {
                samples: 1_000_000,
                ..BaseConfig::default()
            },
            gradients: GradientConfig {
                rollouts_per_env: 512,
                ..study_gradients()
            },
            rl: study_rl(TrainPreset::Gpu, 2_000_000),
            eval: EvalConfig {
                episodes: 32,
                ..EvalConfig::default()
            },
            online: OnlineConfig {
                every_steps: 400_000,
                episodes: 64,
                ..OnlineConfig::default()
            },
            scaling_sizes: vec![5, 10, 60, 100],
            polarisation: true,
            arms: Arm::ALL.to_vec(),
            ..base
        },
    }
}

/// The primary claims' equivalence margins, points, named before the confirmatory record
/// ran: half the difference the paper predicts at this scale, the paper's ratio of the two
/// arms' relative gains applied to the reference arm's pool gain in the development record
/// (docs/experiments/PROTOCOL.md derives each).
pub fn study_margins() -> BTreeMap<ClaimId, f64> {
    BTreeMap::from([
        (ClaimId::AesOverRandomK, 1.3),
        (ClaimId::AesOverAllPool, 2.9),
        (ClaimId::AesHdcOverRandomKHdc, 1.1),
        (ClaimId::HdcHelpsAes, 0.3),
        (ClaimId::HdcHelpsRandomK, 0.7),
        (ClaimId::ConflictMatters, 0.5),
        (ClaimId::TransferConflictOverGradient, 0.5),
    ])
}

/// The arms' RL of the study. One-seed pilots from the critic-warmed base (docs/experiments/
/// README.md), gain of the AES arm on its own 30 environments: 120k steps x 4 epochs +4.3 points
/// (lr 1e-3: +4.2; time limits bootstrapped: +3.6); 240k x 4 +8.3; 480k x 2 +11.9 (the
/// same learning compute as 240k x 4: env steps are cheap next to learning, so two epochs on
/// twice the steps learn more per second).
///
/// A KL penalty to the base (`kl_coef` 0.75, verl's `use_kl_loss`) so that RL keeps what it
/// does not train: the value at which an AES arm's pilots gained about 10 points on their
/// trained envs and lost at most about 1 elsewhere (the pilots at 0 to 3 and their figures:
/// docs/trainer-log.md, "KL penalty pilots").
///
/// `model`'s trainer preset with these changes and a budget of `steps` env steps per arm.
pub fn study_rl(model: TrainPreset, steps: u64) -> TrainConfig {
    TrainConfig {
        total_env_steps: steps,
        lr: 3e-4,
        lr_schedule: LrSchedule::Constant,
        epochs: 2,
        value_coef: 0.5,
        kl_coef: 0.75,
        ..TrainConfig::of(model)
    }
}

/// The per-environment gradients of the study: 128 episodes per environment projected to
/// 1,024 dimensions, the trainer's estimators otherwise (single-turn envs exactly over their
/// answers, the mean baseline for multi-turn episodes; docs/conflict-estimates.md). `seed`
/// and `harness` are set by each gradients stage.
pub fn study_gradients() -> GradientConfig {
    GradientConfig {
        rollouts_per_env: 128,
        dim: 1024,
        ..GradientConfig::default()
    }
}

/// AES as the study runs it, budget `k`: full ability coverage enforced, ties broken in the
/// order seeded by `seed` (the presets: the master seed), environments whose gradient is
/// exactly zero left out as unknown (the base never solved them, so the conflict term cannot
/// see them), and each constraint given up only where it makes the selection infeasible
/// (reported as the selection's relaxation). The paper's terms and weights otherwise.
pub fn study_selection(k: usize, seed: u64) -> SelectConfig {
    SelectConfig {
        require_full_coverage: true,
        certify: true,
        tie_break: TieBreak::Seeded(seed),
        exclude_zero_gradient: true,
        relax: true,
        ..SelectConfig::aes(k)
    }
}

/// The HDC defaults of the study: sized so that a curriculum climbs on earned competence and
/// most of its environments reach H4 before the budget ends (the paper publishes none of these
/// numbers).
pub fn study_hdc() -> HdcConfig {
    // The numbers and the pilots that sized them live beside HDC, where the benches share them.
    HdcConfig::study_sizing()
}

impl ExperimentConfig {
    /// The values of a preset.
    pub fn preset(preset: Preset) -> Self {
        values(preset)
    }

    /// The preset's values overlaid with `overrides` (a JSON object of any fields of
    /// `config.json`); `source` names where the overrides come from in errors.
    ///
    /// A run whose configuration was changed is a pilot: unless `overrides` names
    /// `protocol.split` itself, the result is a development run, so no override can reach the
    /// confirmatory seeds, instances or held-out envs by accident.
    pub fn from_overrides(
        preset: Preset,
        overrides: &serde_json::Value,
        source: &str,
    ) -> Result<Self, InvalidValue> {
        let mut cfg: Self = crate::overlay::overlay(&Self::preset(preset), overrides, source)?;
        if !crate::protocol::names_split(overrides) {
            cfg.protocol.split = Split::Development;
        }
        Ok(cfg)
    }
}
