(defproject elle-si "0.1.0-SNAPSHOT"
  :description "Elle's checkers, backed by elle-si's native checker: a drop-in for elle.list-append/check and elle.rw-register/check in Jepsen tests."
  :license {:name "same as elle-si"}
  :dependencies [[org.clojure/clojure "1.11.1"]]
  ;; Debian's maven repository only: the build works offline. ^:replace
  ;; keeps lein from reaching for Maven Central and Clojars.
  :repositories ^:replace [["debian" {:url "file:///usr/share/maven-repo"
                                      :checksum :ignore
                                      :snapshots false}]]
  :plugin-repositories ^:replace [["debian" {:url "file:///usr/share/maven-repo"
                                             :checksum :ignore
                                             :snapshots false}]]
  :source-paths ["src/clj"]
  :java-source-paths ["src/java"]
  :test-paths ["test"]
  :javac-options ["--release" "17" "-Xlint:-options"]
  :jvm-opts ["-Xcheck:jni"]
  ;; The jar carries the native library: `lein jar` and `lein install` put
  ;; the checkout's cargo build (cargo build --release -p elle-si-jni)
  ;; under elle_si/native/<os>-<arch>/, and refuse to make a jar without
  ;; one. `lein test` loads the library from the checkout instead.
  :filespecs [{:type :fn
               :fn (fn [project]
                     (load-file (str (:root project) "/build/bundle_native.clj"))
                     ((resolve 'elle-si.build.bundle-native/filespec) project))}]
  ;; `lein install` writes its pom.xml here, not beside project.clj.
  :pom-location "target/"
  :profiles {:bench {:source-paths ["bench"]
                     :java-source-paths ["bench/java"]
                     :jvm-opts ^:replace ["-Xmx4g" "-XX:+UseParallelGC"]}
             ;; `lein fuzz DIR SECONDS`: bench/elle_si/fuzz.clj, with JNI
             ;; checked as `lein test` checks it, in a heap a runaway
             ;; result would fill.
             :fuzz {:source-paths ["bench"]
                    :jvm-opts ^:replace ["-Xcheck:jni" "-Xmx2g"]}}
  :aliases {"bench" ["with-profile" "+bench" "run" "-m" "elle-si.bench"]
            "fuzz" ["with-profile" "+fuzz" "run" "-m" "elle-si.fuzz"]})
