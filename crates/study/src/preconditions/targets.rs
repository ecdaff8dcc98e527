//! The targets of the preconditions (points or Spearman's rho), named before the run
//! (docs/experiments/PROTOCOL.md).

/// Points per unit of success rate.
pub const PTS: f64 = 100.0;

/// H4 points a scaffolded fine-tune must gain on its source (with lo > 0).
pub const HARNESS_GAIN: f64 = 3.0;
/// Rank correlation of similarity with transfer (with lo > 0).
pub const RANK: f64 = 0.3;
/// Points an AES arm must gain on its trained envs (with lo > 0).
pub const TRAINED_GAIN: f64 = 10.0;
/// Points an AES arm may lose on what it did not train (untrained pool envs, OOD).
pub const KEEP: f64 = -1.0;
/// An environment is at the H4 floor below this base success at H4, points.
pub const FLOOR_H4: f64 = 5.0;
/// ... and unlocked by the scaffold at this base success at H0, points, or more.
pub const UNLOCK_H0: f64 = 10.0;
/// The share of each HDC arm's trained environments (every seed) that must be floor
/// environments for HDC's regime to be present.
pub const FLOOR_SHARE: f64 = 0.2;
/// Harness probes on floor sources the scaffold's advantage is measured over, at least.
pub const REGIME_PROBES: usize = 3;
