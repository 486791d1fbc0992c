//! Fields: properties that vary with the sweep on their own.
//!
//! A fleet with `devices = n` over a million values of `n` would be a
//! million workload variants if every property that names a parameter made
//! one. Properties the compiler knows to be independent (the runtime checks
//! each on its own, nothing else is derived from them) are stored instead as
//! a [`Field`]: the property's plan value at each combination of the values
//! of the parameters it names, set into the variant when a point is
//! materialised. A block's cost is then the product of the parameters its
//! other properties name plus the sum of its fields' values, not the product
//! of everything.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::sweep::variant_index;
use crate::{Parameter, Variants};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Where the value goes in the block's plan node, as JSON pointers
    /// (RFC 6901): `/config/fleet/devices`, and `/shard/count` when the
    /// property counts the workload's shard units.
    pub pointers: Vec<String>,
    /// Names of the parameters the property names, in parameter order.
    pub parameters: Vec<String>,
    /// The property's plan value at each combination of those parameters'
    /// values, the first parameter outermost (as [`Variants::variants`]).
    pub values: Vec<Json>,
}

/// A parameter's position among the plan's and its number of values.
fn shape(parameters: &[Parameter]) -> impl Fn(&str) -> Option<(usize, usize)> + '_ {
    |name| {
        let position = parameters.iter().position(|p| p.name == name)?;
        Some((position, parameters[position].values.len()))
    }
}

impl Field {
    /// The property's pointer, naming the field in messages.
    pub fn name(&self) -> &str {
        self.pointers.first().map_or("", String::as_str)
    }

    /// The value where each parameter takes the value at `indices`.
    pub fn at(&self, parameters: &[Parameter], indices: &[usize]) -> Option<&Json> {
        self.values
            .get(variant_index(&self.parameters, shape(parameters), indices)?)
    }
}

/// Sets `value` at `pointer` in `node`; `false` when the pointer names
/// nothing there (the fields replace properties, they never add any).
fn set(node: &mut Json, pointer: &str, value: &Json) -> bool {
    match slot(node, pointer) {
        Some(slot) => {
            *slot = value.clone();
            true
        }
        None => false,
    }
}

/// `Json::pointer_mut` without its two allocations per token (its
/// unescaping of `~1` and `~0`) when a token has no `~`, as every pointer a
/// compiled plan holds: a million field values set at a few pointers each
/// spent a tenth of preflight there.
fn slot<'a>(node: &'a mut Json, pointer: &str) -> Option<&'a mut Json> {
    if pointer.is_empty() {
        return Some(node);
    }
    pointer.strip_prefix('/')?.split('/').try_fold(node, |target, token| {
        let token: Cow<'_, str> = if token.contains('~') {
            token.replace("~1", "/").replace("~0", "~").into()
        } else {
            token.into()
        };
        match target {
            Json::Object(map) => map.get_mut(token.as_ref()),
            // RFC 6901 array indices: digits, no sign, no leading zero.
            Json::Array(list) if token == "0" || !token.starts_with(['0', '+']) => {
                token.parse::<usize>().ok().and_then(move |i| list.get_mut(i))
            }
            _ => None,
        }
    })
}

