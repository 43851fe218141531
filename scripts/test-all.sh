#!/usr/bin/env bash
# Runs every test: the Rust suite (unit, integration, property), then the
# Clojure bridge's `lein test` against the freshly built native library.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --all-targets
if [ -d clj ]; then
  cargo build --release --features jni --lib
  (cd clj && lein test)
fi
