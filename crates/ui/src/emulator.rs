//! The emulator's page (`emulator.html`): paste or choose a Service Bus emulator `Config.json`
//! and open it in the playground (profile Emulator), with what the playground does not model
//! listed; or take the playground's current scenario out as a `Config.json`, with where it
//! differs from the emulator's schema listed. A page of its own, so the playground's wasm does
//! not carry the mapping.
use sbp_scenario::emulator::{export, import};
use sbp_scenario::{Scenario, Text};
use sbp_ui::i18n::{self, t, tf};
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

/// The playground's scenario as it left it (local storage), or the starter.
fn current_scenario() -> Scenario {
    sbp_ui::browser::stored_link()
        .map(|l| l.scenario)
        .or_else(|| Scenario::from_json(sbp_ui::browser::STARTER).ok())
        .unwrap_or_default()
}

fn warnings(id: &'static str, list: &[Text]) -> Html {
    if list.is_empty() {
        return html! { <p class="hint" id={id}>{t("emulator-no-warnings")}</p> };
    }
    html! {
        <ul class="warnings" id={id}>
            { for list.iter().map(|w| html! { <li>{w.to_string()}</li> }) }
        </ul>
    }
}

/// What an import gave: the link that opens it and what was not modelled, or why it failed.
#[derive(Clone, PartialEq)]
enum Outcome {
    None,
    Opened { link: String, warnings: Vec<Text> },
    Failed(String),
}

/// The playground's scenario as SDK code, in the language chosen.
fn as_code(lang: &str) -> Html {
    let Some(language) = sbp_scenario::code::Lang::from_name(lang) else {
        return html! {};
    };
    match sbp_scenario::code::generate(&current_scenario(), language) {
        Ok(code) => {
            let href = format!(
                "data:text/plain;charset=utf-8,{}",
                js_sys::encode_uri_component(&code)
            );
            let file = format!("scenario.{}", language.extension());
            html! {
                <>
                <p><a id="code-download" download={file} {href}>{t("code-download")}</a></p>
                <textarea id="code-text" readonly=true rows="24" value={code} aria-label={t("code-title")} />
                </>
            }
        }
        Err(e) => html! { <p class="field-error" role="alert">{e.to_string()}</p> },
    }
}

#[function_component(EmulatorPage)]
fn emulator_page() -> Html {
    let pasted = use_node_ref();
    let language = use_state(|| "cs".to_string());
    let choose = {
        let language = language.clone();
        Callback::from(move |e: Event| {
            language.set(
                e.target_unchecked_into::<web_sys::HtmlSelectElement>()
                    .value(),
            )
        })
    };
    let outcome = use_state(|| Outcome::None);
    let lang = i18n::lang();
    let onclick = {
        let (pasted, outcome) = (pasted.clone(), outcome.clone());
        Callback::from(move |_: MouseEvent| {
            let text = pasted
                .cast::<HtmlTextAreaElement>()
                .map(|t| t.value())
                .unwrap_or_default();
            outcome.set(match import(&text) {
                Ok(imported) => {
                    let json = serde_json::to_string(&imported.scenario).unwrap_or_default();
                    let payload = sbp_ui::browser::json_payload(&json);
                    Outcome::Opened {
                        link: format!("../index.html?lang={lang}#s={payload}"),
                        warnings: imported.warnings,
                    }
                }
                Err(e) => Outcome::Failed(e.to_string()),
            });
        })
    };
    let imported = match &*outcome {
        Outcome::None => html! {},
        Outcome::Failed(e) => {
            html! { <p class="field-error" role="alert" id="import-error">{e.clone()}</p> }
        }
        Outcome::Opened { link, warnings: w } => html! {
            <>
            <p class="reveal right"><a id="import-open" href={link.clone()}>{t("emulator-open")}</a></p>
            <h3>{t("emulator-import-warnings")}</h3>
            {warnings("import-warnings", w)}
            </>
        },
    };
    let exported = match export(&current_scenario()) {
        Ok(out) => {
            let json = serde_json::to_string_pretty(&out.config).unwrap_or_default();
            let href = format!(
                "data:application/json;charset=utf-8,{}",
                js_sys::encode_uri_component(&json)
            );
            html! {
                <>
                <p><a id="export-download" download="Config.json" {href}>{t("emulator-download")}</a></p>
                <h3>{t("emulator-export-warnings")}</h3>
                {warnings("export-warnings", &out.warnings)}
                <textarea id="export-json" readonly=true rows="18" value={json} aria-label={t("emulator-export")} />
                </>
            }
        }
        Err(e) => html! { <p class="field-error" role="alert">{e.to_string()}</p> },
    };
    html! {
        <main class="builder">
            <h1>{t("emulator-title")}</h1>
            <p class="hint">{t("emulator-intro")}</p>
            <section class="card-form">
                <h2>{t("emulator-import")}</h2>
                <label>{t("emulator-file")}{" "}<input type="file" id="config-file" accept=".json,application/json" /></label>
                <textarea id="config-text" ref={pasted} rows="12" placeholder={t("emulator-paste")} aria-label={t("emulator-paste")} />
                <div class="row wrap"><button class="primary" id="import-button" {onclick}>{t("emulator-import-button")}</button></div>
                {imported}
            </section>
            <section class="card-form">
                <h2>{t("emulator-export")}</h2>
                <p class="hint">{tf("emulator-export-intro", &[("name", &current_scenario().name)])}</p>
                {exported}
            </section>
            <section class="card-form">
                <h2>{t("code-title")}</h2>
                <p class="hint">{t("code-intro")}</p>
                <label>{t("code-language")}{" "}
                    <select id="code-language" onchange={choose}>
                        <option value="cs" selected={*language == "cs"}>{"C# (Azure.Messaging.ServiceBus)"}</option>
                        <option value="py" selected={*language == "py"}>{"Python (azure-servicebus)"}</option>
                        <option value="js" selected={*language == "js"}>{"JavaScript (@azure/service-bus)"}</option>
                    </select>
                </label>
                {as_code(&language)}
            </section>
            {i18n::page_links(t("page-back"))}
        </main>
    }
}

fn main() {
    i18n::load_page("emulator-title", |_| {
        yew::Renderer::<EmulatorPage>::new().render();
    });
}
