//! The families: one module of game logic each, and the table that registers them.

mod buttons;
mod clock;
mod collect;
mod compose;
mod confirm;
mod count;
mod dicesum;
mod hazard;
mod keydoor;
mod lights;
mod maze;
mod merge;
mod mines;
mod oddoneout;
mod ood;
mod paint;
mod patternnext;
mod pickplace;
mod reach;
mod regions;
mod relpos;
mod shapematch;
mod single;
mod sliding;
mod snake;
mod sokoban;
mod symmetry;
mod tictactoe;
pub(crate) mod util;

use envdist_core::{Split, Turn};

use crate::env::{Game, ObsMod};

pub(crate) use compose::families as compositional_families;

/// A family without rule variants: a default game, whose `reset` draws every instance.
fn plain<G: Game + Default + 'static>(_rule: u8) -> Box<dyn Game> {
    Box::<G>::default()
}

/// A family whose twin changes a rule: a default game told its rule (`0` the family's own,
/// `1` the twin's), as a `Family::make`.
macro_rules! ruled {
    ($game:ty) => {
        |rule| {
            let mut game = <$game>::default();
            game.rule = rule;
            Box::new(game) as Box<dyn Game>
        }
    };
}

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

/// The moves that keep a cursor at `(x, y)` inside an `n x n` board (lights-out, minesweeper).
pub(crate) fn cursor_moves((x, y): (usize, usize), n: usize) -> envdist_core::ActionMask {
    use envdist_core::{ActionId, ActionMask};
    let mut m = ActionMask::NONE;
    for (ok, a) in [
        (y > 0, ActionId::UP),
        (y + 1 < n, ActionId::DOWN),
        (x > 0, ActionId::LEFT),
        (x + 1 < n, ActionId::RIGHT),
    ] {
        if ok {
            m = m.with(a);
        }
    }
    m
}

/// The cursor move toward cell `target` (x first, then y), or `interact` when already on it
/// (lights-out, minesweeper solvers).
pub(crate) fn cursor_toward(
    (cx, cy): (usize, usize),
    (tx, ty): (usize, usize),
) -> envdist_core::ActionId {
    use envdist_core::ActionId;
    if tx < cx {
        ActionId::LEFT
    } else if tx > cx {
        ActionId::RIGHT
    } else if ty < cy {
        ActionId::UP
    } else if ty > cy {
        ActionId::DOWN
    } else {
        ActionId::INTERACT
    }
}

