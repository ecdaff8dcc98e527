//! The families: one module of game logic each, and the table that registers them.

mod collect;
mod count;
mod maze;
mod reach;
pub(crate) mod util;

use envdist_core::{Split, Turn};

use crate::env::{Game, ObsMod};

/// The conflicting twin of a family's classic variant.
pub(crate) struct Twin {
    /// Variant name of the twin.
    pub variant: &'static str,
    /// Twin made by swapping left and right (otherwise by the game's rule 1).
    pub mirror: bool,
    /// Instruction of the twin.
    pub instruction: &'static str,
    /// Abilities only the twin exercises.
    pub abilities: &'static [&'static str],
}

/// One family: its rules (the game), its scale range, abilities and variants.
pub(crate) struct Family {
    pub name: &'static str,
    pub turn: Turn,
    pub split: Split,
    pub scale: (u32, u32),
    pub abilities: &'static [&'static str],
    pub make: fn(u8) -> Box<dyn Game>,
    pub instruction: &'static str,
    pub twin: Option<Twin>,
    /// Number of theme variants (taken in order from [`crate::render::THEMES`]).
    pub themes: usize,
    /// Observation-change variants.
    pub obs: &'static [ObsMod],
}

const NAV_OBS: &[ObsMod] = &[ObsMod::Noise, ObsMod::Occlude, ObsMod::Ego];
const OBS: &[ObsMod] = &[ObsMod::Noise, ObsMod::Occlude];

const MIRROR_ABILITIES: &[&str] = &["mirrored-control"];

/// Every family, pool and held-out.
pub(crate) fn families() -> Vec<Family> {
    use Split::Pool;
    use Turn::{Multi, Single};
    vec![
        Family {
            name: "maze",
            turn: Multi,
            split: Pool,
            scale: (1, 5),
            abilities: &[
                "navigate",
                "wall-follow",
                "dead-end-recovery",
                "junction-choice",
                "goal-localise",
            ],
            make: maze::Maze::boxed,
            instruction: "Reach the green goal.",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: true,
                instruction: "Reach the green goal; left and right are swapped.",
                abilities: MIRROR_ABILITIES,
            }),
            themes: 4,
            obs: NAV_OBS,
        },
        Family {
            name: "collect",
            turn: Multi,
            split: Pool,
            scale: (2, 8),
            abilities: &[
                "navigate",
                "route-plan",
                "color-recognise",
                "collect",
                "distractor-avoid",
            ],
            make: collect::Collect::boxed,
            instruction: "Collect every red square; never touch a blue one.",
            twin: Some(Twin {
                variant: "avoid-red",
                mirror: false,
                instruction: "Collect every blue square; never touch a red one.",
                abilities: &[],
            }),
            themes: 4,
            obs: NAV_OBS,
        },
        Family {
            name: "count-objects",
            turn: Single,
            split: Pool,
            scale: (3, 12),
            abilities: &["count", "colour-filter"],
            make: count::Count::boxed,
            instruction: "How many red objects are there?",
            twin: Some(Twin {
                variant: "count-blue",
                mirror: false,
                instruction: "How many blue objects are there?",
                abilities: &[],
            }),
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "reachability",
            turn: Single,
            split: Pool,
            scale: (1, 4),
            abilities: &["path-trace", "connectivity"],
            make: reach::Reach::boxed,
            instruction: "Can the white agent reach the green goal?",
            twin: Some(Twin {
                variant: "blocked",
                mirror: false,
                instruction: "Is the green goal blocked off from the white agent?",
                abilities: &["negation"],
            }),
            themes: 4,
            obs: OBS,
        },
    ]
}
