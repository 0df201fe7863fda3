//! The embed form (under the clock): its options, and the code it makes for the current
//! scenario, instant, speed, language and lesson: an iframe with embed.js for any page, or the
//! `<service-bus-playground>` element (element.js, beside the site's index.html) for a page or
//! MDX. The site's address is where the author says it will live; a local one is warned of.
use crate::i18n::t;
use crate::markup::escape;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// The embed form's inputs, read when the code is made.
#[derive(Clone, Default, PartialEq)]
pub struct EmbedInputs {
    autoplay: NodeRef,
    looping: NodeRef,
    map: NodeRef,
    lanes: NodeRef,
    log: NodeRef,
    height: NodeRef,
    format: NodeRef,
    site: NodeRef,
    check: NodeRef,
}

impl EmbedInputs {
    /// Whether the author asked for "Check that...": the link carries what shows now as
    /// expectations (`sbp check` runs them).
    pub fn checks(&self) -> bool {
        checked(&self.check)
    }
}

/// The code's form: where it is pasted.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    /// An iframe and embed.js: any HTML page (MkDocs, a plain page).
    Html,
    /// `<script type=module src=element.js>` and the element: a page or a framework's.
    Element,
    /// The element alone, in JSX's terms (element.js is loaded once for the site).
    Mdx,
}

/// The embed form's options: autoplay, loop, the panels, the height, the code's form, the
/// checks, and the site's address. Uncontrolled inputs: a re-render leaves what the reader set.
pub fn embed_options(inputs: &EmbedInputs) -> Html {
    let check = |node: &NodeRef, id: &'static str, key: &str, on: bool| {
        html! {
            <label class="check"><input type="checkbox" {id} ref={node.clone()} checked={on} />{" "}{t(key)}</label>
        }
    };
    let local = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .is_some_and(|page| is_local(&page));
    html! {
        <>
            {check(&inputs.autoplay, "embed-autoplay", "embed-autoplay", true)}
            {check(&inputs.looping, "embed-loop", "embed-loop", false)}
            {check(&inputs.map, "embed-map", "map", false)}
            {check(&inputs.lanes, "embed-lanes", "embed-lanes", true)}
            {check(&inputs.log, "embed-log", "log", false)}
            <label>{t("embed-height")}{" "}<input id="embed-height" ref={inputs.height.clone()} value="480" size="5" /></label>
            <label>{t("embed-format")}{" "}
                <select id="embed-format" ref={inputs.format.clone()}>
                    <option value="html" selected=true>{t("embed-format-html")}</option>
                    <option value="element">{t("embed-format-element")}</option>
                    <option value="mdx">{t("embed-format-mdx")}</option>
                </select>
            </label>
            {check(&inputs.check, "embed-check", "embed-check", false)}
            <label class="embed-site">{t("embed-site")}{" "}
                <input id="embed-site" type="url" ref={inputs.site.clone()} placeholder="https://example.org/docs/pg/" size="32" />
            </label>
            if local {
                <p class="hint warn" id="embed-local">{t("embed-local")}</p>
            }
        </>
    }
}

fn checked(node: &NodeRef) -> bool {
    node.cast::<HtmlInputElement>().is_some_and(|i| i.checked())
}

/// The code made, whether it names an address only this machine can open, and a site address
/// given that is not a web address.
pub struct Embed {
    pub code: String,
    pub local: bool,
    pub site_refused: Option<String>,
}

/// The site's folder (ending in `/`) and its page: the address the author gave (a folder or
/// its index.html; `https://` added when no scheme is), else the page's own; and the address
/// given when it is not a web address (the page's own is used instead).
fn site_of(inputs: &EmbedInputs, page: &str) -> (String, String, Option<String>) {
    let typed = inputs
        .site
        .cast::<HtmlInputElement>()
        .map(|i| i.value().trim().to_string())
        .unwrap_or_default();
    let given = if typed.is_empty() || typed.contains("://") {
        typed.clone()
    } else {
        format!("https://{typed}")
    };
    let url = web_sys::Url::new(&given).ok().filter(|u| {
        let host = u.hostname();
        (u.protocol() == "https:" || u.protocol() == "http:")
            && !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c))
    });
    let refused = (!typed.is_empty() && url.is_none()).then_some(typed);
    let page = match url {
        Some(url) => {
            url.set_search("");
            url.set_hash("");
            url.href()
        }
        None => page.to_string(),
    };
    let folder = match page.rfind('/') {
        Some(i) => page[..=i].to_string(),
        None => page.clone(),
    };
    (folder, page, refused)
}

