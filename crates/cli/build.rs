//! With the `ui` feature, the binary carries the folder SBP_UI_DIR names: rebuilt when it or
//! anything in it changes.
fn main() {
    println!("cargo:rerun-if-env-changed=SBP_UI_DIR");
    if std::env::var_os("CARGO_FEATURE_UI").is_some() {
        match std::env::var("SBP_UI_DIR") {
            Ok(dir) => println!("cargo:rerun-if-changed={dir}"),
            Err(_) => panic!(
                "the `ui` feature needs SBP_UI_DIR: the absolute path of the site to carry \
                 (./scripts/package.sh sets it)"
            ),
        }
    }
}
