(ns elle-si.native
  "Finds and loads elle-si's native library (libelle_si_jni.so, the JNI bridge),
  and calls it. Looks, in order, at the ELLE_SI_LIB environment variable (the
  library file, or the directory holding it), at java.library.path, at the
  library this jar carries for the JVM's platform (elle_si/native/<os>-<arch>/,
  see elle-si.platform; copied to a temporary file and loaded from there),
  and at the cargo build of the elle-si checkout this library was compiled
  from (target/release, then target/debug)."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [elle-si.platform :as platform])
  (:import (elle_si HistoryEncoder Native NativeStream)
           (java.io File)))

(def build-command
  "What builds the library, in the elle-si repository."
  "cargo build --release -p elle-si-jni")

(def lib-file
  "The library's file name on this platform (libelle_si_jni.so on Linux)."
  (System/mapLibraryName "elle_si_jni"))

(defn- repo-candidates
  "Cargo outputs of the elle-si checkouts around this library: the one that
  holds the compiled elle_si/Native.class (clj/target/classes inside the
  repo), and the working directory or its parent."
  []
  (let [class-dir (some-> (io/resource "elle_si/Native.class")
                          (as-> u (when (= "file" (.getProtocol ^java.net.URL u))
                                    (io/file (.toURI ^java.net.URL u)))))
        roots (concat (when class-dir
                        (take 6 (iterate #(some-> ^File % .getParentFile)
                                         (.getParentFile ^File class-dir))))
                      [(io/file ".") (io/file "..")])]
    (for [^File root roots
          :when (and root (.isFile (io/file root "Cargo.toml")))
          profile ["release" "debug"]]
      (.getCanonicalFile (io/file root "target" profile lib-file)))))

(defn- missing
  [tried]
  (let [p (platform/platform)]
    (ex-info
      (str "elle-si has no native library for this platform, " p ": this jar carries none for it"
           (when-let [r (platform/library-resource p)] (str " (" r ")"))
           ", and none was found elsewhere (tried: " (str/join "; " tried) ").\n"
           "Build it in an elle-si checkout with `" build-command "`, then either run "
           "`lein install` in its clj/ (the jar then carries it) or set "
           "ELLE_SI_LIB=/path/to/elle-si/target/release/" lib-file ".")
      {:type :elle-si/no-native-library, :platform p, :tried tried})))

(defn- try-load
  "Loads a library file; returns nil, or why not."
  [^File f]
  (try (Native/load (.getAbsolutePath f))
       nil
       (catch UnsatisfiedLinkError e
         (str f ": " (.getMessage e)))))

(defn- verify!
  "Calls into the library, so that a library without the JNI entry points
  (another library of that name) or from another version fails here, once,
  with a clear message."
  [where]
  (let [v (try (Native/version)
               (catch UnsatisfiedLinkError _
                 (throw (ex-info (str "The native library loaded from " where
                                      " has no JNI entry points: it is not elle-si's bridge. Build it with `"
                                      build-command "`.")
                                 {:type :elle-si/no-native-library}))))
        [_ wire] (str/split v #" ")]
    (when-not (= (str HistoryEncoder/WIRE_VERSION) wire)
      (throw (ex-info (str "The native library loaded from " where " (" v
                           ") reads wire version " wire ", but this Clojure library writes version "
                           HistoryEncoder/WIRE_VERSION ". Rebuild both from one checkout with `"
                           build-command "`.")
                      {:type :elle-si/version-mismatch})))
    {:version v, :from where}))

(defn- load-bundled
  "Loads the library the jar carries for this platform: {:from url}, or
  {:tried why-not}."
  []
  (let [p (platform/platform)]
    (if-let [r (platform/library-resource p)]
      (try (if-let [url (Native/loadResource r)]
             {:from url}
             {:tried (str "the jar: no " r)})
           (catch UnsatisfiedLinkError e
             {:tried (str "the jar's " r ", copied to java.io.tmpdir ("
                          (System/getProperty "java.io.tmpdir") "): " (.getMessage e)
                          " (is it mounted noexec? set -Djava.io.tmpdir to another directory)")})
           (catch java.io.IOException e
             {:tried (str "the jar's " r ": could not copy it to java.io.tmpdir ("
                          (System/getProperty "java.io.tmpdir") "): " e)}))
      {:tried (str "the jar: no library name for the operating system of " p)})))

(defn- load!
  []
  (if-let [env (System/getenv "ELLE_SI_LIB")]
    ;; An explicit choice: no falling back to something else.
    (let [f (io/file env)
          f (if (.isDirectory f) (io/file f lib-file) f)]
      (when-not (.isFile f)
        (throw (missing [(str "ELLE_SI_LIB=" env ": no such file")])))
      (when-let [why (try-load f)]
        (throw (missing [(str "ELLE_SI_LIB=" why)])))
      (verify! (str f)))
    (let [from-path (try (Native/loadLibrary "elle_si_jni")
                         nil
                         (catch UnsatisfiedLinkError e
                           (str "java.library.path: " (.getMessage e))))
          bundled   (when from-path (load-bundled))]
      (cond
        (not from-path)   (verify! "java.library.path")
        (:from bundled)   (verify! (:from bundled))
        :else
        (loop [[f & more] (distinct (repo-candidates))
               tried      [from-path (:tried bundled)]]
          (cond (nil? f)        (throw (missing tried))
                (not (.isFile ^File f)) (recur more (conj tried (str f ": not built")))
                :else (if-let [why (try-load f)]
                        (recur more (conj tried why))
                        (verify! (str f)))))))))

(defonce ^:private loaded (atom nil))

(defn ensure-loaded!
  "Loads the library once; returns {:version ..., :from ...}. Throws an
  ex-info saying how to build the library when it cannot be found; a later
  call tries again."
  []
  (or @loaded
      (locking loaded
        (or @loaded (reset! loaded (load!))))))

(defn check-encoded
  "Checks a history encoded by a HistoryEncoder; options is an EDN string.
  Returns the result map's EDN text."
  ^String [^HistoryEncoder enc ^String options]
  (ensure-loaded!)
  (Native/checkEncoded (.values enc) (.valuesLength enc)
                       (.ops enc) (.opsLength enc) options))

(defn open-stream
  "Starts a streamed check with options (an EDN string): a NativeStream to
  give core/encode as its sink, then to .finish (and to .close in a
  finally)."
  ^NativeStream [^String options]
  (ensure-loaded!)
  (NativeStream. options))

(defn check-file
  "Checks a history file; returns the result map's EDN text."
  ^String [^String path ^String options]
  (ensure-loaded!)
  (Native/checkFile path options))
