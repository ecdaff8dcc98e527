//! The study's arms: the paper's main table and ablations, the methods users would pick
//! instead, online re-selection, the control pool and the hint-style question; and for each,
//! what it trains on and with ([`Recipe`]), typed so that no arm can name a sampler that does
//! not exist or combine choices the study does not run.

use envdist_curriculum::{
    LadderConfig, LearningProgressConfig, Mode, PassRateConfig, PlrConfig, SamplerConfig, SecConfig,
};
use serde::{Deserialize, Serialize};

/// The training arms of the study: the paper's main table and ablations, the methods users
/// would pick instead, online re-selection, the control pool and the hint-style question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Arm {
    /// The pretrained model before RL: the reference of every gain.
    #[serde(rename = "base")]
    Base,
    /// Every pool environment, no curriculum (H4, scale uniform).
    #[serde(rename = "all-pool")]
    AllPool,
    /// k random pool environments (a new draw per seed), no curriculum.
    #[serde(rename = "random-k")]
    RandomK,
    /// The AES selection, no curriculum.
    #[serde(rename = "aes")]
    Aes,
    /// The AES selection with the full HDC curriculum.
    #[serde(rename = "aes+hdc", alias = "aes-hdc")]
    AesHdc,
    /// k random environments with the full HDC curriculum.
    #[serde(rename = "random-k+hdc", alias = "random-k-hdc")]
    RandomKHdc,
    /// AES without the conflict term, no curriculum (the paper's key ablation).
    #[serde(rename = "aes-no-conflict")]
    AesNoConflict,
    /// AES with harness weakening only.
    #[serde(rename = "aes+harness-only", alias = "aes-harness-only")]
    AesHarnessOnly,
    /// AES with state-scale progression only.
    #[serde(rename = "aes+scale-only", alias = "aes-scale-only")]
    AesScaleOnly,
    /// AES+HDC whose selection is recomputed every `online.every_steps` from fresh cheap
    /// gradients of the current policy, the kept environments keeping their curriculum.
    #[serde(rename = "aes+hdc-online")]
    AesHdcOnline,
    /// AES+HDC trained with the other hint style than the study's (the hint question).
    #[serde(rename = "aes+hdc-other-hints")]
    AesHdcOtherHints,
    /// Online pass-rate filtering over the whole pool (DAPO / prime-rl).
    #[serde(rename = "pass-rate")]
    PassRate,
    /// Learning progress over the whole pool (Syllabus).
    #[serde(rename = "learning-progress")]
    LearningProgress,
    /// The SEC bandit over (env, harness, scale) of the whole pool.
    #[serde(rename = "sec")]
    Sec,
    /// The RLVE difficulty ladder over the whole pool.
    #[serde(rename = "ladder")]
    Ladder,
    /// Robust prioritized level replay over the whole pool.
    #[serde(rename = "plr")]
    Plr,
    /// AES on the control pool (no designed conflict twins), no curriculum.
    #[serde(rename = "control-aes")]
    ControlAes,
    /// k random control-pool environments, no curriculum.
    #[serde(rename = "control-random-k")]
    ControlRandomK,
}

impl Arm {
    /// Every arm in report order.
    pub const ALL: [Arm; 18] = [
        Arm::Base,
        Arm::AllPool,
        Arm::RandomK,
        Arm::Aes,
        Arm::AesHdc,
        Arm::RandomKHdc,
        Arm::AesNoConflict,
        Arm::AesHarnessOnly,
        Arm::AesScaleOnly,
        Arm::AesHdcOnline,
        Arm::AesHdcOtherHints,
        Arm::PassRate,
        Arm::LearningProgress,
        Arm::Sec,
        Arm::Ladder,
        Arm::Plr,
        Arm::ControlAes,
        Arm::ControlRandomK,
    ];

    /// The paper's central comparisons: what the `cpu` preset runs.
    pub const CENTRAL: [Arm; 7] = [
        Arm::Base,
        Arm::AllPool,
        Arm::RandomK,
        Arm::Aes,
        Arm::AesHdc,
        Arm::RandomKHdc,
        Arm::AesNoConflict,
    ];

    /// The name used in files, configs and tables (also its serde name).
    pub fn name(self) -> &'static str {
        match self {
            Arm::Base => "base",
            Arm::AllPool => "all-pool",
            Arm::RandomK => "random-k",
            Arm::Aes => "aes",
            Arm::AesHdc => "aes+hdc",
            Arm::RandomKHdc => "random-k+hdc",
            Arm::AesNoConflict => "aes-no-conflict",
            Arm::AesHarnessOnly => "aes+harness-only",
            Arm::AesScaleOnly => "aes+scale-only",
            Arm::AesHdcOnline => "aes+hdc-online",
            Arm::AesHdcOtherHints => "aes+hdc-other-hints",
            Arm::PassRate => "pass-rate",
            Arm::LearningProgress => "learning-progress",
            Arm::Sec => "sec",
            Arm::Ladder => "ladder",
            Arm::Plr => "plr",
            Arm::ControlAes => "control-aes",
            Arm::ControlRandomK => "control-random-k",
        }
    }
}

