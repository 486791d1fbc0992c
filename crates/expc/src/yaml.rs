//! A YAML rendering of plan JSON. Strings are always double-quoted with JSON
//! escapes (valid YAML), so no value can be misread as another type.

use serde_json::Value;

pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    node(&mut out, value, 0);
    out
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("null".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(Value::String(s.clone()).to_string()),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(o) if o.is_empty() => Some("{}".into()),
        _ => None,
    }
}

fn node(out: &mut String, value: &Value, indent: usize) {
    let pad = "  ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let key = Value::String(key.clone()).to_string();
                match scalar(child) {
                    Some(s) => out.push_str(&format!("{pad}{key}: {s}\n")),
                    None => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        node(out, child, indent + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match scalar(item) {
                    Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                    None => {
                        out.push_str(&format!("{pad}-\n"));
                        node(out, item, indent + 1);
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other).unwrap_or_default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_nested_values_with_quoted_strings() {
        let v = serde_json::json!({"a": 1, "b": ["x", {"c": null}], "d": {}});
        assert_eq!(
            to_yaml(&v),
            "\"a\": 1\n\"b\":\n  - \"x\"\n  -\n    \"c\": null\n\"d\": {}\n"
        );
    }
}
