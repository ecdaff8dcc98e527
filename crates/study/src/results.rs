//! `results.json` helpers: the paper's relative-gain statistic over a record's scores (the
//! record types themselves are [`crate::model`]'s).

use crate::model::SplitScores;

/// Mean over the four columns of the relative gain `(x - base) / base`, skipping columns where
/// either side is missing or the base is zero (a relative gain over zero is undefined): the
/// paper's "average relative gain". See [`super::analysis`] for the pooled gain beside it.
pub fn relative_gain(scores: &SplitScores, base: &SplitScores) -> Option<f32> {
    let gains: Vec<f32> = scores
        .columns()
        .iter()
        .zip(base.columns())
        .filter_map(|(x, b)| match (x, b) {
            (Some(x), Some(b)) if b > 0.0 => Some((x - b) / b),
            _ => None,
        })
        .collect();
    (!gains.is_empty()).then(|| gains.iter().sum::<f32>() / gains.len() as f32)
}