/// Which selection an arm's environments come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvSource {
    /// Every pool environment.
    Pool,
    /// The AES selection.
    Aes,
    /// AES without the conflict term.
    AesNoConflict,
    /// The random-k draw of the arm's seed.
    RandomK,
    /// AES on the control pool.
    ControlAes,
    /// The control pool's random-k draw of the arm's seed.
    ControlRandomK,
}

/// A task-ordering method a user would pick instead of AES + HDC, run over the whole pool
/// with its published defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rival {
    /// Online pass-rate filtering (DAPO / prime-rl).
    PassRate,
    /// Learning progress (Syllabus).
    LearningProgress,
    /// The SEC bandit.
    Sec,
    /// The RLVE difficulty ladder.
    Ladder,
    /// Robust prioritized level replay.
    Plr,
}

impl Rival {
    /// The rival's sampler with its published defaults.
    pub fn config(self) -> SamplerConfig {
        match self {
            Rival::PassRate => SamplerConfig::PassRate(PassRateConfig::default()),
            Rival::LearningProgress => {
                SamplerConfig::LearningProgress(LearningProgressConfig::default())
            }
            Rival::Sec => SamplerConfig::Sec(SecConfig::default()),
            Rival::Ladder => SamplerConfig::Ladder(LadderConfig::default()),
            Rival::Plr => SamplerConfig::Plr(PlrConfig::default()),
        }
    }
}

/// How an arm orders its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// No curriculum: H4 (the evaluation level), scale uniform over each env's range.
    UniformH4,
    /// The study's HDC in one of its modes (full, harness only, scale only).
    Hdc(Mode),
    /// A rival method.
    Rival(Rival),
}

/// What an arm trains on and with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recipe {
    /// Its environments.
    pub envs: EnvSource,
    /// Its task ordering.
    pub ordering: Ordering,
    /// Trained with the other hint style than the study's.
    pub other_hints: bool,
    /// AES re-selected every `online.every_steps` from fresh gradients of the current policy.
    pub online: bool,
}

impl Arm {
    /// What the arm trains on and with; `None` for the base, which is not trained.
    pub fn recipe(self) -> Option<Recipe> {
        use EnvSource as E;
        use Ordering as O;
        let plain = |envs, ordering| Recipe {
            envs,
            ordering,
            other_hints: false,
            online: false,
        };
        let rival = |r| plain(E::Pool, O::Rival(r));
        Some(match self {
            Arm::Base => return None,
            Arm::AllPool => plain(E::Pool, O::UniformH4),
            Arm::RandomK => plain(E::RandomK, O::UniformH4),
            Arm::Aes => plain(E::Aes, O::UniformH4),
            Arm::AesHdc => plain(E::Aes, O::Hdc(Mode::Full)),
            Arm::RandomKHdc => plain(E::RandomK, O::Hdc(Mode::Full)),
            Arm::AesNoConflict => plain(E::AesNoConflict, O::UniformH4),
            Arm::AesHarnessOnly => plain(E::Aes, O::Hdc(Mode::HarnessOnly)),
            Arm::AesScaleOnly => plain(E::Aes, O::Hdc(Mode::ScaleOnly)),
            Arm::AesHdcOnline => Recipe {
                online: true,
                ..plain(E::Aes, O::Hdc(Mode::Full))
            },
            Arm::AesHdcOtherHints => Recipe {
                other_hints: true,
                ..plain(E::Aes, O::Hdc(Mode::Full))
            },
            Arm::PassRate => rival(Rival::PassRate),
            Arm::LearningProgress => rival(Rival::LearningProgress),
            Arm::Sec => rival(Rival::Sec),
            Arm::Ladder => rival(Rival::Ladder),
            Arm::Plr => rival(Rival::Plr),
            Arm::ControlAes => plain(E::ControlAes, O::UniformH4),
            Arm::ControlRandomK => plain(E::ControlRandomK, O::UniformH4),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_serde_names_are_the_table_names_and_every_rival_is_its_sampler() {
        for arm in Arm::ALL {
            let json = serde_json::to_string(&arm).unwrap();
            assert_eq!(json, format!("\"{}\"", arm.name()));
            assert_eq!(serde_json::from_str::<Arm>(&json).unwrap(), arm);
            assert_eq!(arm.recipe().is_none(), arm == Arm::Base);
            if let Some(Recipe {
                ordering: Ordering::Rival(r),
                ..
            }) = arm.recipe()
            {
                assert_eq!(r.config().kind().replace('_', "-"), arm.name());
            }
        }
    }
}
