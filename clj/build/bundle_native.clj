(ns elle-si.build.bundle-native
  "The jar's native libraries: `lein jar` and `lein install` (through
  :filespecs in project.clj) file each cargo build of libelle_si_jni found in
  the checkout under its platform's folder (see elle-si.platform) and put
  them in the jar. target/release is the build for the platform of the JVM
  running Leiningen; target/<triple>/release, a cross build (`cargo build
  --release -p elle-si-jni --target <triple>`), for the triple's. With
  no library built the jar is refused, not made without one."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [leiningen.core.main :as main])
  (:import (java.io File)))

(load-file (str (io/file (.getParentFile (io/file *file*)) ".." "src" "clj" "elle_si" "platform.clj")))

(def build-command "cargo build --release -p elle-si-jni")

(defn- library
  "The cargo output for a platform in a target directory, with where it goes."
  [^File dir platform]
  (when-let [resource (elle-si.platform/library-resource platform)]
    {:file     (io/file dir (last (str/split resource #"/")))
     :platform platform
     :resource resource}))

(defn- candidates
  [^File target]
  (cons (library (io/file target "release") (elle-si.platform/platform))
        (for [[triple platform] elle-si.platform/rust-targets]
          (library (io/file target triple "release") platform))))

(defn- newest-source
  "The most recently changed Rust source of the library and its bridge
  (src/ and jni/src/ of the checkout)."
  ^File [^File repo]
  (->> (concat (file-seq (io/file repo "src")) (file-seq (io/file repo "jni" "src")))
       (filter #(str/ends-with? (.getName ^File %) ".rs"))
       (apply max-key #(.lastModified ^File %) (io/file repo "Cargo.toml"))))

(defn filespec
  "Stages the built libraries under target/bundle and returns the filespec
  that puts them in the jar."
  [project]
  (let [repo   (.getParentFile (io/file (:root project)))
        target (io/file repo "target")
        found  (->> (candidates target)
                    (filter #(some-> ^File (:file %) .isFile))
                    (group-by :platform)
                    (map (fn [[_ libs]] (apply max-key #(.lastModified ^File (:file %)) libs))))
        stage  (io/file (:target-path project) "bundle")]
    (when (empty? found)
      ;; Leiningen has opened the jar already: leave no broken one behind.
      (doseq [uberjar? [false true]]
        (.delete (io/file ((requiring-resolve 'leiningen.jar/get-jar-filename) project uberjar?))))
      (main/abort (str "elle-si: no native library to put in the jar: " (:file (first (candidates target)))
                       " is not built.\nBuild it first, in " (.getPath repo) ": `" build-command
                       "` (for another platform, add --target <triple>: "
                       (str/join ", " (keys elle-si.platform/rust-targets)) ").")))
    (doseq [^File f (reverse (file-seq stage))] (.delete f))
    (let [src (newest-source repo)]
      (doseq [{:keys [^File file platform resource]} found]
        (when (> (.lastModified src) (.lastModified file))
          (main/warn (str "elle-si: warning: " file " is older than " src "; rebuild it with `"
                          build-command "`.")))
        (main/info (str "elle-si: bundling " file " for " platform " as " resource))
        (let [dest (io/file stage resource)]
          (io/make-parents dest)
          (io/copy file dest))))
    {:type :path, :path (str stage)}))
