//! Segmenters: turn a trajectory into its sequence of atomic abilities.

use envdist_core::{InvalidValue, Trajectory};

/// Why a trajectory could not be segmented.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    /// A configuration value was missing or unusable.
    #[error("LLM segmenter config: {0}")]
    Config(#[from] InvalidValue),
    /// The endpoint could not be reached or answered with an HTTP error.
    #[error("LLM endpoint {url}: {message} (gave up after {attempts} attempt(s))")]
    Http {
        /// The request URL.
        url: String,
        /// Requests made.
        attempts: u32,
        /// The last failure.
        message: String,
    },
    /// The endpoint answered, but not with a usable ability list.
    #[error(
        "LLM endpoint {url}: malformed answer after {attempts} attempt(s): {reason}; expected a JSON array of ability names; last answer: {answer:?}"
    )]
    Malformed {
        /// The request URL.
        url: String,
        /// Requests made.
        attempts: u32,
        /// What was wrong with the last answer.
        reason: String,
        /// The last answer's text (truncated to 300 characters).
        answer: String,
    },
}

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
/// once). With `collapse_repeats` (the default), a run of consecutive steps carrying the same
/// set of tags is one segment, and a tag equal to the segment just emitted is not repeated:
/// ten `navigate` steps in a corridor (or ten `navigate` + `wall-follow` steps) are one
/// navigation segment, as an annotator cutting the trajectory into skills would write it, so
/// transitions measure how abilities follow each other rather than how long each lasts.
/// Steps without tags add nothing and do not break a run.
///
/// Tags listed in `ignore` are dropped before anything else (default: none). This models an
/// annotator that cannot see some property, e.g. the suite's `mirrored-control` tag that marks
/// a conflict twin: with it ignored, what remains is the game's own abilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagSegmenter {
    collapse_repeats: bool,
    ignore: Vec<String>,
    name: String,
}

impl Default for TagSegmenter {
    fn default() -> Self {
        Self::new(true, Vec::new())
    }
}

impl TagSegmenter {
    /// A tag segmenter; its name is `tags` (`tags-raw` without collapsing), with
    /// `-ignoring(a,b)` appended when tags are ignored.
    pub fn new(collapse_repeats: bool, mut ignore: Vec<String>) -> Self {
        ignore.sort();
        ignore.dedup();
        let mut name = if collapse_repeats { "tags" } else { "tags-raw" }.to_string();
        if !ignore.is_empty() {
            name = format!("{name}-ignoring({})", ignore.join(","));
        }
        Self {
            collapse_repeats,
            ignore,
            name,
        }
    }

    /// Whether runs of the same tag set are merged into one segment.
    pub fn collapse_repeats(&self) -> bool {
        self.collapse_repeats
    }

    /// The tags dropped, sorted.
    pub fn ignore(&self) -> &[String] {
        &self.ignore
    }
}

impl Segmenter for TagSegmenter {
    fn name(&self) -> &str {
        &self.name
    }

    fn segment(&self, trajectory: &Trajectory) -> Result<Vec<String>, SegmentError> {
        let mut out: Vec<String> = Vec::new();
        let mut previous: Vec<&String> = Vec::new();
        for step in &trajectory.steps {
            let tags: Vec<&String> = step
                .abilities
                .iter()
                .enumerate()
                .filter(|(i, t)| !step.abilities[..*i].contains(t) && !self.ignore.contains(t))
                .map(|(_, t)| t)
                .collect();
            if tags.is_empty() {
                continue;
            }
            if self.collapse_repeats {
                let mut set = tags.clone();
                set.sort();
                if set == previous {
                    continue;
                }
                previous = set;
            }
            for tag in tags {
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
        let raw = TagSegmenter::new(false, vec![]).segment(&t).unwrap();
        assert_eq!(
            raw,
            [
                "navigate", "navigate", "navigate", "pick-up", "pick-up", "navigate"
            ]
        );
        // A run of steps with the same tag set is one segment; a new set starts a new one.
        let corridor = traj(
            "toy/walk",
            &[
                &["navigate", "wall-follow"],
                &["wall-follow", "navigate"],
                &["navigate", "wall-follow"],
                &["navigate"],
                &["navigate", "wall-follow"],
            ],
        );
        let s = TagSegmenter::default().segment(&corridor).unwrap();
        assert_eq!(s, ["navigate", "wall-follow", "navigate", "wall-follow"]);
        let ignoring = TagSegmenter::new(true, vec!["wall-follow".into()]);
        assert_eq!(ignoring.name(), "tags-ignoring(wall-follow)");
        assert_eq!(ignoring.segment(&corridor).unwrap(), ["navigate"]);
    }
}
