//! serde's error messages in a user's words. serde says "invalid value: integer `-1`, expected
//! usize at line 1 column 8" and "invalid type: unit variant, expected newtype variant": Rust
//! type names, serde's data model and a position in JSON the user may never have seen (the
//! Python binding writes it). Every place that turns a serde error into a message for a
//! person (file readers, config parsers, the binding) passes it through [`plain_serde_message`],
//! so the rewording is done once, and tested against serde's real messages.

use crate::InvalidValue;

/// `message` (the `Display` of a serde / serde_json error) in the `expected ..., found ...`
/// words the rest of envdist uses: Rust integer types as their inclusive ranges (`u32` ->
/// "an integer from 0 to 4294967295"), serde's data model as JSON (`map` -> "an object",
/// `sequence` -> "a list"), enum variants as options, and the position in the JSON text
/// dropped. A message of another shape is returned unchanged but for the position.
pub fn plain_serde_message(message: &str) -> String {
    let message = strip_position(message);
    // The serde part may follow a prefix of the caller's (`field `k`: invalid value: ...`).
    let start = [
        "invalid type: ",
        "invalid value: ",
        "invalid length ",
        "unknown variant ",
        "unknown field ",
    ]
    .iter()
    .filter_map(|m| message.find(m))
    .min()
    .unwrap_or(0);
    let (prefix, serde_part) = message.split_at(start);
    format!("{prefix}{}", serde_words(serde_part))
}

/// A serde error at `field` as an [`InvalidValue`]: serde's expected and found in words
/// ([`plain_serde_message`]); an unknown field as the field names it accepts; a missing field
/// as that field; any other message as what was found.
pub fn invalid_from_serde(field: impl Into<String>, serde_message: &str) -> InvalidValue {
    let field = field.into();
    let plain = plain_serde_message(serde_message);
    if let Some((expected, found)) = plain
        .strip_prefix("expected ")
        .and_then(|r| r.rsplit_once(", found "))
    {
        return InvalidValue::new(field, expected, found);
    }
    if let Some((name, accepted)) = plain
        .strip_prefix("unknown field ")
        .and_then(|r| r.split_once(": expected "))
    {
        let accepted = accepted.strip_prefix("one of ").unwrap_or(accepted);
        return InvalidValue::new(
            field,
            format!("one of the fields {accepted}"),
            format!("{name}, an unknown field"),
        );
    }
    if let Some(name) = plain.strip_prefix("missing field ") {
        return InvalidValue::new(field, format!("the field {name}"), "none");
    }
    InvalidValue::new(field, "a value of the documented type", plain)
}

/// One serde message, from its start, in words.
fn serde_words(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((found, expected)) = rest.split_once(", expected ")
        {
            return format!(
                "expected {}, found {}",
                expected_words(expected),
                found_words(found)
            );
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ")
        && let Some((n, expected)) = rest.split_once(", expected ")
    {
        return format!("expected {}, found {n} elements", expected_words(expected));
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let (name, options) = rest.split_once(", expected ").unwrap_or((rest, ""));
        return if options.is_empty() || rest.contains("there are no variants") {
            format!("unknown option {}", quoted(name))
        } else {
            // serde lists three or more as "one of `a`, `b`, `c`" and two as "`a` or `b`".
            format!(
                "expected {}, found {}",
                options.replace('`', ""),
                quoted(name)
            )
        };
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        return match rest.split_once(", expected ") {
            Some((name, options)) => format!(
                "unknown field {}: expected {}",
                quoted(name),
                options.replace('`', "")
            ),
            None => format!(
                "unknown field {}: {}",
                quoted(rest.split(',').next().unwrap_or(rest)),
                "this value takes no fields"
            ),
        };
    }
    message.to_string()
}

/// serde_json appends " at line L column C"; a position in JSON text the binding or a config
/// writer made means nothing to the user (file readers say the file and line themselves).
fn strip_position(message: &str) -> &str {
    if let Some(at) = message.rfind(" at line ") {
        let tail = &message[at + " at line ".len()..];
        let mut parts = tail.splitn(2, " column ");
        if let (Some(l), Some(c)) = (parts.next(), parts.next())
            && !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_digit())
            && !c.is_empty()
            && c.bytes().all(|b| b.is_ascii_digit())
        {
            return &message[..at];
        }
    }
    message
}

/// `` `name` `` as `"name"`.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.trim().trim_matches('`'))
}

