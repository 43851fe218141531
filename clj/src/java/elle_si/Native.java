package elle_si;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The native methods of elle-si's JNI bridge (the elle-si-jni crate in jni/,
 * built with {@code cargo build --release -p elle-si-jni}). Clojure cannot declare
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

    /** Loads libelle_si_jni from java.library.path. */
    public static void loadLibrary(String name) {
        System.loadLibrary(name);
    }

    /**
     * Loads the library the jar carries at {@code resource} (a path such as
     * {@code elle_si/native/linux-x86_64/libelle_si_jni.so}): copies it to a new
     * temporary file that only this user can read (a unique name in
     * java.io.tmpdir), loads that, and deletes it. Linux and macOS keep a
     * loaded library mapped once its file is gone; where the file cannot be
     * deleted while loaded (Windows), it is deleted when the JVM exits.
     * Returns the resource's URL, or null when the jar carries no such
     * resource.
     */
    public static String loadResource(String resource) throws IOException {
        URL url = Native.class.getResource("/" + resource);
        if (url == null) {
            return null;
        }
        String file = resource.substring(resource.lastIndexOf('/') + 1);
        int dot = file.lastIndexOf('.');
        Path tmp = Files.createTempFile(dot > 0 ? file.substring(0, dot) + "-" : file + "-",
                                        dot > 0 ? file.substring(dot) : null);
        try {
            try (InputStream in = url.openStream()) {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            System.load(tmp.toAbsolutePath().toString());
        } finally {
            try {
                Files.delete(tmp);
            } catch (IOException e) {
                tmp.toFile().deleteOnExit();
            }
        }
        return url.toString();
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
