//! The embed form (under the clock): its options, and the iframe snippet it makes for the
//! current scenario, instant, speed, language and lesson.
use crate::markup::Markup;

/// The embed form's options: autoplay, loop, the panels, the height.
pub fn embed_options() -> Markup {
    let mut out = Markup::new();
    for (id, key, on) in [
        ("embed-autoplay", "embed-autoplay", true),
        ("embed-loop", "embed-loop", false),
        ("embed-map", "map", false),
        ("embed-lanes", "embed-lanes", true),
        ("embed-log", "log", false),
    ] {
        crate::markup!(
            out,
            "<label class=\"check\"><input type=\"checkbox\" id=\"{}\"{}> {}</label>",
            id,
            if on { " checked" } else { "" },
            crate::i18n::t(key)
        );
    }
    crate::markup!(
        out,
        "<label>{} <input id=\"embed-height\" value=\"480\" size=\"5\"></label>",
        crate::i18n::t("embed-height")
    );
    out
}

/// Whether the checkbox with this id is ticked, and an input's text.
fn checked(id: &str) -> bool {
    input(id).is_some_and(|i| i.checked())
}
fn input(id: &str) -> Option<web_sys::HtmlInputElement> {
    let el = web_sys::window()?.document()?.get_element_by_id(id)?;
    wasm_bindgen::JsCast::dyn_into(el).ok()
}

/// The iframe snippet that embeds `url` (a share link) with the options of the embed form:
/// autoplay, loop, the panels, the height; the reader's language and lesson. The script
/// (`web/embed.js`) lets the host page size the frame to its content (the page posts
/// `sbp-size` messages).
pub fn embed_code(url: &str, lesson: Option<&str>) -> String {
    let (page, fragment) = url.split_once('#').unwrap_or((url, ""));
    let page = page.split('?').next().unwrap_or(page);
    let panels: Vec<&str> = [
        ("map", "embed-map"),
        ("lanes", "embed-lanes"),
        ("log", "embed-log"),
    ]
    .into_iter()
    .filter(|(_, id)| checked(id))
    .map(|(p, _)| p)
    .collect();
    // Every value URL-encoded (the browser's form encoding), then the whole address escaped
    // for the attribute it lands in: the snippet is pasted into somebody's site.
    let query = web_sys::UrlSearchParams::new().ok();
    if let Some(q) = &query {
        q.append("embed", "1");
        q.append("lang", crate::i18n::lang());
        q.append("panels", &panels.join(","));
        for (flag, id) in [("autoplay", "embed-autoplay"), ("loop", "embed-loop")] {
            if checked(id) {
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
    let height = input("embed-height")
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
