//! Constructor calls (`json(…)`, `paths(…)`, `until(…)`, …): each argument
//! checked against its parameter and lowered under its plan key, missing
//! ones filled from registry defaults, and `paths`' arguments checked
//! against each other.

use exp_diagnostics::{Code, Diagnostic, Span};
use serde_json::{Map, Value as Json};

use crate::checker::Checker;
use crate::registry::{Default, FnSchema};
use crate::typing::{plan_key, Bounds};
use crate::value::{Value, ValueKind};

impl Checker<'_> {
    pub(crate) fn constructor(&mut self, schema: &'static FnSchema, args: Vec<Option<Value>>, span: Span) -> Value {
        let mut lowered = Map::new();
        let mut ok = true;
        for (param, arg) in schema.params.iter().zip(args) {
            let arg = match (arg, param.default) {
                (Some(arg), _) => arg,
                (None, Default::Value(text)) => self.default_value(text),
                (None, _) => {
                    lowered.insert(plan_key(param.name, &param.ty), Json::Null);
                    continue;
                }
            };
            let what = format!("argument `{}` of `{}`", param.name, schema.name);
            let bounds = Bounds {
                min: param.min,
                max: param.max,
            };
            match self.conform(&arg, &param.ty, bounds, &what) {
                Some(json) => {
                    lowered.insert(plan_key(param.name, &param.ty), json);
                }
                None => ok = false,
            }
        }
        if ok && schema.name == "paths" {
            ok = self.check_paths(&lowered, span);
        }
        if ok {
            Value::new(ValueKind::Ctor(schema.name, lowered), span)
        } else {
            Value::error(span)
        }
    }

    /// E0503: `paths` takes its RTTs from one source, `count` of them.
    fn check_paths(&mut self, args: &Map<String, Json>, span: Span) -> bool {
        let count = args.get("count").and_then(Json::as_u64).unwrap_or(0);
        let given = args.get("rtts_ns").and_then(Json::as_array).map_or(0, Vec::len) as u64;
        let drawn = args.get("distribution").is_some_and(|d| !d.is_null());
        let problem = if given > 0 && drawn {
            Some((
                "`paths` takes `rtts` or `distribution`, not both".to_string(),
                "keep the list of RTTs or the distribution to draw them from".to_string(),
            ))
        } else if given > 0 && given != count {
            Some((
                format!("`paths` has `count = {count}` but `rtts` lists {given} RTTs"),
                "give one RTT per path".to_string(),
            ))
        } else {
            None
        };
        let Some((message, help)) = problem else {
            return true;
        };
        self.report(
            Diagnostic::error(Code::E0503, message)
                .primary(span, "conflicting arguments")
                .help(help),
        );
        false
    }
}
