//! The study's arms and claims, one declarative card each: the only file that names an arm.
//! Everything else (the stages, the analysis, the report, the figures, the presets) reads
//! these cards, so adding an arm is adding its variant and its card here (and regenerating the
//! records); `tests::every_arm_reaches_every_table` checks that nothing drops it.

use envdist_curriculum::{Mode, SamplerConfig};
use serde::{Deserialize, Serialize};

use super::sources::EnvSource;

/// The training arms of the study: the paper's main table and ablations, the methods users
/// would pick instead, online re-selection, the control pool and the hint-style question.
/// Each has a [`Card`] ([`Arm::card`]).
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
    /// AES whose conflict term comes from measured transfer instead of the base's gradient
    /// cosine (beyond the paper), no curriculum.
    #[serde(rename = "aes-transfer")]
    AesTransfer,
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

/// What an arm is for in the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The base: not trained, the reference of every gain.
    Reference,
    /// One of the paper's main comparisons.
    Main,
    /// An ablation of the paper's method.
    Ablation,
    /// A method a user would pick instead, with its published defaults.
    Rival,
    /// The control pool (no designed conflict twins).
    Control,
    /// The hint-style question.
    Hints,
    /// Online re-selection (beyond the paper).
    Online,
}

/// How an arm orders its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// No curriculum: H4 (the evaluation level), scale uniform over each env's range.
    UniformH4,
    /// The study's HDC in one of its modes (full, harness only, scale only).
    Hdc(Mode),
    /// A rival method: one of the curriculum crate's sampler kinds
    /// ([`SamplerConfig::KINDS`]), with its published defaults.
    Rival(&'static str),
}

impl Ordering {
    /// The rival's sampler with its published defaults (`None` for the other orderings).
    pub fn rival_config(self) -> Option<SamplerConfig> {
        match self {
            Ordering::Rival(kind) => SamplerConfig::default_for(kind).ok(),
            _ => None,
        }
    }
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

/// Everything the study knows of one arm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Card {
    /// The arm.
    pub arm: Arm,
    /// Its name in files, configs and tables (also its serde name).
    pub name: &'static str,
    /// What it is for.
    pub role: Role,
    /// What it trains on and with; `None` for the base, which is not trained.
    pub recipe: Option<Recipe>,
    /// The paper's published average relative gain, where the paper has this arm.
    pub paper_gain: Option<&'static str>,
    /// Drawn in the learning-curve figure (more lines would not be readable).
    pub plotted: bool,
    /// Run by the `cpu` preset (the paper's central comparisons).
    pub central: bool,
    /// Compared with [`FLAGSHIP`] in the report's "against AES + HDC" table.
    pub versus_flagship: bool,
}

const fn card(arm: Arm, name: &'static str, role: Role, recipe: Option<Recipe>) -> Card {
    Card {
        arm,
        name,
        role,
        recipe,
        paper_gain: None,
        plotted: false,
        central: false,
        versus_flagship: false,
    }
}

const fn plain(envs: EnvSource, ordering: Ordering) -> Option<Recipe> {
    Some(Recipe {
        envs,
        ordering,
        other_hints: false,
        online: false,
    })
}

use EnvSource as E;
use Ordering as O;

