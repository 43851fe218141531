#!/usr/bin/env bash
# Runs every test: the Rust suite (unit, integration, property), then the
# Clojure bridge's `lein test` against the freshly built native library.
# Tests that read the shared corpus (../shared/histories, beside the
# checkout) skip, saying so, when it is absent; ELLE_SI_REQUIRE_CORPUS=1
# (as CI sets) makes its absence a failure instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests time nothing: build them without link-time optimization and in
# parallel codegen units, which halves the build on CI's two cores (the
# release profile's own settings are for users' runs and benchmarks). A
# setting already in the environment wins.
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-16}"
if [ -d clj ] && ! command -v lein >/dev/null 2>&1; then
  echo "test-all: the Clojure tests need leiningen (apt-get install leiningen); .ci/run installs it" >&2
  exit 1
fi
if [ ! -d ../shared/histories ]; then
  echo "test-all: ../shared/histories is absent: the tests that read the shared corpus are skipped"
fi
cargo test --release --workspace --all-targets
if [ -d clj ]; then
  cargo build --release -p elle-si-jni
  (cd clj && lein test)
fi
# The installed jar as a Jepsen project uses it: `lein install` bundles the
# library built above, and clj/test-project loads it from the jar, with no
# ELLE_SI_LIB and no java.library.path.
if [ -d clj/test-project ]; then
  (cd clj && lein install)
  (cd clj/test-project && env -u ELLE_SI_LIB lein test)
fi
