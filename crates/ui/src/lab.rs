//! The send lab's page (`lab.html`, SEND-01..04): loaded into the playground when the reader
//! opens the lab, so the playground's wasm does not carry the lab.
use sbp_ui::i18n;

fn main() {
    i18n::load_page("lab-title", |_| {
        yew::Renderer::<sbp_ui::sendlab::SendLab>::new().render();
    });
}
