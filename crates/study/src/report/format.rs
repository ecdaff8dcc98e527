//! How numbers are written in the report's cells.

use crate::model::Interval;

/// `12.3 [10.1, 14.5]`.
pub fn ci(i: &Interval) -> String {
    format!("{:.1} [{:.1}, {:.1}]", i.estimate, i.lo, i.hi)
}

/// `+1.2 [-0.3, +2.8]`.
pub fn ci_signed(i: &Interval) -> String {
    format!("{:+.1} [{:+.1}, {:+.1}]", i.estimate, i.lo, i.hi)
}

/// `f` of the interval, or `–` when there is none.
pub fn opt(i: &Option<Interval>, f: fn(&Interval) -> String) -> String {
    i.as_ref().map_or("–".into(), f)
}

/// `+12.3% [+4.5, +20.1]`.
pub fn percent(i: &Interval) -> String {
    format!("{:+.1}% [{:+.1}, {:+.1}]", i.estimate, i.lo, i.hi)
}

/// The named parts that miss the keep target ([`crate::preconditions::targets::KEEP`]) at
/// their estimate while their interval still holds it ("within noise" of the target), or
/// "none".
pub fn within_noise(parts: &[(&str, &Option<Interval>)]) -> String {
    let keep = crate::preconditions::targets::KEEP;
    let names: Vec<&str> = parts
        .iter()
        .filter_map(|(name, i)| {
            let i = i.as_ref()?;
            (i.estimate < keep && i.hi >= keep).then_some(*name)
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(estimate: f64, lo: f64, hi: f64) -> Option<Interval> {
        Some(Interval {
            estimate,
            lo,
            hi,
            se: (hi - lo) / 4.0,
            p: 1.0,
        })
    }

    /// A part that misses the keep target only at its estimate is within noise; one that
    /// meets it, one whose whole interval misses it, and one not measured are not.
    #[test]
    fn within_noise_names_only_the_parts_whose_interval_holds_the_keep_target() {
        let ood = interval(-1.7, -4.3, 0.5);
        let met = interval(-0.8, -2.8, 0.7);
        let missed = interval(-3.0, -4.5, -1.5);
        assert_eq!(
            within_noise(&[("untrained", &met), ("OOD", &ood), ("gone", &None)]),
            "OOD"
        );
        assert_eq!(within_noise(&[("missed", &missed), ("met", &met)]), "none");
    }
}
