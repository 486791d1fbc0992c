//! Lowering one workload (or the monitor) at one sweep point: properties with
//! defaults filled in, sub-blocks, the time window and the shard unit.

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Origin, Shard, Workload, WorkloadConfig};
use exp_syntax::ast::{Attribute, Block, Member};
use serde_json::{Map, Value as Json};

use crate::checker::{Checker, LoweredKey, Scope};
use crate::query::{attributes, uses_sweep};
use crate::registry::{self, BlockSchema, Default, Prop, Role, Ty, TIMING};
use crate::structure::{allowed_props, variant_name};
use crate::typing::{plan_key, Bounds};
use crate::value::{Value, ValueKind};

/// `{tag: {...}}`, the externally tagged form serde expects of an enum.
fn tagged(tag: String, fields: Map<String, Json>) -> Json {
    let mut object = Map::new();
    object.insert(tag, Json::Object(fields));
    Json::Object(object)
}

impl Checker<'_> {
    /// Lowers `props` of a block: each given attribute or its default. Unknown
    /// and missing properties were reported by the structure check.
    pub(crate) fn lower_props(&mut self, block: &Block, props: &[Prop], scope: Scope) -> Option<Map<String, Json>> {
        let attrs = attributes(block);
        let mut out = Map::new();
        let mut ok = true;
        for prop in props {
            match self.lower_prop(attrs.get(prop.name).copied(), prop, scope) {
                Some(json) => {
                    out.insert(plan_key(prop.name, &prop.ty), json);
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// One property's plan value: the attribute, or the default (`null` for an
    /// absent optional). Values that do not depend on the sweep point are
    /// lowered once and reused, which keeps large sweeps fast.
    pub(crate) fn lower_prop(&mut self, attr: Option<&Attribute>, prop: &Prop, scope: Scope) -> Option<Json> {
        let key = match (attr, prop.default) {
            (Some(attr), _) if uses_sweep(&attr.value, scope) => None,
            (Some(attr), _) => Some(LoweredKey::Attribute(attr.value.span, prop.name)),
            (None, Default::Value(text)) => Some(LoweredKey::Default(prop.name, text)),
            (None, Default::Optional) => return Some(Json::Null),
            (None, Default::Required) => return None,
        };
        if let Some(cached) = key.as_ref().and_then(|k| self.lowered.get(k)) {
            return cached.clone();
        }
        let value = match (attr, prop.default) {
            // `kind = cpuhog`: a bare name no binding holds, where an
            // enumeration member is expected, is a misspelt member, reported
            // with the members it may be.
            (Some(attr), _) if matches!(prop.ty, Ty::Enum(_)) && self.unbound_name(&attr.value, scope).is_some() => {
                let name = self.unbound_name(&attr.value, scope).unwrap_or_default();
                Value::new(ValueKind::Symbol(name), attr.value.span)
            }
            // `split_at = event`: text written without quotes.
            (Some(attr), _)
                if matches!(prop.ty, Ty::Str | Ty::Path) && self.unbound_name(&attr.value, scope).is_some() =>
            {
                let name = self.unbound_name(&attr.value, scope).unwrap_or_default();
                self.report(
                    Diagnostic::error(Code::E0201, format!("undefined name `{name}`"))
                        .primary(attr.value.span, "not defined")
                        .help(format!(
                            "`{}` takes a {}: quote it, `{} = \"{name}\"`",
                            prop.name,
                            prop.ty.describe(),
                            prop.name
                        )),
                );
                Value::error(attr.value.span)
            }
            (Some(attr), _) => self.eval(&attr.value, scope),
            (None, Default::Value(text)) => self.default_value(text),
            _ => return None,
        };
        let bounds = Bounds {
            min: prop.min,
            max: prop.max,
        };
        let json = self.conform(&value, &prop.ty, bounds, &format!("`{}`", prop.name));
        if let Some(key) = key {
            self.lowered.insert(key, json.clone());
        }
        json
    }

    pub(crate) fn lower_workload(
        &mut self,
        block: &Block,
        schema: &'static BlockSchema,
        scope: Scope,
        trial_ns: Option<u64>,
    ) -> Option<Workload> {
        let Role::Workload {
            shard_unit,
            shard_count,
            natural_end,
            ..
        } = schema.role
        else {
            unreachable!("registry: `{}` is not a workload", schema.kind);
        };
        let name = block.label.as_ref().map(|l| l.value.clone()).unwrap_or_default();
        let props = self.point_props(block, schema, scope)?;
        let mut config = self.lower_props(block, &props, scope);
        for child_kind in schema.children() {
            let child_schema = registry::block(child_kind)?;
            let empty = Block {
                kind: block.kind.clone(),
                label: None,
                members: Vec::new(),
                span: block.span,
                recovered: false,
            };
            let child = block
                .members
                .iter()
                .find_map(|m| match m {
                    Member::Block(b) if b.kind.name == *child_kind => Some(b),
                    _ => None,
                })
                .unwrap_or(&empty);
            let lowered = self.lower_props(child, child_schema.props, scope);
            if let (Some(config), Some(lowered)) = (config.as_mut(), lowered) {
                config.insert((*child_kind).to_string(), Json::Object(lowered));
            } else {
                config = None;
            }
        }
        let window = self.window(block, scope, trial_ns, natural_end, config.as_ref());
        let mut config = config?;
        let window = window?;
        if !schema.variants.is_empty() {
            // `kind` picks the variant: its properties nest under `params`.
            let variant = config.remove("kind")?.as_str()?.to_string();
            let variant_props = schema.variant(&variant)?.props;
            let mut params = Map::new();
            for prop in variant_props {
                let key = plan_key(prop.name, &prop.ty);
                params.insert(key.clone(), config.remove(&key).unwrap_or(Json::Null));
            }
            for variant in schema.variants {
                for prop in variant.props {
                    config.remove(&plan_key(prop.name, &prop.ty));
                }
            }
            // Built by hand: `json!` would serialise the map into a deep copy.
            config.insert("params".into(), tagged(variant, params));
        }
        let count = shard_count.and_then(|p| config.get(p)).and_then(Json::as_u64);
        let config: WorkloadConfig = match serde_json::from_value(tagged(schema.kind.to_string(), config)) {
            Ok(config) => config,
            Err(error) => {
                self.report(
                    Diagnostic::error(
                        Code::E0901,
                        format!("`{}` does not lower to the plan: {error}", schema.kind),
                    )
                    .primary(block.kind.span, "while lowering this block"),
                );
                return None;
            }
        };
        let span_of = |name: &str| attributes(block).get(name).map_or(block.kind.span, |a| a.value.span);
        match &config {
            WorkloadConfig::Fleet(fleet) => {
                self.check_device_gap(&fleet.gap, span_of("gap"));
                self.check_warmup_span(fleet.warmup, &window, trial_ns, span_of("warmup"));
                let first_send = attributes(block).get("first_send").map(|a| a.value.span);
                self.check_first_send(fleet, span_of("gap"), first_send);
            }
            WorkloadConfig::Anomaly(anomaly) => self.check_anomaly_rules(anomaly, block),
            _ => {}
        }
        Some(Workload {
            name,
            origin: self.origin(block.span),
            window,
            shard: Shard {
                unit: shard_unit.to_string(),
                count,
            },
            config,
        })
    }

    /// The properties of a block at this point. For a block with variants the
    /// variant is known only now (`kind` may come from a binding or the sweep),
    /// so properties of other variants are reported here.
    fn point_props(&mut self, block: &Block, schema: &'static BlockSchema, scope: Scope) -> Option<Vec<Prop>> {
        let own = |p: &Prop| !TIMING.iter().any(|t| t.name == p.name);
        if schema.variants.is_empty() {
            return Some(allowed_props(block, schema).into_iter().filter(own).collect());
        }
        let kind_prop = schema.props.iter().find(|p| p.name == "kind")?;
        let attrs = attributes(block);
        let kind = self.lower_prop(attrs.get("kind").copied(), kind_prop, scope);
        let Some(variant) = kind.as_ref().and_then(Json::as_str).and_then(|k| schema.variant(k)) else {
            // The kind is missing or wrong (reported): its other properties
            // are still checked, each as the first kind that has it defines
            // it, so that one pass shows every mistake of the block.
            for (name, attr) in &attrs {
                let prop = schema
                    .props
                    .iter()
                    .chain(schema.variants.iter().flat_map(|v| v.props))
                    .chain(TIMING)
                    .find(|p| p.name == *name && p.name != "kind");
                if let Some(prop) = prop {
                    self.lower_prop(Some(attr), prop, scope);
                }
            }
            return None;
        };
        let mut props: Vec<Prop> = schema.props.to_vec();
        props.extend_from_slice(variant.props);
        // A kind written literally had its properties checked with the
        // block's structure (E0302 there); report only what that could not see.
        let literal = variant_name(block).is_some();
        for (name, attr) in attrs.iter().filter(|_| !literal) {
            let known = props.iter().chain(TIMING).any(|p| p.name == *name);
            let of_variant = schema.variants.iter().any(|v| v.props.iter().any(|p| p.name == *name));
            if !known && of_variant {
                self.report(
                    Diagnostic::error(
                        Code::E0302,
                        format!("`{name}` is not a property of `kind = {}`", variant.name),
                    )
                    .primary(attr.key.span, format!("not used by {}", variant.name))
                    .help("remove it, or choose the kind it belongs to"),
                );
            }
        }
        Some(props)
    }

    pub(crate) fn origin(&self, span: Span) -> Origin {
        let file = self.sources.get(span.file);
        let (line, column) = file.line_column(span.start as usize);
        Origin {
            file: file.name.clone(),
            line: line as u32,
            column: column as u32,
        }
    }
}
