//! Segmenters: turn a trajectory into its sequence of atomic abilities.

use envdist_core::Trajectory;

use crate::llm::SegmentError;

/// Cuts a trajectory into the ordered sequence of atomic abilities it exercised.
///
/// Implementations must be deterministic for a given trajectory if profiles are to be
/// reproducible (an LLM at temperature 0 is close enough; its answers are cached nowhere).
pub trait Segmenter: Send + Sync {
    /// A short name recorded in outputs (`tags`, `llm:<model>`).
    fn name(&self) -> &str;
    /// The ability sequence of `trajectory`.
    fn segment(&self, trajectory: &Trajectory) -> Result<Vec<String>, SegmentError>;
}

/// The default segmenter: reads the atomic ability tags the environment attached to each step.
///
/// Tags of one step are taken in their recorded order (a tag repeated within the step counts
/// once). With `collapse_repeats` (the default), a run of identical consecutive abilities is
/// one segment: ten `navigate` steps in a corridor are one navigation segment, as an annotator
/// cutting the trajectory into skills would write it, so transitions measure how abilities
/// follow each other rather than how long each lasts. Steps without tags add nothing and do
/// not break a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagSegmenter {
    /// Merge runs of the same consecutive ability into one segment.
    pub collapse_repeats: bool,
}

impl Default for TagSegmenter {
    fn default() -> Self {
        Self {
            collapse_repeats: true,
        }
    }
}

impl Segmenter for TagSegmenter {
    fn name(&self) -> &str {
        if self.collapse_repeats {
            "tags"
        } else {
            "tags-raw"
        }
    }

    fn segment(&self, trajectory: &Trajectory) -> Result<Vec<String>, SegmentError> {
        let mut out: Vec<String> = Vec::new();
        for step in &trajectory.steps {
            for (i, tag) in step.abilities.iter().enumerate() {
                if step.abilities[..i].contains(tag) {
                    continue;
                }
                if self.collapse_repeats && out.last() == Some(tag) {
                    continue;
                }
                out.push(tag.clone());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::traj;

    #[test]
    fn tags_are_read_in_order_and_runs_collapse() {
        let t = traj(
            "toy/walk",
            &[
                &["navigate"],
                &["navigate"],
                &[],
                &["navigate", "pick-up", "navigate"],
                &["pick-up"],
                &["navigate"],
            ],
        );
        let s = TagSegmenter::default().segment(&t).unwrap();
        assert_eq!(s, ["navigate", "pick-up", "navigate"]);
        let raw = TagSegmenter {
            collapse_repeats: false,
        }
        .segment(&t)
        .unwrap();
        assert_eq!(
            raw,
            [
                "navigate", "navigate", "navigate", "pick-up", "pick-up", "navigate"
            ]
        );
    }
}