/// The cards, in report order.
const CARDS: [Card; 19] = [
    Card {
        central: true,
        ..card(Arm::Base, "base", Role::Reference, None)
    },
    Card {
        paper_gain: Some("+43.4% (all 200)"),
        plotted: true,
        central: true,
        versus_flagship: true,
        ..card(
            Arm::AllPool,
            "all-pool",
            Role::Main,
            plain(E::Pool, O::UniformH4),
        )
    },
    Card {
        paper_gain: Some("+44.6% (random 30)"),
        plotted: true,
        central: true,
        ..card(
            Arm::RandomK,
            "random-k",
            Role::Main,
            plain(E::RandomK, O::UniformH4),
        )
    },
    Card {
        paper_gain: Some("+95.6% (AES 30)"),
        plotted: true,
        central: true,
        versus_flagship: true,
        ..card(Arm::Aes, "aes", Role::Main, plain(E::Aes, O::UniformH4))
    },
    Card {
        paper_gain: Some("+143.2%"),
        plotted: true,
        central: true,
        ..card(
            Arm::AesHdc,
            "aes+hdc",
            Role::Main,
            plain(E::Aes, O::Hdc(Mode::Full)),
        )
    },
    Card {
        paper_gain: Some("+73.7%"),
        plotted: true,
        central: true,
        versus_flagship: true,
        ..card(
            Arm::RandomKHdc,
            "random-k+hdc",
            Role::Main,
            plain(E::RandomK, O::Hdc(Mode::Full)),
        )
    },
    Card {
        paper_gain: Some("2.8% (ablation; vs 40.3% with it)"),
        central: true,
        ..card(
            Arm::AesNoConflict,
            "aes-no-conflict",
            Role::Ablation,
            plain(E::AesNoConflict, O::UniformH4),
        )
    },
    Card {
        central: true,
        ..card(
            Arm::AesTransfer,
            "aes-transfer",
            Role::Ablation,
            plain(E::AesTransfer, O::UniformH4),
        )
    },
    Card {
        paper_gain: Some("18.1% (ablation)"),
        ..card(
            Arm::AesHarnessOnly,
            "aes+harness-only",
            Role::Ablation,
            plain(E::Aes, O::Hdc(Mode::HarnessOnly)),
        )
    },
    Card {
        paper_gain: Some("11.5% (ablation)"),
        ..card(
            Arm::AesScaleOnly,
            "aes+scale-only",
            Role::Ablation,
            plain(E::Aes, O::Hdc(Mode::ScaleOnly)),
        )
    },
    card(
        Arm::AesHdcOnline,
        "aes+hdc-online",
        Role::Online,
        Some(Recipe {
            envs: E::Aes,
            ordering: O::Hdc(Mode::Full),
            other_hints: false,
            online: true,
        }),
    ),
    card(
        Arm::AesHdcOtherHints,
        "aes+hdc-other-hints",
        Role::Hints,
        Some(Recipe {
            envs: E::Aes,
            ordering: O::Hdc(Mode::Full),
            other_hints: true,
            online: false,
        }),
    ),
    Card {
        plotted: true,
        versus_flagship: true,
        ..card(
            Arm::PassRate,
            "pass-rate",
            Role::Rival,
            plain(E::Pool, O::Rival("pass_rate")),
        )
    },
    Card {
        versus_flagship: true,
        ..card(
            Arm::LearningProgress,
            "learning-progress",
            Role::Rival,
            plain(E::Pool, O::Rival("learning_progress")),
        )
    },
    Card {
        plotted: true,
        versus_flagship: true,
        ..card(
            Arm::Sec,
            "sec",
            Role::Rival,
            plain(E::Pool, O::Rival("sec")),
        )
    },
    Card {
        versus_flagship: true,
        ..card(
            Arm::Ladder,
            "ladder",
            Role::Rival,
            plain(E::Pool, O::Rival("ladder")),
        )
    },
    Card {
        plotted: true,
        versus_flagship: true,
        ..card(
            Arm::Plr,
            "plr",
            Role::Rival,
            plain(E::Pool, O::Rival("plr")),
        )
    },
    card(
        Arm::ControlAes,
        "control-aes",
        Role::Control,
        plain(E::ControlAes, O::UniformH4),
    ),
    card(
        Arm::ControlRandomK,
        "control-random-k",
        Role::Control,
        plain(E::ControlRandomK, O::UniformH4),
    ),
];

/// The paper's method, against which the rivals and variants are compared, and whose
/// curriculum trace is drawn.
pub const FLAGSHIP: Arm = Arm::AesHdc;

/// The arms that give the pool-size scaling study its points at k and at the whole pool.
pub const SCALING_ARMS: [Arm; 2] = [Arm::RandomK, Arm::AllPool];

/// The arm whose recipe the scaling study's random subsets follow (their runs carry its name).
pub const SCALING_RECIPE: Arm = Arm::RandomK;

/// AES against random-k on the main pool and on the control pool (`a − b` each).
pub const CONTROL_PAIRS: [(Arm, Arm); 2] = [
    (Arm::Aes, Arm::RandomK),
    (Arm::ControlAes, Arm::ControlRandomK),
];

/// The hint question: the study's hint style minus the other (`a − b`).
pub const HINT_PAIR: (Arm, Arm) = (Arm::AesHdc, Arm::AesHdcOtherHints);

/// The AES arms whose gain split is the outcome check of "RL keeps what it does not train"
/// (`preconditions.rl_keeps`); the first is the one the coverage precondition reads.
pub const RETENTION_ARMS: [Arm; 2] = [Arm::Aes, Arm::AesHdc];

/// The HDC arms of HDC's primary claims ("HDC helps AES", "HDC helps random-k"): the arms whose
/// schedule `preconditions.hdc_reach` must show acting for those claims to be testable.
pub const HDC_CLAIM_ARMS: [Arm; 2] = [Arm::AesHdc, Arm::RandomKHdc];

