package elle_si;

/**
 * The native methods of elle-si's JNI bridge (src/jni.rs, built with
 * {@code cargo build --release --features jni --lib}). Clojure cannot declare
 * native methods, so they live here; elle-si.native loads the library.
 */
public final class Native {
    private Native() {}

    /**
     * Loads the library from an absolute path. It must be called from this
     * class: the JVM binds a native library to the class loader of the code
     * that loads it, and this class's methods are looked up in its own.
     */
    public static void load(String path) {
        System.load(path);
    }

    /** Loads libelle_si from java.library.path. */
    public static void loadLibrary(String name) {
        System.loadLibrary(name);
    }

    /**
     * Checks a history in the wire encoding of {@link HistoryEncoder} and
     * returns Elle's result map as EDN. Throws IllegalArgumentException for
     * a bad history or bad options, IllegalStateException for a bug.
     */
    public static native String checkEncoded(byte[] values, int valuesLen, byte[] ops, int opsLen,
                                             String options);

    /**
     * Starts a streamed check (see {@link NativeStream}, which is how to
     * use these four): a handle for {@link #streamFeed}, then for exactly
     * one of {@link #streamFinish} and {@link #streamAbort}. Bad options
     * throw IllegalArgumentException here.
     */
    public static native long streamOpen(String options);

    /** Hands a chunk of a {@link HistoryEncoder} with a sink to the native decoder. */
    public static native void streamFeed(long handle, byte[] values, int valuesLen, byte[] ops,
                                         int opsLen);

    /** Ends the history, checks it and returns the result map as EDN; frees the handle. */
    public static native String streamFinish(long handle);

    /** Abandons a streamed check; frees the handle. */
    public static native void streamAbort(long handle);

    /** Checks a history file (Jepsen EDN, or the r(k,v,s,t) text format). */
    public static native String checkFile(String path, String options);

    /** The crate's version and the wire version it reads, e.g. "0.1.0 1". */
    public static native String version();

    /** Panics inside Rust: for the tests of the bridge's panic handling. */
    public static native void panicForTest(String message);
}
