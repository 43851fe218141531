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
# The installed jar as a Jepsen project uses it: `lein install` bundles the
# library built above, and clj/test-project loads it from the jar, with no
# ELLE_SI_LIB and no java.library.path.
if [ -d clj/test-project ]; then
  (cd clj && lein install)
  (cd clj/test-project && env -u ELLE_SI_LIB lein test)
fi