/// Online re-selection minus one-shot AES + HDC (`a − b`).
pub const ONLINE_PAIR: (Arm, Arm) = (Arm::AesHdcOnline, Arm::AesHdc);

impl Arm {
    /// Every arm in report order.
    pub const ALL: [Arm; 19] = {
        let mut all = [Arm::Base; 19];
        let mut i = 0;
        while i < CARDS.len() {
            all[i] = CARDS[i].arm;
            i += 1;
        }
        all
    };

    /// Its card.
    pub fn card(self) -> &'static Card {
        CARDS
            .iter()
            .find(|c| c.arm == self)
            .expect("every arm has a card (tests::cards_are_complete)")
    }

    /// The name used in files, configs and tables (also its serde name).
    pub fn name(self) -> &'static str {
        self.card().name
    }

    /// What the arm trains on and with; `None` for the base, which is not trained.
    pub fn recipe(self) -> Option<Recipe> {
        self.card().recipe
    }

    /// The base: the reference of every gain, not trained.
    pub fn base() -> Arm {
        CARDS
            .iter()
            .find(|c| c.role == Role::Reference)
            .map_or(Arm::Base, |c| c.arm)
    }

    /// The reference of every gain: the base, not trained.
    pub fn is_base(self) -> bool {
        self.card().role == Role::Reference
    }

    /// Trained with an HDC curriculum (the report's curriculum table shows it).
    pub fn has_hdc(self) -> bool {
        matches!(
            self.recipe(),
            Some(Recipe {
                ordering: Ordering::Hdc(_),
                ..
            })
        )
    }

    /// Drawn in the learning-curve figure.
    pub fn plotted(self) -> bool {
        self.card().plotted
    }

    /// The paper's central comparisons, in report order: what the `cpu` preset runs.
    pub fn central() -> Vec<Arm> {
        CARDS.iter().filter(|c| c.central).map(|c| c.arm).collect()
    }

    /// The arms the report compares with [`FLAGSHIP`]: the rivals first, then the others, each
    /// group in report order.
    pub fn versus_flagship() -> Vec<Arm> {
        let mut arms: Vec<Arm> = CARDS
            .iter()
            .filter(|c| c.versus_flagship)
            .map(|c| c.arm)
            .collect();
        arms.sort_by_key(|a| {
            (
                a.card().role != Role::Rival,
                Arm::ALL.iter().position(|x| x == a),
            )
        });
        arms
    }
}

/// The paper's claims the study tests, by name (`analysis.primary` in the configuration
/// names the primary ones, fixed before the run; the rest are exploratory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimId {
    /// AES + HDC beats random-k + HDC.
    AesHdcOverRandomKHdc,
    /// HDC helps AES.
    HdcHelpsAes,
    /// HDC helps a random selection.
    HdcHelpsRandomK,
    /// AES beats random-k.
    AesOverRandomK,
    /// AES beats all pool environments.
    AesOverAllPool,
    /// RL on random-k beats the base.
    RandomKOverBase,
    /// RL on all environments beats the base.
    AllPoolOverBase,
    /// The conflict term matters.
    ConflictMatters,
    /// Conflict from measured transfer beats conflict from the base's gradient cosine.
    TransferConflictOverGradient,
    /// Harness weakening + scale progression beat harness weakening alone.
    FullOverHarnessOnly,
    /// Harness weakening + scale progression beat scale progression alone.
    FullOverScaleOnly,
    /// OOD gains are smaller than ID gains.
    OodSmaller,
    /// More environments can hurt.
    MoreEnvsHurt,
}

impl ClaimId {
    /// Every claim, in report order.
    pub const ALL: [ClaimId; 13] = [
        ClaimId::AesHdcOverRandomKHdc,
        ClaimId::HdcHelpsAes,
        ClaimId::HdcHelpsRandomK,
        ClaimId::AesOverRandomK,
        ClaimId::AesOverAllPool,
        ClaimId::RandomKOverBase,
        ClaimId::AllPoolOverBase,
        ClaimId::ConflictMatters,
        ClaimId::TransferConflictOverGradient,
        ClaimId::FullOverHarnessOnly,
        ClaimId::FullOverScaleOnly,
        ClaimId::OodSmaller,
        ClaimId::MoreEnvsHurt,
    ];