impl<T: Clone + Serialize + DeserializeOwned> Variants<T> {
    /// The block as it runs where each parameter takes the value at
    /// `indices` (value indices of every parameter of the plan, in order):
    /// its variant with its fields' values set. `None` when a field's value
    /// does not fit the property (a plan that was edited by hand).
    pub fn at(&self, parameters: &[Parameter], indices: &[usize]) -> Option<Cow<'_, T>> {
        let base = self.base_at(parameters, indices)?;
        if self.fields.is_empty() {
            return Some(Cow::Borrowed(base));
        }
        let values: Vec<(&Field, &Json)> = self
            .fields
            .iter()
            .map(|f| Some((f, f.at(parameters, indices)?)))
            .collect::<Option<_>>()?;
        with_values(base, &values).map(Cow::Owned)
    }

    /// The variant at `indices` without its fields: what does not depend on
    /// them (a workload's name, origin and window) read without a copy.
    pub fn base_at(&self, parameters: &[Parameter], indices: &[usize]) -> Option<&T> {
        self.variants
            .get(variant_index(&self.parameters, shape(parameters), indices)?)
    }

    /// Every variant (borrowed), and every variant with each value of each
    /// field in turn (owned, the other fields at their first values): every value of every
    /// property the block takes, in every combination a check of one
    /// property with the others needs, since a field is independent of the
    /// other fields. `Err` names the field whose value does not fit.
    pub fn each_distinct(&self) -> impl Iterator<Item = Result<Cow<'_, T>, FieldMisfit>> + '_ {
        let plain = self.variants.iter().map(|v| Ok(Cow::Borrowed(v)));
        let varied = self.variants.iter().flat_map(move |base| {
            self.fields.iter().flat_map(move |field| {
                // The variant's JSON is made once per field: each value is
                // set into it in turn and read from it, not copied.
                let mut node = serde_json::to_value(base).ok();
                field.values.iter().enumerate().skip(1).map(move |(i, value)| {
                    node.as_mut()
                        .and_then(|node| {
                            let set_everywhere = field.pointers.iter().all(|p| set(node, p, value));
                            set_everywhere.then(|| T::deserialize(&*node).ok()).flatten()
                        })
                        .map(Cow::Owned)
                        .ok_or_else(|| FieldMisfit {
                            field: field.name().to_owned(),
                            value: i,
                        })
                })
            })
        });
        plain.chain(varied)
    }

    /// The values the fields that set `pointer` give it (beside the value
    /// each variant holds there): what the property can be, without
    /// materialising a block per value.
    pub fn field_values<'a>(&'a self, pointer: &'a str) -> impl Iterator<Item = &'a Json> + 'a {
        self.fields
            .iter()
            .filter(move |f| f.pointers.iter().any(|p| p == pointer))
            .flat_map(|f| &f.values)
    }

    /// Whether every field points at a property of every variant.
    pub(crate) fn fields_resolve(&self) -> Result<(), UnresolvedField> {
        for variant in &self.variants {
            let node = serde_json::to_value(variant).map_err(UnresolvedField::Encode)?;
            for field in &self.fields {
                if field.pointers.is_empty() {
                    return Err(UnresolvedField::NoPointer);
                }
                if let Some(pointer) = field.pointers.iter().find(|p| node.pointer(p).is_none()) {
                    return Err(UnresolvedField::NoProperty(pointer.clone()));
                }
            }
        }
        Ok(())
    }
}

/// A value of a field that the property it sets cannot take (a hand-edited
/// plan): `value` is its index among the field's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}` value {value} does not fit the property")]
pub struct FieldMisfit {
    /// The field's name (its first pointer).
    pub field: String,
    pub value: usize,
}

/// Why a field does not point at a property of every variant.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UnresolvedField {
    /// The variant cannot be made JSON to look the pointer up in.
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error("a field has no pointer")]
    NoPointer,
    #[error("field `{0}` names no property")]
    NoProperty(String),
}

/// `base` with the fields' values set at their pointers, through its plan
/// JSON.
fn with_values<T: Serialize + DeserializeOwned>(base: &T, values: &[(&Field, &Json)]) -> Option<T> {
    let mut node = serde_json::to_value(base).ok()?;
    for (field, value) in values {
        for pointer in &field.pointers {
            if !set(&mut node, pointer, value) {
                return None;
            }
        }
    }
    serde_json::from_value(node).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_what_json_pointer_mut_finds() {
        let node = serde_json::json!({
            "config": {"fleet": {"devices": 5, "a/b": 1, "m~n": 2, "list": [10, 20, 30]}},
            "": {"": 3}
        });
        for pointer in [
            "",
            "/config/fleet/devices",
            "/config/fleet/a~1b",
            "/config/fleet/m~0n",
            "/config/fleet/list/2",
            "/config/fleet/list/02",
            "/config/fleet/list/+1",
            "/config/fleet/list/3",
            "/config/fleet/list/x",
            "/config/fleet/missing",
            "//",
            "no-slash",
        ] {
            let (mut ours, mut theirs) = (node.clone(), node.clone());
            assert_eq!(slot(&mut ours, pointer), theirs.pointer_mut(pointer), "{pointer:?}");
        }
    }
}
