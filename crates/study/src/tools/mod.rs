//! What other commands use of the study's machinery without running the paper's study:
//! the conflict-estimates study (`xtask conflict-estimates`), profiling of the pool or of a
//! trajectory log into a cached directory (`xtask profile`), the curriculum-trace charts
//! (`xtask curriculum simulate`) and the skill-world map (`xtask world-map`), both drawn with
//! `envdist-plot`, and the pixel testbed's bets (`xtask bet`).

pub mod bets;
pub mod conflict;
pub mod curriculum_plots;
pub mod profile;
pub mod world_map;
