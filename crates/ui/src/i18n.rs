//! The reader's language: the catalog (`i18n/<lang>.ftl`, fetched data; see
//! `sbp_scenario::catalog`), the choice (`?lang=`, then the remembered one, then the browser's),
//! and lookups. Every word the UI shows goes through [`t`] or [`tf`].
use crate::browser::LoadError;
use sbp_engine::text::{install, with_current};
use sbp_scenario::catalog::{supported, Catalog, LANGUAGES};
use std::cell::Cell;
use std::rc::Rc;

const STORAGE_KEY: &str = "sbp.lang";

thread_local! {
    static LANG: Cell<&'static str> = const { Cell::new("en") };
    static BASE: Cell<&'static str> = const { Cell::new("") };
}

/// Where the catalogs and lessons are, relative to the page.
pub fn base() -> &'static str {
    BASE.with(Cell::get)
}

/// The text of `key` in the current language (the key itself if the catalog lacks it).
pub fn t(key: &str) -> String {
    with_current(|c| c.format(key, &[]))
}

/// The text of `key` with its variables filled in.
pub fn tf(key: &str, args: &[(&str, &str)]) -> String {
    with_current(|c| c.format(key, args))
}

/// The current catalog (for wording many events at once).
pub fn catalog() -> Rc<Catalog> {
    sbp_engine::text::installed().unwrap_or_default()
}

/// The current language code.
pub fn lang() -> &'static str {
    LANG.with(Cell::get)
}

/// The language to start in: `?lang=`, else the one chosen before, else the browser's, else
/// English.
pub fn initial_language() -> &'static str {
    let query = crate::browser::query_value("lang");
    let stored = crate::browser::storage().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten());
    let browser = web_sys::window().and_then(|w| w.navigator().language());
    [query, stored, browser]
        .into_iter()
        .flatten()
        .find_map(|tag| supported(&tag))
        .unwrap_or("en")
}

/// Installs `lang`'s catalog, from the page where it carries it, else fetched, then calls `done`
/// (also when the fetch fails: the page then shows keys, or keeps the language it had).
pub fn load(
    lang: &'static str,
    remember: bool,
    done: impl FnOnce(Result<(), LoadError>) + 'static,
) {
    load_boxed(lang, remember, Box::new(done))
}

fn load_boxed(lang: &'static str, remember: bool, done: Box<dyn FnOnce(Result<(), LoadError>)>) {
    let base = BASE.with(Cell::get);
    let url = format!("{base}i18n/{lang}.ftl");
    crate::browser::carried_or_fetched(&carried(lang), &url, move |text| {
        let parsed = text
            .map_err(LoadError::from)
            .and_then(|t| Catalog::parse(&t).map_err(LoadError::Catalog));
        done(parsed.map(|catalog| installed(catalog, lang, remember)))
    });
}

/// The id of the data block in which the playground's page carries `lang`'s catalog
/// (scripts/carry.mjs).
fn carried(lang: &str) -> String {
    format!("catalog-{lang}")
}

/// Yew's first render empties the body, at whose end the playground's page carries its catalogs:
/// they are moved into the head before it, so that a language switch still finds them there.
pub fn keep_carried_catalogs() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(Some(head)) = doc.query_selector("head") else {
        return;
    };
    for (lang, _) in LANGUAGES {
        if let Some(block) = doc.get_element_by_id(&carried(lang)) {
            let _ = head.append_child(&block);
        }
    }
}

/// For a page of its own, served from a folder of its own (the send lab, the lesson builder, the
/// emulator page, the trainer's page): the catalogs and lessons are one folder up, and its
/// catalog is the playground's words and the pages' (`i18n/pages/<lang>.ftl`), fetched side by
/// side, in the reader's language; the browser's tab then says `title` (a key) in it. The
/// playground loads its own words alone ([`load`]): what only these pages say is not on its
/// first screen's line, nor this loader in its wasm.
pub fn load_page(title: &'static str, done: impl FnOnce(Result<(), LoadError>) + 'static) {
    const BASE_OF_A_PAGE: &str = "../";
    BASE.with(|b| b.set(BASE_OF_A_PAGE));
    let lang = initial_language();
    let urls = vec![
        format!("{BASE_OF_A_PAGE}i18n/{lang}.ftl"),
        format!("{BASE_OF_A_PAGE}i18n/pages/{lang}.ftl"),
    ];
    crate::browser::fetch_texts(urls, move |texts| {
        let parsed = texts
            .map_err(LoadError::from)
            .and_then(|t| Catalog::parse(&t.join("\n")).map_err(LoadError::Catalog));
        done(parsed.map(|catalog| {
            installed(catalog, lang, false);
            if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
                doc.set_title(&format!("{} · {}", t(title), t("app-title")));
            }
        }))
    });
}

/// A page of its own's links out, in the reader's language (loaded with [`load_page`], so the
/// playground is one folder up): back to the playground, saying `words` (the pages' `page-back`:
/// a word of their catalog, which the playground's does not carry), and this page in each other
/// language (its query and fragment kept, `lang` set: the page loads that language's catalogs).
pub fn page_links(words: String) -> yew::Html {
    let here = lang();
    let back = format!("{}index.html?lang={here}", base());
    let location = web_sys::window().map(|w| w.location());
    let search = location
        .as_ref()
        .and_then(|l| l.search().ok())
        .unwrap_or_default();
    let fragment = location
        .as_ref()
        .and_then(|l| l.hash().ok())
        .unwrap_or_default();
    let in_lang = |code: &str| {
        web_sys::UrlSearchParams::new_with_str(&search)
            .map(|query| {
                query.set("lang", code);
                format!("?{}{fragment}", String::from(query.to_string()))
            })
            .unwrap_or_else(|_| format!("?lang={code}"))
    };
    yew::html! {
        <p class="page-links">
            <a id="page-back" href={back}>{words}</a>
            <span class="page-languages" role="group" aria-label={t("language")}>
                { for LANGUAGES.into_iter().filter(|(code, _)| *code != here).map(|(code, name)| yew::html! {
                    <a href={in_lang(code)} lang={code} hreflang={code} data-lang={code}>{name}</a>
                }) }
            </span>
        </p>
    }
}

/// `catalog` installed as `lang`'s: the page's `lang` says it, and local storage keeps the
/// choice if `remember`.
fn installed(catalog: Catalog, lang: &'static str, remember: bool) {
    install(Rc::new(catalog));
    LANG.with(|l| l.set(lang));
    if let Some(doc) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = doc.set_attribute("lang", lang);
    }
    if remember {
        if let Some(s) = crate::browser::storage() {
            let _ = s.set_item(STORAGE_KEY, lang);
        }
    }
}

/// What happens next, in the current language.
pub fn next_text(next: &sbp_scenario::Next) -> String {
    with_current(|c| sbp_scenario::words::next_text(c, next))
}

/// What an event means, in the current language.
pub fn event_text(ns: &sbp_engine::Namespace, e: &sbp_engine::event::Event) -> String {
    with_current(|c| sbp_scenario::words::event_text(c, ns, e))
}

/// A rule's one-line summary in the reader's language (the catalog's `rule-<id>`).
pub fn rule_summary(rule: sbp_engine::Rule) -> String {
    t(&format!("rule-{}", rule.id()))
}

impl std::fmt::Display for crate::browser::FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&tf("could-not-load", &[("url", &self.url)]))
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Fetch(e) => e.fmt(f),
            LoadError::Scenario(e) => e.fmt(f),
            LoadError::Lesson(t) => t.fmt(f),
            LoadError::Catalog(e) => f.write_str(e),
        }
    }
}
