//! A statistic with its interval, and the rules that turn intervals and p-values into verdicts.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95% interval plus z for 80% power: a true difference of `MDE_Z x SE`
/// would be detected four times in five.
pub const MDE_Z: f64 = 1.96 + 0.8416;

/// A statistic with its 95% percentile-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The statistic on the data as observed.
    pub estimate: f64,
    /// 2.5th percentile of the replicates.
    pub lo: f64,
    /// 97.5th percentile of the replicates.
    pub hi: f64,
    /// Standard deviation of the replicates (the statistic's standard error).
    pub se: f64,
    /// Two-sided bootstrap p-value of "the statistic is zero": twice the smaller share of
    /// replicates on either side of zero (at least one replicate's worth).
    #[serde(default = "one")]
    pub p: f64,
}

fn one() -> f64 {
    1.0
}

impl Interval {
    /// The smallest true difference this run would detect with 80% power at the 5% level.
    pub fn mde(&self) -> f64 {
        MDE_Z * self.se
    }

    /// The interval scaled (e.g. to percentage points).
    pub fn scaled(&self, k: f64) -> Self {
        let (a, b) = (self.lo * k, self.hi * k);
        Self {
            estimate: self.estimate * k,
            lo: a.min(b),
            hi: a.max(b),
            se: self.se * k.abs(),
            p: self.p,
        }
    }
}

/// What a run says of a claim "the difference is positive": supported, refuted, equivalent
/// (no difference beyond a margin named before the run) or inconclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The difference is positive.
    Supported,
    /// The difference is negative.
    Refuted,
    /// Neither a difference nor its absence shown: within noise.
    Inconclusive,
    /// No difference beyond the equivalence margin (two one-sided tests): shown absent.
    Equivalent,
}

impl Verdict {
    /// The verdict on "positive" from an interval.
    pub fn of(i: &Interval) -> Self {
        if i.lo > 0.0 {
            Verdict::Supported
        } else if i.hi < 0.0 {
            Verdict::Refuted
        } else {
            Verdict::Inconclusive
        }
    }

    /// The verdict from (multiplicity-adjusted) p-values at the 5% level: a difference when
    /// `p` says so (its sign from the estimate), else no difference beyond the margin when the
    /// equivalence p-value says so, else inconclusive.
    pub fn of_tests(estimate: f64, p: f64, p_equivalence: Option<f64>) -> Self {
        match Self::of_p(estimate, p) {
            Verdict::Inconclusive if p_equivalence.is_some_and(|q| q < 0.05) => Verdict::Equivalent,
            v => v,
        }
    }

    /// The verdict on "positive" from a (multiplicity-adjusted) p-value and the estimate's
    /// sign, at the 5% level.
    pub fn of_p(estimate: f64, p: f64) -> Self {
        if p >= 0.05 {
            Verdict::Inconclusive
        } else if estimate > 0.0 {
            Verdict::Supported
        } else {
            Verdict::Refuted
        }
    }

    /// The word in tables.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive (within noise)",
            Verdict::Equivalent => "equivalent (no difference beyond the margin)",
        }
    }
}
