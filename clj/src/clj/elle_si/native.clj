(ns elle-si.native
  "Finds and loads elle-si's native library (libelle_si.so, the JNI bridge),
  and calls it. Looks, in order, at the ELLE_SI_LIB environment variable (the
  library file, or the directory holding it), at java.library.path, and at
  the cargo build of the elle-si checkout this library was compiled from
  (target/release, then target/debug)."
  (:require [clojure.java.io :as io]
            [clojure.string :as str])
  (:import (elle_si HistoryEncoder Native NativeStream)
           (java.io File)))

(def build-command
  "What builds the library, in the elle-si repository."
  "cargo build --release --features jni --lib")

(def lib-file
  "The library's file name on this platform (libelle_si.so on Linux)."
  (System/mapLibraryName "elle_si"))

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
  (ex-info
    (str "elle-si's native library " lib-file " was not found (tried: "
         (str/join "; " tried) ").\n"
         "Build it in the elle-si repository with `" build-command "`, then "
         "either set ELLE_SI_LIB=/path/to/elle-si/target/release/" lib-file
         " or add -Djava.library.path=/path/to/elle-si/target/release to the JVM options.")
    {:type :elle-si/no-native-library, :tried tried}))

(defn- try-load
  "Loads a library file; returns nil, or why not."
  [^File f]
  (try (Native/load (.getAbsolutePath f))
       nil
       (catch UnsatisfiedLinkError e
         (str f ": " (.getMessage e)))))

(defn- verify!
  "Calls into the library, so that a library without the JNI entry points
  (built without --features jni) or from another version fails here, once,
  with a clear message."
  [where]
  (let [v (try (Native/version)
               (catch UnsatisfiedLinkError _
                 (throw (ex-info (str "The native library loaded from " where
                                      " has no JNI entry points: it was built without the jni feature. Rebuild it with `"
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
    (let [from-path (try (Native/loadLibrary "elle_si")
                         nil
                         (catch UnsatisfiedLinkError e
                           (str "java.library.path: " (.getMessage e))))]
      (if-not from-path
        (verify! "java.library.path")
        (loop [[f & more] (distinct (repo-candidates))
               tried      [from-path]]
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
