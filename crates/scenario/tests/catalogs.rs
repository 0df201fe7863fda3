//! The catalogs (`web/i18n/<lang>.ftl`): every language has every key the UI uses, with the
//! same variables, and every event can be worded.
use sbp_scenario::catalog::{Catalog, LANGUAGES};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn catalog(lang: &str) -> Catalog {
    let path = root().join(format!("web/i18n/{lang}.ftl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    Catalog::parse(&text).unwrap_or_else(|e| panic!("{lang}.ftl: {e}"))
}

/// The keys the UI's sources ask for: `t("k")`, `tf("k", ..)`, form fields by id (label `id`,
/// placeholder `id-ph`), forms by id (title, `id-hint`), buttons by id, option keys, and the
/// keys chosen by a match (`"ev-..."`, `"status-..."`...).
fn keys_used() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root().join("crates/ui/src"))
        .expect("the UI sources")
        .map(|e| e.expect("a file").path())
        .collect();
    // The engine's and the scenario layer's texts (`text!("k", ..)`, `Text::new("k")`).
    let mut dirs = vec![
        root().join("crates/engine/src"),
        root().join("crates/scenario/src"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("a file").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                sources.push(path);
            }
        }
    }
    for path in sources {
        let ui = path.starts_with(root().join("crates/ui"));
        // Comments aside (they show examples).
        let text: String = std::fs::read_to_string(&path)
            .expect("readable")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let literal_after = |marker: &str| -> Vec<String> {
            text.match_indices(marker)
                .filter(|(i, _)| {
                    // A call of its own, not the end of another name (`get("`, `expect("`).
                    !text[..*i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
                .filter_map(|(i, _)| {
                    let rest = &text[i + marker.len()..];
                    let end = rest.find('"')?;
                    Some(rest[..end].to_string())
                })
                .collect()
        };
        // Operations are worded as `op-<id>` (command.rs names them).
        if path.ends_with("command.rs") {
            for block in text.split("pub fn name(&self)").skip(1) {
                let body = &block[..block.find("\n    }\n").unwrap_or(block.len())];
                for (i, _) in body.match_indices("=> \"") {
                    let rest = &body[i + 4..];
                    keys.insert(format!("op-{}", &rest[..rest.find('"').unwrap_or(0)]));
                }
            }
        }
        for marker in [
            "t(\"",
            "tf(\"",
            "text!(\"",
            "Text::new(\"",
            "_field(\"",
            "field(\"",
            "<DataForm id=\"",
        ]
        .into_iter()
        .filter(|m| ui || !m.contains("field") && !m.starts_with("t"))
        {
            for key in literal_after(marker) {
                if marker.contains("field") {
                    let call = &text[text.find(&format!("{marker}{key}\"")).unwrap_or(0)..];
                    let line = call.lines().next().unwrap_or_default();
                    if line.contains(", true") {
                        keys.insert(format!("{key}-ph"));
                    }
                }
                keys.insert(key);
            }
        }
        for form in literal_after("<DataForm id=\"") {
            let start = text.find(&format!("<DataForm id=\"{form}\"")).unwrap_or(0);
            let tag = &text[start..start + text[start..].find("/>").unwrap_or(0)];
            if tag.contains("hint=true") {
                keys.insert(format!("{form}-hint"));
            }
            if let Some(b) = tag.find("buttons={vec![") {
                let list = &tag[b + 14..b + tag[b..].find(']').unwrap_or(0)];
                keys.extend(
                    list.split(',')
                        .map(|s| s.trim().trim_matches('"').to_string()),
                );
            }
        }
        for (i, _) in text.match_indices("let buttons = vec![") {
            let list = &text[i + 19..i + text[i..].find("];").unwrap_or(0)];
            keys.extend(
                list.split(',')
                    .map(|s| s.trim().trim_matches('"').to_string())
                    .filter(|s| !s.is_empty()),
            );
        }
        for (i, _) in text.match_indices("pairs(&[") {
            let list = &text[i..i + text[i..].find("])").unwrap_or(0)];
            for pair in list.split('(').skip(2) {
                if let Some(key) = pair.split('"').nth(3) {
                    keys.insert(key.to_string());
                }
            }
        }
        for prefix in [
            "\"ev-",
            "\"cause-",
            "\"gone-",
            "\"kind-",
            "\"settle-",
            "\"status-",
            "\"act-",
            "\"out-",
            "\"c-",
            "\"l-",
            "\"s-",
        ] {
            for rest in literal_after(prefix) {
                keys.insert(format!("{}{rest}", &prefix[1..]));
            }
        }
    }
    keys.retain(|k| !k.is_empty() && !k.contains('{'));
    keys
}

#[test]
fn every_key_the_ui_uses_is_in_every_language() {
    let used = keys_used();
    assert!(used.len() > 150, "the scan found {} keys", used.len());
    for (lang, _) in LANGUAGES {
        let c = catalog(lang);
        let missing: Vec<&String> = used.iter().filter(|k| c.get(k).is_none()).collect();
        assert!(missing.is_empty(), "{lang}.ftl lacks {missing:?}");
    }
}

#[test]
fn every_language_has_the_same_keys_and_variables_as_english() {
    let en = catalog("en");
    for (lang, _) in LANGUAGES.iter().skip(1) {
        let c = catalog(lang);
        let missing: Vec<&str> = en.keys().filter(|k| c.get(k).is_none()).collect();
        assert!(missing.is_empty(), "{lang}.ftl lacks {missing:?}");
        let extra: Vec<&str> = c.keys().filter(|k| en.get(k).is_none()).collect();
        assert!(
            extra.is_empty(),
            "{lang}.ftl has keys English lacks: {extra:?}"
        );
        for key in en.keys() {
            assert_eq!(
                en.variables(key),
                c.variables(key),
                "{lang}.ftl: {key} uses other variables"
            );
        }
    }
}

#[test]
fn the_cli_words_events_with_the_same_english_catalog() {
    assert_eq!(sbp_engine::text::english().clone(), catalog("en"));
}
