//! The catalogs (`web/i18n/<lang>.ftl`): every language has every key the UI uses, with the
//! same variables, and every event can be worded.
use sbp_scenario::catalog::{Catalog, LANGUAGES};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(file: &str) -> String {
    let path = root().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// A language's whole catalog, as a page of its own loads it: the playground's words, then the
/// pages' (a key in both is an error of the parse).
fn catalog(lang: &str) -> Catalog {
    let text = format!(
        "{}\n{}",
        read(&format!("web/i18n/{lang}.ftl")),
        read(&format!("web/i18n/pages/{lang}.ftl"))
    );
    Catalog::parse(&text).unwrap_or_else(|e| panic!("{lang}.ftl with pages/{lang}.ftl: {e}"))
}

/// The playground's catalog alone, as the playground (index.html) loads it.
fn playground_catalog(lang: &str) -> Catalog {
    Catalog::parse(&read(&format!("web/i18n/{lang}.ftl")))
        .unwrap_or_else(|e| panic!("{lang}.ftl: {e}"))
}

/// The sources only the pages of their own are built from (the send lab, the lesson builder,
/// the emulator page, the trainer's page), and the scenario layer's parts only they use.
const PAGES_ONLY: [&str; 7] = [
    "crates/ui/src/lab.rs",
    "crates/ui/src/sendlab.rs",
    "crates/ui/src/builder.rs",
    "crates/ui/src/emulator.rs",
    "crates/ui/src/trainer.rs",
    "crates/scenario/src/emulator.rs",
    "crates/scenario/src/code_text.rs",
];

/// The keys the UI's sources ask for: `t("k")`, `tf("k", ..)`, form fields by id (label `id`,
/// placeholder `id-ph`), forms by id (title, `id-hint`), buttons by id, option keys, and the
/// keys chosen by a match (`"ev-..."`, `"status-..."`...).
fn keys_used(playground_only: bool) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut sources: Vec<PathBuf> = Vec::new();
    // The UI's, the engine's and the scenario layer's texts (`text!("k", ..)`, `Text::new("k")`),
    // each folder with its subfolders.
    let mut dirs = vec![
        root().join("crates/ui/src"),
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
    if playground_only {
        sources.retain(|path| !PAGES_ONLY.iter().any(|p| path.ends_with(p)));
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
    let used = keys_used(false);
    assert!(used.len() > 150, "the scan found {} keys", used.len());
    for (lang, _) in LANGUAGES {
        let c = catalog(lang);
        let missing: Vec<&String> = used.iter().filter(|k| c.get(k).is_none()).collect();
        assert!(missing.is_empty(), "{lang}.ftl lacks {missing:?}");
    }
}

/// The playground loads `i18n/<lang>.ftl` alone: every word its own sources say is there, the
/// same keys in every language.
#[test]
fn the_playground_catalog_has_every_word_the_playground_says() {
    let used = keys_used(true);
    assert!(used.len() > 150, "the scan found {} keys", used.len());
    let english: Vec<String> = playground_catalog("en").keys().map(String::from).collect();
    for (lang, _) in LANGUAGES {
        let own = playground_catalog(lang);
        let keys: Vec<String> = own.keys().map(String::from).collect();
        assert_eq!(
            keys, english,
            "{lang}.ftl and en.ftl split their words differently"
        );
        let missing: Vec<&String> = used.iter().filter(|k| own.get(k).is_none()).collect();
        assert!(
            missing.is_empty(),
            "{lang}.ftl lacks {missing:?} (in pages/{lang}.ftl only)"
        );
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

/// Every preset's name, description and step notes in every language but English (whose words
/// are the preset's own): each note for a step that has one, none for a step without, and the
/// rule ids an English text cites cited in each translation too.
#[test]
fn every_preset_is_worded_in_every_language() {
    use sbp_scenario::presets::{preset_texts, translate, PRESETS};
    let ids = |text: &str| -> BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| {
                w.len() >= 5
                    && w.chars().take(3).all(|c| c.is_ascii_uppercase())
                    && w.as_bytes().get(3) == Some(&b'-')
                    && w.as_bytes().get(4).is_some_and(u8::is_ascii_digit)
            })
            .map(str::to_string)
            .collect()
    };
    for (lang, _) in LANGUAGES.iter().filter(|(l, _)| *l != "en") {
        let path = root().join(format!("crates/scenario/presets/i18n/{lang}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let texts = preset_texts(&text).unwrap_or_else(|e| panic!("{lang}: {e}"));
        let names: BTreeSet<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
        let worded: BTreeSet<&str> = texts.keys().map(String::as_str).collect();
        assert_eq!(
            worded, names,
            "{lang}: the presets worded are the presets there are"
        );
        for (name, json) in PRESETS {
            let english = sbp_scenario::Scenario::from_json(json).expect("a preset reads");
            let words = &texts[*name];
            assert!(
                !words.name.is_empty() && !words.description.is_empty(),
                "{lang} {name}"
            );
            assert_ne!(
                words.name, english.name,
                "{lang} {name}: the name is not translated"
            );
            let noted: BTreeSet<usize> = english
                .timeline
                .iter()
                .enumerate()
                .filter(|(_, s)| s.note.is_some())
                .map(|(i, _)| i)
                .collect();
            assert_eq!(
                words.notes.keys().copied().collect::<BTreeSet<_>>(),
                noted,
                "{lang} {name}: notes by step"
            );
            let mut translated = english.clone();
            translate(&mut translated, words);
            let english_texts = std::iter::once(&english.description)
                .chain(english.timeline.iter().filter_map(|s| s.note.as_ref()));
            let their_texts = std::iter::once(&translated.description)
                .chain(translated.timeline.iter().filter_map(|s| s.note.as_ref()));
            for (en, theirs) in english_texts.zip(their_texts) {
                assert_ne!(en, theirs, "{lang} {name}: a text is not translated");
                assert_eq!(
                    ids(en),
                    ids(theirs),
                    "{lang} {name}: the rule ids of {en:?} and {theirs:?}"
                );
            }
        }
    }
}