/// Every family: the pool's, then the OOD set's, then the confirmatory set's (each list keeps
/// its order as families are added after it, so ids and the pool's order never move).
pub(crate) fn families() -> Vec<Family> {
    use Split::{Confirm, Ood, Pool};
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
            make: plain::<maze::Maze>,
            instruction: "Reach the green goal.",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: true,
                instruction: "Reach the green goal; left and right are swapped.",
                abilities: MIRROR_ABILITIES,
            }),
            themes: 5,
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
            make: ruled!(collect::Collect),
            instruction: "Collect every red square; never touch a blue one.",
            twin: Some(Twin {
                variant: "avoid-red",
                mirror: false,
                instruction: "Collect every blue square; never touch a red one.",
                abilities: &[],
            }),
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "key-door",
            turn: Multi,
            split: Pool,
            scale: (1, 3),
            abilities: &[
                "navigate",
                "pick-up",
                "use-key",
                "subgoal-order",
                "goal-localise",
            ],
            make: plain::<keydoor::KeyDoor>,
            instruction: "Open the locked doors with their keys and reach the green goal.",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: true,
                instruction: "Open the locked doors with their keys and reach the green goal; left and right are swapped.",
                abilities: MIRROR_ABILITIES,
            }),
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "hazard-cross",
            turn: Multi,
            split: Pool,
            scale: (1, 4),
            abilities: &["navigate", "hazard-recognise", "gap-find", "goal-localise"],
            make: plain::<hazard::Hazard>,
            instruction: "Cross the lava rows through their gaps to the green goal.",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: true,
                instruction: "Cross the lava rows through their gaps to the green goal; left and right are swapped.",
                abilities: MIRROR_ABILITIES,
            }),
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "pick-place",
            turn: Multi,
            split: Pool,
            scale: (1, 4),
            abilities: &["navigate", "route-plan", "pick-up", "place", "match-colour"],
            make: plain::<pickplace::PickPlace>,
            instruction: "Put every block on the pad of its colour.",
            twin: None,
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "push-button",
            turn: Multi,
            split: Pool,
            scale: (2, 4),
            abilities: &["navigate", "press-button", "sequence", "remember-code"],
            make: ruled!(buttons::Buttons),
            instruction: "Press the buttons in the order of the code strip.",
            twin: Some(Twin {
                variant: "reversed",
                mirror: false,
                instruction: "Press the buttons in the reverse order of the code strip.",
                abilities: &[],
            }),
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "path-paint",
            turn: Multi,
            split: Pool,
            scale: (4, 8),
            abilities: &["trace-path", "colour-match"],
            make: plain::<paint::Paint>,
            instruction: "Paint the whole dotted path without leaving it.",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: true,
                instruction: "Paint the whole dotted path without leaving it; left and right are swapped.",
                abilities: MIRROR_ABILITIES,
            }),
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "snake",
            turn: Multi,
            split: Pool,
            scale: (1, 4),
            abilities: &["chase", "self-avoid", "growth-plan"],
            make: plain::<snake::Snake>,
            instruction: "Eat the red food without crashing.",
            twin: None,
            themes: 5,
            obs: NAV_OBS,
        },
        Family {
            name: "sokoban",
            turn: Multi,
            split: Pool,
            scale: (1, 3),
            abilities: &["push", "push-plan", "box-on-target"],
            make: plain::<sokoban::Sokoban>,
            instruction: "Push every box onto a target.",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: true,
                instruction: "Push every box onto a target; left and right are swapped.",
                abilities: MIRROR_ABILITIES,
            }),
            themes: 5,
            obs: OBS,
        },
        Family {
            name: "sliding-puzzle",
            turn: Multi,
            split: Pool,
            scale: (1, 3),
            abilities: &["permute", "tile-locate", "plan-ahead"],
            make: plain::<sliding::Sliding>,
            instruction: "Slide the tiles into colour order.",
            twin: None,
            themes: 5,
            obs: OBS,
        },
        Family {
            name: "lights-out",
            turn: Multi,
            split: Pool,
            scale: (1, 3),
            abilities: &["toggle", "parity-reason", "cursor-move"],
            make: ruled!(lights::Lights),
            instruction: "Switch every light off.",
            twin: Some(Twin {
                variant: "neighbours-only",
                mirror: false,
                instruction: "Switch every light off; a press toggles only the neighbours.",
                abilities: &[],
            }),
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "merge-2048",
            turn: Multi,
            split: Pool,
            scale: (1, 4),
            abilities: &["count-value", "merge", "corner-strategy"],
            make: plain::<merge::Merge>,
            instruction: "Merge tiles until the goal tile appears.",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "minesweeper",
            turn: Multi,
            split: Pool,
            scale: (1, 3),
            abilities: &["reveal", "number-read", "deduce-safe", "cursor-move"],
            make: plain::<mines::Mines>,
            instruction: "Reveal every safe cell.",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "tic-tac-toe",
            turn: Multi,
            split: Pool,
            scale: (1, 3),
            abilities: &["turn-take", "block-threat", "win-detect"],
            make: ruled!(tictactoe::TicTacToe),
            instruction: "Do not lose at tic-tac-toe.",
            twin: Some(Twin {
                variant: "misere",
                mirror: false,
                instruction: "Do not lose at misere tic-tac-toe: completing a line loses.",
                abilities: &["misere-reason"],
            }),
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "count-objects",
            turn: Single,
            split: Pool,
            scale: (3, 12),
            abilities: &["count", "colour-filter"],
            make: ruled!(count::Count),
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
            make: ruled!(reach::Reach),
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
        Family {
            name: "odd-one-out",
            turn: Single,
            split: Pool,
            scale: (4, 9),
            abilities: &["compare-colour", "compare-shape"],
            make: plain::<oddoneout::OddOneOut>,
            instruction: "Which item is the odd one out?",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "relative-position",
            turn: Single,
            split: Pool,
            scale: (2, 6),
            abilities: &["left-right", "above-below"],
            make: ruled!(relpos::RelPos),
            instruction: "Where is the red object relative to the blue one?",
            twin: Some(Twin {
                variant: "mirrored",
                mirror: false,
                instruction: "Where is the blue object relative to the red one?",
                abilities: &["negation"],
            }),
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "pattern-next",
            turn: Single,
            split: Pool,
            scale: (1, 3),
            abilities: &["sequence-induce", "colour-cycle"],
            make: plain::<patternnext::PatternNext>,
            instruction: "Which colour comes next?",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "symmetry",
            turn: Single,
            split: Pool,
            scale: (1, 3),
            abilities: &["symmetry-detect", "compare-colour"],
            make: ruled!(symmetry::Symmetry),
            instruction: "Is the pattern mirror-symmetric?",
            twin: Some(Twin {
                variant: "asymmetric",
                mirror: false,
                instruction: "Is the pattern asymmetric?",
                abilities: &["negation"],
            }),
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "dice-sum",
            turn: Single,
            split: Pool,
            scale: (1, 3),
            abilities: &["pip-count", "add"],
            make: plain::<dicesum::DiceSum>,
            instruction: "What is the sum of the dice?",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "largest-region",
            turn: Single,
            split: Pool,
            scale: (1, 3),
            abilities: &["region-fill", "compare-size"],
            make: ruled!(regions::Regions),
            instruction: "Which colour covers the largest area?",
            twin: Some(Twin {
                variant: "smallest",
                mirror: false,
                instruction: "Which colour covers the smallest area?",
                abilities: &[],
            }),
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "clock-direction",
            turn: Single,
            split: Pool,
            scale: (1, 2),
            abilities: &["angle-read", "orientation"],
            make: plain::<clock::Clock>,
            instruction: "Which way does the arrow point?",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "shape-match",
            turn: Single,
            split: Pool,
            scale: (2, 6),
            abilities: &["match-shape", "compare-shape"],
            make: plain::<shapematch::ShapeMatch>,
            instruction: "Which candidate has the reference shape?",
            twin: None,
            themes: 4,
            obs: OBS,
        },
        Family {
            name: "frozen-lake",
            turn: Multi,
            split: Ood,
            scale: (1, 3),
            abilities: &["navigate", "slip-adapt", "hole-avoid", "goal-localise"],
            make: plain::<ood::Frozen>,
            instruction: "Cross the ice to the green goal without falling in.",
            twin: None,
            themes: 2,
            obs: NAV_OBS,
        },
        Family {
            name: "connect-three",
            turn: Multi,
            split: Ood,
            scale: (1, 2),
            abilities: &["gravity-drop", "turn-take", "block-threat", "line-build"],
            make: plain::<ood::Connect3>,
            instruction: "Do not lose at connect-three.",
            twin: None,
            themes: 2,
            obs: OBS,
        },
        Family {
            name: "memory-pairs",
            turn: Multi,
            split: Ood,
            scale: (2, 6),
            abilities: &["memory-recall", "card-match"],
            make: plain::<ood::Memory>,
            instruction: "Match every pair of cards.",
            twin: None,
            themes: 2,
            obs: OBS,
        },
        Family {
            name: "shape-arithmetic",
            turn: Single,
            split: Ood,
            scale: (3, 9),
            abilities: &["count", "subtract", "compare-shape"],
            make: plain::<ood::Arith>,
            instruction: "How many more discs than squares are there?",
            twin: None,
            themes: 2,
            obs: OBS,
        },
        Family {
            name: "ice-slide",
            turn: Multi,
            split: Confirm,
            scale: (1, 3),
            abilities: &["navigate", "slide-stop", "goal-localise"],
            make: plain::<confirm::ice_slide::IceSlide>,
            instruction: "Slide over the ice and come to rest on the green goal.",
            twin: None,
            themes: 2,
            obs: NAV_OBS,
        },
        Family {
            name: "pipe-rotation",
            turn: Multi,
            split: Confirm,
            scale: (1, 3),
            abilities: &["cursor-move", "tile-rotate", "pipe-connect"],
            make: plain::<confirm::pipes::Pipes>,
            instruction: "Turn the pipes until water runs from the blue source to the green drain.",
            twin: None,
            themes: 2,
            obs: OBS,
        },
        Family {
            name: "balance-scale",
            turn: Single,
            split: Confirm,
            scale: (2, 8),
            abilities: &["weigh", "compare-shape", "add"],
            make: plain::<confirm::balance::Balance>,
            instruction: "Which pan is heavier? A bar weighs 1, a square 2, a disc 3.",
            twin: None,
            themes: 2,
            obs: OBS,
        },
        Family {
            name: "path-length",
            turn: Single,
            split: Confirm,
            scale: (1, 3),
            abilities: &["path-trace", "measure-length"],
            make: plain::<confirm::path_length::PathLength>,
            instruction: "How many steps long is the orange path from the white start to the green end?",
            twin: None,
            themes: 2,
            obs: OBS,
        },
    ]
}
