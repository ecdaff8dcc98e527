//! The one shape of "this value is not acceptable" shared by every crate, and the one
//! convention for configurations: serde defaults, unknown fields refused, and [`Validate`]
//! once at the edge, after which a [`Checked`] value is trusted everywhere downstream.

use std::fmt;
use std::ops::Deref;

/// A well-formed value that is not acceptable: which field, what would be accepted, what was
/// given. Every crate's error enum wraps it (`Config(InvalidValue)`) rather than repeating
/// the three strings, and prefixes the field with where it sits (`model.patch`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: expected {expected}, found {found}")]
pub struct InvalidValue {
    /// The offending field, dotted from the root of its configuration (`model.patch`).
    pub field: String,
    /// What would be accepted.
    pub expected: String,
    /// What was given.
    pub found: String,
}

impl InvalidValue {
    /// An invalid `field`: `expected` would be accepted, `found` was given.
    pub fn new(
        field: impl Into<String>,
        expected: impl Into<String>,
        found: impl fmt::Display,
    ) -> Self {
        Self {
            field: field.into(),
            expected: expected.into(),
            found: found.to_string(),
        }
    }

    /// The same error one level down: `field` becomes `prefix.field`.
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = format!("{prefix}.{}", self.field);
        self
    }
}

/// A configuration that can check itself. `validate` names the first bad field; [`checked`]
/// turns a valid value into a [`Checked`] one that code downstream need not check again.
///
/// [`checked`]: Validate::checked
pub trait Validate: Sized {
    /// Check every field once.
    fn validate(&self) -> Result<(), InvalidValue>;

    /// The value, proven valid.
    fn checked(self) -> Result<Checked<Self>, InvalidValue> {
        self.validate()?;
        Ok(Checked(self))
    }
}

/// A value that passed [`Validate::validate`]. Read it through `Deref`; it cannot be built
/// or changed without going through the check again.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked<T>(T);

impl<T> Checked<T> {
    /// The value, no longer proven valid once changed.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Checked<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: serde::Serialize> serde::Serialize for Checked<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Width(u32);
    impl Validate for Width {
        fn validate(&self) -> Result<(), InvalidValue> {
            if self.0 == 0 {
                return Err(InvalidValue::new("width", "at least 1", self.0));
            }
            Ok(())
        }
    }

    #[test]
    fn checked_values_are_valid_and_errors_name_the_field() {
        assert_eq!(Width(3).checked().unwrap().0.0, 3);
        let e = Width(0).checked().unwrap_err().within("model");
        assert_eq!(e.field, "model.width");
        assert_eq!(
            e.to_string(),
            "field `model.width`: expected at least 1, found 0"
        );
    }
}
