//! Test program: a fake cloud metadata server (see `volpex_tests::metadata`), run inside
//! a test host's network namespace on the clouds' link-local address.
//!
//! `fake_metadata aws|gcp|azure ADDR:PORT MODEFILE`: answers as that cloud's server,
//! in the mode MODEFILE names (`quiet`, `notice`, `garbage`; read at every request,
//! `quiet` while it is missing), until it is killed.

use std::net::TcpListener;

use volpex_tests::metadata::{self, Cloud, Mode};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(cloud), Some(addr), Some(file)) = (
        args.get(1).and_then(|c| Cloud::named(c)),
        args.get(2),
        args.get(3),
    ) else {
        eprintln!("usage: fake_metadata aws|gcp|azure ADDR:PORT MODEFILE");
        std::process::exit(2);
    };
    let listener = match TcpListener::bind(addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fake_metadata: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    let deadline = metadata::deadline();
    eprintln!("fake_metadata: {} on {addr}", cloud.name());
    for conn in listener.incoming().flatten() {
        let mode = std::fs::read_to_string(file)
            .ok()
            .and_then(|m| Mode::named(&m))
            .unwrap_or(Mode::Quiet);
        metadata::serve(conn, cloud, mode, deadline);
    }
}