/// Whether `address` is one only this machine opens (loopback, `.localhost`, a file).
fn is_local(address: &str) -> bool {
    let Ok(url) = web_sys::Url::new(address) else {
        return true;
    };
    let hostname = url.hostname().to_ascii_lowercase();
    // `localhost.` is `localhost`; `[::ffff:7f00:1]` is 127.0.0.1 written as IPv6.
    let host = hostname.trim_end_matches('.');
    url.protocol() == "file:"
        || host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "[::1]"
        || host.starts_with("[::ffff:7f")
        || host.starts_with("[::ffff:127.")
        || host == "0.0.0.0"
        || host == "[::]"
}

/// The code that embeds `url` (a share link) with the options of the embed form: autoplay,
/// loop, the panels, the height; the reader's language and lesson; in the form chosen. Every
/// value is URL-encoded (the browser's form encoding), and the whole address escaped for the
/// attribute it lands in: the code is pasted into somebody's site.
pub fn embed_code(url: &str, lesson: Option<&str>, inputs: &EmbedInputs) -> Embed {
    let (page, fragment) = url.split_once('#').unwrap_or((url, ""));
    let page = page.split('?').next().unwrap_or(page);
    let (folder, page, refused) = site_of(inputs, page);
    let panels: Vec<&str> = [
        ("map", &inputs.map),
        ("lanes", &inputs.lanes),
        ("log", &inputs.log),
    ]
    .into_iter()
    .filter(|(_, node)| checked(node))
    .map(|(p, _)| p)
    .collect();
    let lesson = lesson.filter(|id| sbp_scenario::lesson::is_slug(id));
    let flags: Vec<&str> = [("autoplay", &inputs.autoplay), ("loop", &inputs.looping)]
        .into_iter()
        .filter(|(_, node)| checked(node))
        .map(|(flag, _)| flag)
        .collect();
    let height = (inputs.height.cast::<HtmlInputElement>())
        .and_then(|i| i.value().trim().parse::<u32>().ok())
        .unwrap_or(480)
        .clamp(200, 4000);
    let fragment = String::from(js_sys::encode_uri(
        &js_sys::decode_uri(fragment).map_or_else(|_| fragment.to_string(), String::from),
    ));
    let format = match inputs.format.cast::<HtmlSelectElement>().map(|s| s.value()) {
        Some(v) if v == "element" => Format::Element,
        Some(v) if v == "mdx" => Format::Mdx,
        _ => Format::Html,
    };
    let code = match format {
        Format::Html => {
            let query = web_sys::UrlSearchParams::new().ok();
            if let Some(q) = &query {
                q.append("embed", "1");
                q.append("lang", crate::i18n::lang());
                q.append("panels", &panels.join(","));
                for flag in &flags {
                    q.append(flag, "1");
                }
                if let Some(id) = lesson {
                    q.append("lesson", id);
                }
            }
            let query = query
                .map(|q| String::from(q.to_string()))
                .unwrap_or_default();
            let src = escape(&format!("{page}?{query}#{fragment}"));
            let script = escape(&format!("{folder}embed.js"));
            format!(
                "<iframe src=\"{src}\" width=\"100%\" height=\"{height}\" style=\"border:0;max-width:100%\" loading=\"lazy\" title=\"Service Bus Playground\"></iframe>\n<script src=\"{script}\"></script>"
            )
        }
        Format::Element | Format::Mdx => {
            let mut attributes = vec![
                ("site", folder.clone()),
                ("lang", crate::i18n::lang().to_string()),
                ("panels", panels.join(",")),
            ];
            if let Some(id) = lesson {
                attributes.push(("lesson", id.to_string()));
            }
            if !fragment.is_empty() {
                attributes.push(("scenario", format!("#{fragment}")));
            }
            for flag in &flags {
                attributes.push((flag, "1".to_string()));
            }
            attributes.push(("height", height.to_string()));
            let element = format!(
                "<service-bus-playground {}></service-bus-playground>",
                attributes
                    .iter()
                    .map(|(name, value)| format!("{name}=\"{}\"", escape(value)))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            if format == Format::Element {
                let script = escape(&format!("{folder}element.js"));
                format!("<script type=\"module\" src=\"{script}\"></script>\n{element}")
            } else {
                format!("{{/* {} */}}\n{element}", t("embed-mdx-script"))
            }
        }
    };
    Embed {
        code,
        local: is_local(&page),
        site_refused: refused,
    }
}