/// What serde says was expected, in JSON terms.
fn expected_words(expected: &str) -> String {
    let e = expected.trim();
    let int_range = |lo: i128, hi: i128| format!("an integer from {lo} to {hi}");
    match e {
        "u8" => int_range(0, u8::MAX.into()),
        "u16" => int_range(0, u16::MAX.into()),
        "u32" => int_range(0, u32::MAX.into()),
        "u64" | "usize" => int_range(0, u64::MAX.into()),
        "u128" => "a non-negative integer".into(),
        "i8" => int_range(i8::MIN.into(), i8::MAX.into()),
        "i16" => int_range(i16::MIN.into(), i16::MAX.into()),
        "i32" => int_range(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => int_range(i64::MIN.into(), i64::MAX.into()),
        "i128" => "an integer".into(),
        "f32" => "a number".into(),
        "f64" => "a number".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a string" | "a borrowed string" | "string" => "a string".into(),
        "a char" | "char" => "a single character".into(),
        "a sequence" | "sequence" => "a list".into(),
        "a map" | "map" => "an object".into(),
        "unit" => "null".into(),
        "newtype variant" => "an option with its value, as {\"name\": value}".into(),
        "unit variant" => "an option's name alone".into(),
        "struct variant" | "tuple variant" => {
            "an option with its fields, as {\"name\": {...}}".into()
        }
        "variant identifier" | "field identifier" => "a name".into(),
        _ => {
            if let Some(name) = e.strip_prefix("struct ") {
                return format!("an object ({name})");
            }
            if let Some(name) = e.strip_prefix("internally tagged enum ") {
                return format!("an object with a `kind` field ({name})");
            }
            if let Some(name) = e.strip_prefix("enum ") {
                return format!("one of the options of {name}");
            }
            if let Some(n) = e.strip_prefix("a tuple of size ") {
                return format!("a list of {n} elements");
            }
            if let Some(n) = e
                .strip_prefix("tuple of ")
                .and_then(|t| t.strip_suffix(" elements"))
            {
                return format!("a list of {n} elements");
            }
            e.to_string()
        }
    }
}

/// What serde says was found (its `Unexpected`), in JSON terms.
fn found_words(found: &str) -> String {
    let f = found.trim();
    for prefix in ["integer ", "floating point ", "boolean ", "char "] {
        if let Some(v) = f.strip_prefix(prefix) {
            return v.trim_matches('`').to_string();
        }
    }
    if let Some(s) = f.strip_prefix("string ") {
        return s.to_string();
    }
    match f {
        "null" | "unit value" | "unit" => "null".into(),
        "map" => "an object".into(),
        "sequence" => "a list".into(),
        "unit variant" => "an option's name alone".into(),
        "newtype variant" | "tuple variant" | "struct variant" => "an option with a value".into(),
        "newtype struct" | "option" => "a value".into(),
        _ => f.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Config {
        #[serde(default)]
        k: usize,
        #[serde(default)]
        scale: u32,
        #[serde(default)]
        weight: f32,
        #[serde(default)]
        flag: bool,
        #[serde(default)]
        tie_break: Option<TieBreak>,
        #[serde(default)]
        optimizer: Option<Optimizer>,
        #[serde(default)]
        pair: Option<(u8, u8)>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum TieBreak {
        LowestIndex,
        Seeded(u64),
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Optimizer {
        Lazy,
        Stochastic { epsilon: f32 },
    }

    fn message(json: &str) -> String {
        let e = serde_json::from_str::<Config>(json)
            .unwrap_err()
            .to_string();
        plain_serde_message(&e)
    }

    /// serde's own messages, produced by deserialising, so that a change in serde's wording
    /// fails here rather than leaking to a user.
    #[test]
    fn serde_messages_in_words() {
        for (json, want) in [
            (
                r#"{"k": -1}"#,
                "expected an integer from 0 to 18446744073709551615, found -1",
            ),
            (
                r#"{"k": 1e30}"#,
                "expected an integer from 0 to 18446744073709551615, found 1e+30",
            ),
            (
                r#"{"scale": 5000000000}"#,
                "expected an integer from 0 to 4294967295, found 5000000000",
            ),
            (
                r#"{"k": "3"}"#,
                "expected an integer from 0 to 18446744073709551615, found \"3\"",
            ),
            (r#"{"weight": "x"}"#, "expected a number, found \"x\""),
            (r#"{"flag": 1}"#, "expected true or false, found 1"),
            (
                r#"{"tie_break": "seeded"}"#,
                "expected an option with its value, as {\"name\": value}, found an option's name alone",
            ),
            (
                r#"{"tie_break": "random"}"#,
                "expected lowest_index or seeded, found \"random\"",
            ),
            (
                r#"{"optimizer": {"kind": "greedy"}}"#,
                "expected lazy or stochastic, found \"greedy\"",
            ),
            (
                r#"{"kk": 1}"#,
                "unknown field \"kk\": expected one of k, scale, weight, flag, tie_break, optimizer, pair",
            ),
            (
                r#"{"pair": [1]}"#,
                "expected a list of 2 elements, found 1 elements",
            ),
            (
                r#"{"k": {}}"#,
                "expected an integer from 0 to 18446744073709551615, found an object",
            ),
            (r#""x""#, "expected an object (Config), found \"x\""),
        ] {
            assert_eq!(message(json), want, "{json}");
        }
        for m in [
            message(r#"{"k": -1}"#),
            message(r#"{"tie_break": "seeded"}"#),
            message(r#"{"k": 1e30}"#),
        ] {
            for word in ["usize", "variant", "line 1 column", "u64"] {
                assert!(!m.contains(word), "{m}");
            }
        }
    }

    #[test]
    fn serde_errors_as_invalid_values() {
        let e = serde_json::from_str::<Config>(r#"{"k": -1}"#).unwrap_err();
        let v = invalid_from_serde("k", &e.to_string());
        assert_eq!(
            v.to_string(),
            "field `k`: expected an integer from 0 to 18446744073709551615, found -1"
        );
        let e = serde_json::from_str::<Config>(r#"{"kk": 1}"#).unwrap_err();
        let v = invalid_from_serde(".", &e.to_string());
        assert_eq!(v.found, "\"kk\", an unknown field");
        assert!(v.expected.starts_with("one of the fields k, scale"), "{v}");
        let v = invalid_from_serde("env", "missing field `env`");
        assert_eq!(
            v.to_string(),
            "field `env`: expected the field `env`, found none"
        );
    }

    #[test]
    fn other_messages_pass_unchanged_but_for_the_position() {
        assert_eq!(
            plain_serde_message("missing field `env` at line 1 column 40"),
            "missing field `env`"
        );
        assert_eq!(
            plain_serde_message("field `x`: expected 1"),
            "field `x`: expected 1"
        );
        assert_eq!(
            plain_serde_message("ends at line 3"),
            "ends at line 3",
            "only a real position is dropped"
        );
    }
}