    /// The paper's statement, and the arms compared (`a − b`) where it is a pair of arms.
    pub fn statement(self) -> (&'static str, Option<(Arm, Arm)>) {
        use Arm as A;
        match self {
            ClaimId::AesHdcOverRandomKHdc => (
                "AES + HDC beats random-k + HDC",
                Some((A::AesHdc, A::RandomKHdc)),
            ),
            ClaimId::HdcHelpsAes => ("HDC helps AES", Some((A::AesHdc, A::Aes))),
            ClaimId::HdcHelpsRandomK => (
                "HDC helps a random selection",
                Some((A::RandomKHdc, A::RandomK)),
            ),
            ClaimId::AesOverRandomK => ("AES beats random-k", Some((A::Aes, A::RandomK))),
            ClaimId::AesOverAllPool => (
                "AES beats all pool environments",
                Some((A::Aes, A::AllPool)),
            ),
            ClaimId::RandomKOverBase => {
                ("RL on random-k beats the base", Some((A::RandomK, A::Base)))
            }
            ClaimId::AllPoolOverBase => (
                "RL on all environments beats the base",
                Some((A::AllPool, A::Base)),
            ),
            ClaimId::ConflictMatters => (
                "the conflict term matters (removing it loses most of AES's gain)",
                Some((A::Aes, A::AesNoConflict)),
            ),
            ClaimId::TransferConflictOverGradient => (
                "conflict from measured transfer beats conflict from gradient cosines (beyond \
                 the paper)",
                Some((A::AesTransfer, A::Aes)),
            ),
            ClaimId::FullOverHarnessOnly => (
                "harness weakening + scale progression beat harness weakening alone",
                Some((A::AesHdc, A::AesHarnessOnly)),
            ),
            ClaimId::FullOverScaleOnly => (
                "harness weakening + scale progression beat scale progression alone",
                Some((A::AesHdc, A::AesScaleOnly)),
            ),
            ClaimId::OodSmaller => ("OOD gains are smaller than ID gains", None),
            ClaimId::MoreEnvsHurt => (
                "more environments can hurt (a larger random pool scores below a smaller one)",
                None,
            ),
        }
    }

    /// The arm whose ID and OOD gains [`ClaimId::OodSmaller`] compares.
    pub const OOD_ARM: Arm = FLAGSHIP;

    /// The primary claims of the `cpu` preset: the paper's central comparisons that its arms
    /// can make.
    pub fn central() -> Vec<ClaimId> {
        vec![
            ClaimId::AesHdcOverRandomKHdc,
            ClaimId::HdcHelpsAes,
            ClaimId::HdcHelpsRandomK,
            ClaimId::AesOverRandomK,
            ClaimId::AesOverAllPool,
            ClaimId::ConflictMatters,
            ClaimId::TransferConflictOverGradient,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_are_complete_and_names_are_the_serde_names() {
        let mut names = std::collections::BTreeSet::new();
        for (i, arm) in Arm::ALL.into_iter().enumerate() {
            assert_eq!(arm.card().arm, arm);
            assert_eq!(CARDS[i].arm, arm, "report order is card order");
            assert!(names.insert(arm.name()), "{} named twice", arm.name());
            let json = serde_json::to_string(&arm).unwrap();
            assert_eq!(json, format!("\"{}\"", arm.name()));
            assert_eq!(serde_json::from_str::<Arm>(&json).unwrap(), arm);
            assert_eq!(arm.recipe().is_none(), arm.is_base());
        }
        assert_eq!(Arm::ALL.iter().filter(|a| a.is_base()).count(), 1);
    }

    #[test]
    fn every_rival_is_a_curriculum_kind_named_after_its_arm() {
        for arm in Arm::ALL {
            let Some(recipe) = arm.recipe() else { continue };
            let is_rival = matches!(recipe.ordering, Ordering::Rival(_));
            assert_eq!(is_rival, arm.card().role == Role::Rival, "{}", arm.name());
            if let Ordering::Rival(kind) = recipe.ordering {
                assert!(
                    SamplerConfig::KINDS.contains(&kind) && kind != "hdc",
                    "{kind}"
                );
                let config = recipe.ordering.rival_config().expect("a kind's defaults");
                assert_eq!(config.kind(), kind);
                assert_eq!(kind.replace('_', "-"), arm.name());
            }
        }
    }

    #[test]
    fn every_claim_of_two_arms_names_arms_with_cards() {
        for id in ClaimId::ALL {
            if let Some((a, b)) = id.statement().1 {
                assert_ne!(a, b);
                assert!(a.recipe().is_some(), "{id:?}: the first arm is trained");
            }
        }
        for c in ClaimId::central() {
            let (a, b) = c.statement().1.unwrap();
            assert!(a.card().central && b.card().central, "{c:?}");
        }
    }
}
