//! Entry point: the command-line tool natively, the web app when built for wasm32.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(profile_model::cli::run(std::env::args().skip(1).collect()));
}

#[cfg(target_arch = "wasm32")]
fn main() {
    profile_model::ui::mount();
}
