//! Properties lowered as plan fields (`exp_plan::Field`): an independent
//! property (`registry::independent`) whose value names a sweep parameter is
//! lowered once per combination of the parameters *it* names, not once per
//! variant of its block. `devices = n` over a million values of `n` costs a
//! million small values, not a million fleets.

use exp_plan::{DistValue, Field};
use exp_syntax::ast::{Attribute, Block, Member};
use serde_json::Value as Json;

use crate::checker::{Checker, Scope};
use crate::query::{block_names, mentions};
use crate::registry::{self, BlockSchema, Prop, Role, ValueRule};
use crate::sweep::{self, SweepParam};
use crate::typing::plan_key;
use crate::FixedSet;

/// A block's attributes that become fields, with their properties: those of
/// independent properties whose value names a sweep parameter the rest of
/// the block does not (the block varies over those anyway). The first
/// attribute of each name counts, as lowering reads them.
pub(crate) fn field_attributes<'b>(
    block: &'b Block,
    schema: &'static BlockSchema,
    params: &[SweepParam],
) -> Vec<(&'b Attribute, &'static Prop)> {
    let is_param: FixedSet<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let mut seen = FixedSet::default();
    let candidates: Vec<(&Attribute, &Prop)> = block
        .members
        .iter()
        .filter_map(|m| match m {
            Member::Attribute(a) => seen.insert(a.key.name.as_str()).then_some(a),
            Member::Block(_) | Member::Expect(_) => None,
        })
        .filter(|a| registry::independent(schema.kind, &a.key.name))
        .filter(|a| mentions(&a.value, &|name| is_param.contains(name)))
        .filter_map(|a| Some((a, schema.props.iter().find(|p| p.name == a.key.name)?)))
        .collect();
    let attrs: Vec<&Attribute> = candidates.iter().map(|(a, _)| *a).collect();
    let varied = names_outside_fields(block, &attrs);
    candidates
        .into_iter()
        .filter(|(a, _)| mentions(&a.value, &|name| !varied.contains(name) && is_param.contains(name)))
        .collect()
}

/// Every name the block refers to other than in the `fields` attributes:
/// the sweep parameters among them are those its variants vary over.
pub(crate) fn names_outside_fields<'b>(block: &'b Block, fields: &[&Attribute]) -> FixedSet<&'b str> {
    let mut found = FixedSet::default();
    block_names(block, fields, &mut found);
    found
}

impl Checker<'_> {
    /// Lowers each field attribute at every combination of the values of the
    /// parameters it names (the others at their first value, as in the
    /// variants). A field of the property that counts the workload's shard
    /// units also sets the shard count. The first value that fails is
    /// reported and ends the field; the plan is not made then.
    pub(crate) fn lower_fields(
        &mut self,
        schema: &'static BlockSchema,
        fields: &[(&Attribute, &'static Prop)],
        params: &[SweepParam],
    ) -> Vec<Field> {
        let shard_count = match schema.role {
            Role::Workload { shard_count, .. } => shard_count,
            _ => None,
        };
        let mut lowered = Vec::new();
        for &(attr, prop) in fields {
            let mut named = FixedSet::default();
            crate::query::names(&attr.value, &mut named);
            let (combinations, parameters) = sweep::named_combinations(params, &|param| named.contains(param));
            let mut values = Vec::new();
            for point in combinations {
                let bindings = sweep::bindings(params, &point);
                let scope = Scope {
                    module: self.program.root,
                    sweep: Some(&bindings),
                };
                // As with variants: after a value that fails, stop.
                let Some(json) = self.lower_prop(Some(attr), prop, scope) else {
                    break;
                };
                self.check_field_value(prop, &json, attr);
                values.push(json);
            }
            let key = plan_key(prop.name, &prop.ty);
            let mut pointers = vec![format!("/config/{}/{key}", schema.kind)];
            if shard_count == Some(key.as_str()) {
                pointers.push("/shard/count".into());
            }
            lowered.push(Field {
                pointers,
                parameters,
                values,
            });
        }
        lowered
    }

    /// The rule the registry names for this property's value, as lowering
    /// a whole block checks it.
    fn check_field_value(&mut self, prop: &Prop, json: &Json, attr: &Attribute) {
        match prop.rule {
            Some(ValueRule::DeviceGap) => {
                if let Ok(gap) = serde_json::from_value::<DistValue>(json.clone()) {
                    self.check_device_gap(&gap, attr.value.span);
                }
            }
            None => {}
        }
    }
}
