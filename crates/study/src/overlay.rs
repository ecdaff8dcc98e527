//! The study's one override mechanism: a JSON object of fields merged over a value. A
//! `--config` file is an overlay of a preset ([`crate::ExperimentConfig::from_overrides`]);
//! `conflict-estimates`' estimates are overlays of the reference gradient configuration.

use envdist_core::InvalidValue;
use serde::Serialize;

/// `base` overlaid with `overrides`, a JSON object of any of its fields: objects merge field by
/// field (an overlay can change one field of a nested section), anything else replaces. The
/// study's one override mechanism: `--config` files and `conflict-estimates`' estimates are
/// overlays. `source` names where the overrides come from in errors, with the bad field's path.
pub fn overlay<T: Serialize + serde::de::DeserializeOwned>(
    base: &T,
    overrides: &serde_json::Value,
    source: &str,
) -> Result<T, InvalidValue> {
    let mut value = serde_json::to_value(base)
        .map_err(|e| InvalidValue::new(source, "a serialisable configuration", e))?;
    if !overrides.is_object() {
        return Err(InvalidValue::new(
            source,
            "a JSON object of config fields",
            overrides,
        ));
    }
    merge(&mut value, overrides);
    serde_path_to_error::deserialize(value).map_err(|e| {
        InvalidValue::new(
            format!("{source}: {}", e.path()),
            "a field of the configuration, of its type",
            e.inner(),
        )
    })
}

fn merge(base: &mut serde_json::Value, patch: &serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}
