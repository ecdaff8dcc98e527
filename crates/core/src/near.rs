//! The ids nearest to a misspelt one, for "unknown id" messages: the binding's `make`, the
//! profiler's unknown log environments and any other place a user types an environment id
//! share one notion of "near" (edit distance on letters and digits), so their suggestions agree.

/// Up to five of `ids` nearest to `id`, nearest first: by edit distance between their letters
/// and digits (case and punctuation ignored), of the whole id or of family plus variant (the
/// two parts of `family/variant`, so that `tictactoe/classic` finds `tic-tac-toe/classic`
/// and a family named by its first word, `count/classic`, finds `count-objects/classic`).
pub fn nearest_ids<'a>(id: &str, ids: &[&'a str]) -> Vec<&'a str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (family, variant) = id.split_once('/').unwrap_or((id, ""));
    let (nid, nfam, nvar) = (norm(id), norm(family), norm(variant));
    let mut scored: Vec<(usize, usize, &str)> = ids
        .iter()
        .map(|&cand| {
            let (f, v) = cand.split_once('/').unwrap_or((cand, ""));
            let nf = norm(f);
            // A family named by its first word (`count` for `count-objects`) is near too.
            let prefix = !nfam.is_empty() && nf.starts_with(&nfam[..]);
            let fam = edit_distance(&nfam, &nf).min(if prefix { 1 } else { usize::MAX });
            let parts = fam + edit_distance(&nvar, &norm(v));
            // The whole id (a misplaced slash), or family and variant apart; ties go to the
            // nearer family.
            (edit_distance(&nid, &norm(cand)).min(parts), fam, cand)
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, _, c)| c).collect()
}

/// Levenshtein distance between two character sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: [&str; 6] = [
        "maze/classic",
        "maze/noise",
        "tic-tac-toe/classic",
        "count-objects/classic",
        "sokoban/classic",
        "snake/noise",
    ];

    #[test]
    fn misspellings_find_their_id_first() {
        assert_eq!(nearest_ids("maze/clasic", &IDS)[0], "maze/classic");
        assert_eq!(
            nearest_ids("tictactoe/classic", &IDS)[0],
            "tic-tac-toe/classic"
        );
        assert_eq!(
            nearest_ids("count/classic", &IDS)[0],
            "count-objects/classic"
        );
        assert_eq!(nearest_ids("Maze/Noise", &IDS)[0], "maze/noise");
        assert_eq!(nearest_ids("mazeclassic", &IDS)[0], "maze/classic");
        assert_eq!(nearest_ids("x", &IDS).len(), 5);
        assert!(nearest_ids("x", &[]).is_empty());
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        let d = |a: &str, b: &str| {
            edit_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("abc", "abc"), 0);
    }
}
