package elle_si;

/**
 * One streamed check: the sink of a {@link HistoryEncoder}, whose chunks go
 * to a decoding thread on the native side while the encoder goes on. Use
 * it once: feed it, then {@link #finish}; {@link #close} abandons it if it
 * was not finished (call it in a finally). The handle is given back to the
 * native side exactly once, under this object's lock.
 */
public final class NativeStream implements HistoryEncoder.Sink, AutoCloseable {
    private long handle;
    private long feedNanos;

    /** Starts the check; the options are an EDN map (see elle-si.core). */
    public NativeStream(String options) {
        handle = Native.streamOpen(options);
    }

    private long live() {
        if (handle == 0) throw new IllegalStateException("elle-si: the native stream is closed");
        return handle;
    }

    @Override
    public synchronized void accept(byte[] values, int valuesLen, byte[] ops, int opsLen) {
        long t0 = System.nanoTime();
        Native.streamFeed(live(), values, valuesLen, ops, opsLen);
        feedNanos += System.nanoTime() - t0;
    }

    /** Checks the history fed so far; the result map as EDN. */
    public synchronized String finish() {
        long h = live();
        handle = 0;
        return Native.streamFinish(h);
    }

    @Override
    public synchronized void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            Native.streamAbort(h);
        }
    }

    /** Time spent handing chunks over (copying them in, and waiting for a decoder that fell behind). */
    public synchronized long feedNanos() {
        return feedNanos;
    }
}
