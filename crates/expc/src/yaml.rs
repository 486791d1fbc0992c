//! Plans as YAML: written from the plan's JSON with every string value
//! double-quoted with JSON escapes (valid YAML), so no value can be misread
//! as another type; keys plain where no YAML reader could take them for
//! anything but a string; sequences of mappings compact (`- key: value`).
//! Read back (`expc run plan.yaml`) into the same JSON.

use serde_json::Value;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// Whether a file name says YAML (`.yaml`, `.yml`).
pub fn is_yaml_path(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// The JSON of a YAML document: mappings with string keys, sequences and
/// scalars. Numbers keep their exact text (a u64 nanosecond count stays
/// exact); anchors, tags other than the core ones and several documents are
/// refused.
pub fn from_yaml(text: &str) -> Result<Value, String> {
    screen(text)?;
    let documents = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    match documents.as_slice() {
        [document] => to_json(document),
        [] => Err("no YAML document".into()),
        _ => Err(format!("{} YAML documents, but a plan is one", documents.len())),
    }
}

/// Most nesting a YAML plan may have: as much as a JSON plan
/// (serde_json's recursion limit); a plan needs less than 20.
const MAX_DEPTH: usize = 128;

/// Refuses, from the parser's events and before anything is built, what
/// the loader would expand or recurse on without bound: aliases (ten lines
/// of `*a` can stand for billions of nodes, which the loader copies) and
/// nesting deeper than [`MAX_DEPTH`].
fn screen(text: &str) -> Result<(), String> {
    let mut parser = Parser::new_from_str(text);
    let mut depth = 0usize;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| e.to_string())?;
        match event {
            Event::StreamEnd => return Ok(()),
            Event::Alias(_) => return Err(format!("line {}: YAML aliases are not read in plans", mark.line())),
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("line {}: nested deeper than {MAX_DEPTH}", mark.line()));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
}

fn to_json(yaml: &Yaml) -> Result<Value, String> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Integer(i) => Value::from(*i),
        // The number's own text, so that 18446744073709551615 or 0.1 read
        // as `serde_json` reads them from JSON.
        Yaml::Real(text) => {
            serde_json::from_str(text).map_err(|_| format!("`{text}` is not a number JSON can hold"))?
        }
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Hash(map) => {
            let mut object = serde_json::Map::new();
            for (key, value) in map {
                let Yaml::String(key) = key else {
                    return Err(format!("a mapping key that is not a string: {key:?}"));
                };
                object.insert(key.clone(), to_json(value)?);
            }
            Value::Object(object)
        }
        Yaml::Alias(_) => return Err("YAML aliases are not read in plans".into()),
        Yaml::BadValue => return Err("a value YAML cannot read".into()),
    })
}

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

/// A mapping key as written: plain when it is a word (a letter or `_`, then
/// letters, digits, `_`, `-`, `.`) that no YAML version reads as a boolean
/// or null (`yes`, `off`, `null`, … in any case), else double-quoted.
fn key_text(key: &str) -> String {
    const RESERVED: [&str; 11] = [
        "y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf",
    ];
    let mut chars = key.chars();
    let plain = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !RESERVED.iter().any(|r| key.eq_ignore_ascii_case(r));
    if plain {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    }
}

fn node(out: &mut String, value: &Value, indent: usize) {
    let pad = "  ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let key = key_text(key);
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
                        // Compact: the item's first line goes after the dash,
                        // the rest stay indented under it.
                        let start = out.len();
                        node(out, item, indent + 1);
                        out.replace_range(start..start + pad.len() + 2, &format!("{pad}- "));
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
    fn reads_back_what_it_writes_exactly() {
        let v = serde_json::json!({
            "n": 18446744073709551615u64, "x": 0.1, "neg": -3, "s": "a: \"b\"\n", "t": true,
            "list": [1, {"k": null}, []], "empty": {}, "f": 500000000.0
        });
        let back = from_yaml(&to_yaml(&v)).unwrap();
        assert_eq!(back, v);
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
    }

    #[test]
    fn refuses_what_a_plan_cannot_be() {
        assert!(from_yaml("a: 1\n---\nb: 2\n").unwrap_err().contains("2 YAML documents"));
        assert!(from_yaml("? [1]\n: 2\n").unwrap_err().contains("not a string"));
        assert!(from_yaml("a: [1\n").is_err());
        // Billion laughs: nine lines that expand to 9^9 strings.
        let mut laughs = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 9].join(", ");
            laughs += &format!("a{i}: &a{i} [{refs}]\n");
        }
        assert!(from_yaml(&laughs).unwrap_err().contains("aliases are not read"));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let deep_error = from_yaml(&deep).unwrap_err();
        assert!(
            deep_error.contains("nested deeper than 128") || deep_error.contains("recursion limit"),
            "{deep_error}"
        );
    }

    #[test]
    fn renders_nested_values_with_quoted_strings_and_plain_keys() {
        let v = serde_json::json!({"a": 1, "b": ["x", {"c": null, "e": [[1, 2], {"f": "g"}]}], "d": {}});
        assert_eq!(
            to_yaml(&v),
            "a: 1\nb:\n  - \"x\"\n  - c: null\n    e:\n      - - 1\n        - 2\n      - f: \"g\"\nd: {}\n"
        );
        assert_eq!(from_yaml(&to_yaml(&v)).unwrap(), v);
    }

    #[test]
    fn quotes_keys_a_yaml_reader_could_take_for_another_type() {
        let keys = [
            "no", "Off", "NULL", "y", "1", "1e3", "-a", ".inf", "a b", "a:b", "trial/0", "", "é",
        ];
        let v = Value::Object(keys.iter().map(|k| (k.to_string(), Value::from(1))).collect());
        let yaml = to_yaml(&v);
        for key in keys {
            assert!(
                yaml.contains(&format!("{}: 1\n", Value::String(key.into()))),
                "{key} unquoted in {yaml}"
            );
        }
        assert_eq!(from_yaml(&yaml).unwrap(), v);
        assert_eq!(
            to_yaml(&serde_json::json!({"size_bytes": 1, "a-b.c_d": 2})),
            "size_bytes: 1\na-b.c_d: 2\n"
        );
    }

    /// Every example's plan reads back from its YAML as the same plan.
    #[test]
    fn every_example_plan_reads_back_from_yaml() {
        let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        let mut read = 0;
        for entry in std::fs::read_dir(format!("{manifest}/../../examples")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "exp") {
                continue;
            }
            let compilation = exp_check::compile(&path.to_string_lossy(), &exp_check::FsLoader, &Default::default());
            let plan = compilation
                .plan
                .unwrap_or_else(|| panic!("{} does not compile", path.display()));
            let json = serde_json::to_value(&plan).unwrap();
            let yaml = to_yaml(&json);
            assert!(yaml.starts_with("plan_version: "), "{yaml}");
            assert_eq!(from_yaml(&yaml).unwrap(), json, "{}", path.display());
            read += 1;
        }
        assert!(read >= 5, "only {read} examples found");
    }
}
