//! README's claims table is the committed cpu record's: every primary claim once, with the
//! record's difference, interval and verdict, so a new record cannot land beside old prose.

use serde_json::Value;

use crate::tidy::repo_root;

/// The header README's claims table starts with.
const HEADER: &str = "| claim | difference [95% CI] | verdict | testable here";

/// README's claims rows: (claim, difference, verdict) cells, markdown emphasis removed.
fn readme_rows(readme: &str) -> Vec<(String, String, String)> {
    let mut lines = readme.lines().skip_while(|l| !l.starts_with(HEADER));
    assert!(
        lines.next().is_some(),
        "README.md has no claims table (a line starting `{HEADER}`)"
    );
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.replace('*', "").trim().to_string())
                .collect();
            assert!(cells.len() >= 4, "README claims row has too few cells: {l}");
            (cells[0].clone(), cells[1].clone(), cells[2].clone())
        })
        .collect()
}

/// A difference and its interval as README writes them: one decimal, signed, a true minus.
fn written(d: &Value) -> String {
    let f = |k: &str| format!("{:+.1}", d[k].as_f64().expect("a number")).replace('-', "−");
    format!("{} [{}, {}]", f("estimate"), f("lo"), f("hi"))
}

fn verdict_words(v: &str) -> String {
    v.replace('_', " ")
}

#[test]
fn the_readme_claims_table_is_the_committed_record() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("docs/experiments/cpu/results.json")).unwrap(),
    )
    .unwrap();
    let rows = readme_rows(&readme);
    let primary: Vec<&Value> = record["analysis"]["claims"]
        .as_array()
        .expect("analysis.claims")
        .iter()
        .filter(|c| c["primary"] == Value::Bool(true))
        .collect();
    assert_eq!(
        rows.len(),
        primary.len(),
        "README's claims table has {} rows; the record has {} primary claims",
        rows.len(),
        primary.len()
    );
    for claim in primary {
        let statement = claim["statement"].as_str().unwrap();
        let row = rows
            .iter()
            .find(|r| r.0 == statement)
            .unwrap_or_else(|| panic!("README's claims table has no row `{statement}`"));
        assert_eq!(
            row.1,
            written(&claim["difference"]),
            "README's difference for `{statement}` is not the record's"
        );
        let verdict = verdict_words(claim["verdict"].as_str().unwrap());
        assert!(
            row.2.starts_with(&verdict),
            "README's verdict for `{statement}` is `{}`; the record's is `{verdict}`",
            row.2
        );
    }
}

#[test]
fn the_claims_check_reads_a_table() {
    let text = "intro\n| claim | difference [95% CI] | verdict | testable here |\n|---|---|---|---|\n\
                | A beats B | −1.1 [−3.1, +0.8] | **untestable here** | no: x |\n\nafter\n";
    let rows = readme_rows(text);
    assert_eq!(
        rows,
        vec![(
            "A beats B".to_string(),
            "−1.1 [−3.1, +0.8]".to_string(),
            "untestable here".to_string()
        )]
    );
    let d = serde_json::json!({"estimate": -1.1095, "lo": -3.06, "hi": 0.84});
    assert_eq!(written(&d), "−1.1 [−3.1, +0.8]");
}
