(ns elle-si.platform
  "Where the jar keeps elle-si's native library for each platform:
  elle_si/native/<os>-<arch>/<library file>, e.g.
  elle_si/native/linux-x86_64/libelle_si_jni.so. The loader (elle-si.native)
  looks up the running JVM's platform here; the build (build/bundle_native.clj,
  run by `lein jar` and `lein install`) files each cargo build under its
  platform. No dependencies: the build loads this file into Leiningen.")

(def library-files
  "The library's file name, per operating system."
  {"linux"   "libelle_si_jni.so"
   "macos"   "libelle_si_jni.dylib"
   "windows" "elle_si_jni.dll"})

(def rust-targets
  "The platform a cargo --target triple builds for. A build without
  --target (target/release) is for the platform of the JVM that runs the
  build."
  {"x86_64-unknown-linux-gnu"  "linux-x86_64"
   "aarch64-unknown-linux-gnu" "linux-aarch64"
   "x86_64-apple-darwin"       "macos-x86_64"
   "aarch64-apple-darwin"      "macos-aarch64"
   "x86_64-pc-windows-msvc"    "windows-x86_64"
   "aarch64-pc-windows-msvc"   "windows-aarch64"})

(defn- os-name
  [^String os]
  (let [os (.toLowerCase os)]
    (cond (.startsWith os "linux")   "linux"
          (or (.startsWith os "mac") (.startsWith os "darwin")) "macos"
          (.startsWith os "windows") "windows"
          :else (.replaceAll os "[^a-z0-9]+" ""))))

(defn- arch-name
  [^String arch]
  (case (.toLowerCase arch)
    ("amd64" "x86_64" "x86-64" "x64") "x86_64"
    ("aarch64" "arm64")               "aarch64"
    (.replaceAll (.toLowerCase arch) "[^a-z0-9_]+" "")))

(defn platform
  "The platform's folder name, \"linux-x86_64\": this JVM's, or that of the
  given os.name and os.arch."
  ([] (platform (System/getProperty "os.name") (System/getProperty "os.arch")))
  ([os arch] (str (os-name os) "-" (arch-name arch))))

(defn library-resource
  "The library's path inside the jar for a platform (nil for an operating
  system elle-si has no library name for)."
  [platform]
  (let [os (first (.split ^String platform "-" 2))]
    (when-let [f (library-files os)]
      (str "elle_si/native/" platform "/" f))))
