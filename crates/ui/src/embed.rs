//! The embed form (under the clock): its options, and the iframe snippet it makes for the
//! current scenario, instant, speed, language and lesson.
use crate::i18n::t;
use web_sys::HtmlInputElement;
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
}

/// The embed form's options: autoplay, loop, the panels, the height. Uncontrolled inputs: a
/// re-render leaves what the reader ticked.
pub fn embed_options(inputs: &EmbedInputs) -> Html {
    let check = |node: &NodeRef, id: &'static str, key: &str, on: bool| {
        html! {
            <label class="check"><input type="checkbox" {id} ref={node.clone()} checked={on} />{" "}{t(key)}</label>
        }
    };
    html! {
        <>
            {check(&inputs.autoplay, "embed-autoplay", "embed-autoplay", true)}
            {check(&inputs.looping, "embed-loop", "embed-loop", false)}
            {check(&inputs.map, "embed-map", "map", false)}
            {check(&inputs.lanes, "embed-lanes", "embed-lanes", true)}
            {check(&inputs.log, "embed-log", "log", false)}
            <label>{t("embed-height")}{" "}<input id="embed-height" ref={inputs.height.clone()} value="480" size="5" /></label>
        </>
    }
}

fn checked(node: &NodeRef) -> bool {
    node.cast::<HtmlInputElement>().is_some_and(|i| i.checked())
}

/// The iframe snippet that embeds `url` (a share link) with the options of the embed form:
/// autoplay, loop, the panels, the height; the reader's language and lesson. The script
/// (`web/embed.js`) lets the host page size the frame to its content (the page posts
/// `sbp-size` messages).
pub fn embed_code(url: &str, lesson: Option<&str>, inputs: &EmbedInputs) -> String {
    let (page, fragment) = url.split_once('#').unwrap_or((url, ""));
    let page = page.split('?').next().unwrap_or(page);
    let panels: Vec<&str> = [
        ("map", &inputs.map),
        ("lanes", &inputs.lanes),
        ("log", &inputs.log),
    ]
    .into_iter()
    .filter(|(_, node)| checked(node))
    .map(|(p, _)| p)
    .collect();
    // Every value URL-encoded (the browser's form encoding), then the whole address escaped
    // for the attribute it lands in: the snippet is pasted into somebody's site.
    let query = web_sys::UrlSearchParams::new().ok();
    if let Some(q) = &query {
        q.append("embed", "1");
        q.append("lang", crate::i18n::lang());
        q.append("panels", &panels.join(","));
        for (flag, node) in [("autoplay", &inputs.autoplay), ("loop", &inputs.looping)] {
            if checked(node) {
                q.append(flag, "1");
            }
        }
        if let Some(id) = lesson.filter(|id| sbp_scenario::lesson::is_slug(id)) {
            q.append("lesson", id);
        }
    }
    let query = query
        .map(|q| String::from(q.to_string()))
        .unwrap_or_default();
    let height = (inputs.height.cast::<HtmlInputElement>())
        .and_then(|i| i.value().trim().parse::<u32>().ok())
        .unwrap_or(480)
        .clamp(200, 4000);
    let site = page.rsplit_once('/').map_or(page, |(dir, _)| dir);
    let fragment = String::from(js_sys::encode_uri(
        &js_sys::decode_uri(fragment).map_or_else(|_| fragment.to_string(), String::from),
    ));
    let src = crate::markup::escape(&format!("{page}?{query}#{fragment}"));
    let script = crate::markup::escape(&format!("{site}/embed.js"));
    format!(
        "<iframe src=\"{src}\" width=\"100%\" height=\"{height}\" style=\"border:0;max-width:100%\" loading=\"lazy\" title=\"Service Bus Playground\"></iframe>\n<script src=\"{script}\"></script>"
    )
}
