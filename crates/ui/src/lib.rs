//! The Service Bus Playground in the browser: the parts of the Yew app (`main.rs` puts them
//! together) and of the send lab's page (`lab.rs`). Each binary carries only what it uses.
pub mod actions;
pub mod browser;
pub mod chart;
pub mod clock;
pub mod embed;
pub mod form;
pub mod i18n;
pub mod inspector;
pub mod lanes;
pub mod lesson;
pub mod live;
pub mod log;
pub mod map;
pub mod markup;
pub mod metrics;
pub mod plot;
pub mod reduce;
pub mod sendlab;
pub mod startup;
pub mod state;
pub mod traffic;

// Talc instead of the default dlmalloc: made for wasm, smaller and faster (docs/PERFORMANCE.md).
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
