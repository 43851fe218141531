package elle_si;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import clojure.lang.BigInt;
import clojure.lang.ILookup;
import clojure.lang.Keyword;
import clojure.lang.PersistentArrayMap;
import clojure.lang.PersistentHashMap;
import clojure.lang.PersistentVector;
import clojure.lang.RT;

/**
 * Writes a Jepsen history (op maps or jepsen.history.Op records, one
 * {@link #add} per element, in order) in the wire encoding that jni/src/wire.rs
 * documents and decodes: a table of the non-integer values, each once as EDN
 * text, and a stream of op records that refer to values by number.
 *
 * <p>Ops whose :process is not an integer (the nemesis) are recorded as
 * skipped. Everything that makes a client op unusable whatever follows
 * (not a map, no :type, a non-integer :index) throws
 * IllegalArgumentException at once; a :value that is not micro-ops is
 * recorded with a description, since the Rust side decides whether the
 * value is needed (as the EDN reader does).
 *
 * <p>Values are printed with {@code RT.printString}: callers bind
 * *print-length*, *print-level* and *print-namespace-maps* so that the text
 * is complete EDN. Not thread-safe: one encoder per history.
 *
 * <p>With a {@link Sink}, the encoding leaves in chunks as it grows (each
 * chunk whole records, and the value-table entries they are the first to
 * use), so that the native side decodes while this side still encodes; the
 * buffers are then reused and stay small.
 */
public final class HistoryEncoder {
    public static final int WIRE_VERSION = 2;

    /** Where a streaming encoder sends its chunks; the arrays are reused after the call. */
    public interface Sink {
        void accept(byte[] values, int valuesLen, byte[] ops, int opsLen);
    }

    private static final Keyword TYPE = Keyword.intern("type");
    private static final Keyword PROCESS = Keyword.intern("process");
    private static final Keyword INDEX = Keyword.intern("index");
    private static final Keyword TIME = Keyword.intern("time");
    private static final Keyword F = Keyword.intern("f");
    private static final Keyword VALUE = Keyword.intern("value");
    private static final Keyword INVOKE = Keyword.intern("invoke");
    private static final Keyword OK = Keyword.intern("ok");
    private static final Keyword FAIL = Keyword.intern("fail");
    private static final Keyword INFO = Keyword.intern("info");
    private static final Keyword APPEND = Keyword.intern("append");
    private static final Keyword R = Keyword.intern("r");
    private static final Keyword W = Keyword.intern("w");
    private static final Object ABSENT = new Object();
    /** A pending invocation's :value when it is nil (null means none pending). */
    private static final Object NIL = new Object();

    private static final long INLINE_MIN = -(1L << 62);
    private static final long INLINE_MAX = (1L << 62) - 1;

    private byte[] ops;
    private int opsLen;
    private byte[] values = new byte[1 << 12];
    private int valuesLen;
    private final HashMap<Object, Integer> ids = new HashMap<>();
    /** Elements added so far: the position of the next one. */
    private long position;
    /**
     * The :value of each process's outstanding invocation (NIL for nil,
     * ABSENT for none given), by process; null where none is outstanding.
     * Invocations go over without their micro-ops, which the completion
     * repeats: half the objects of a history are never walked. The value is
     * written where the checker needs it: for a :fail or :info completion
     * that carries none, and, by {@link #finish}, for an invocation that
     * never completed.
     */
    private Object[] pending = new Object[64];
    private HashMap<Long, Object> pendingFar;
    private final Sink sink;
    /** With a sink: the size of ops past which a chunk leaves. */
    private final int chunkBytes;

    public HistoryEncoder() {
        this(0);
    }

    /**
     * An encoder sized for a history of about {@code expectedOps} elements,
     * so that the buffer is not grown and copied along the way.
     */
    public HistoryEncoder(int expectedOps) {
        this(null, 0, (int) Math.min(Math.max(5L + 32L * Math.max(0, expectedOps), 1 << 16), 1 << 30));
    }

    /** An encoder that sends a chunk to {@code sink} every {@code chunkBytes} or so of ops. */
    public HistoryEncoder(Sink sink, int chunkBytes) {
        this(sink, Math.max(chunkBytes, 64), Math.max(chunkBytes, 64) + (1 << 12));
    }

    private HistoryEncoder(Sink sink, int chunkBytes, int capacity) {
        this.sink = sink;
        this.chunkBytes = chunkBytes;
        ops = new byte[capacity];
        ops[0] = 'E';
        ops[1] = 'L';
        ops[2] = 'S';
        ops[3] = 'I';
        ops[4] = WIRE_VERSION;
        opsLen = 5;
    }

    public byte[] ops() { return ops; }
    public int opsLength() { return opsLen; }
    public byte[] values() { return values; }
    public int valuesLength() { return valuesLen; }
    /** Number of elements added (client ops and skipped ones). */
    public long count() { return position; }

    // -- bytes

    /** Room for n more bytes of ops. */
    private void ensure(long n) {
        if (opsLen + n > ops.length) grow(n);
    }

    private void grow(long n) {
        long need = opsLen + n;
        if (need > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("history[" + position
                                               + "]: the history is too large to encode (over 2 GB)");
        }
        ops = java.util.Arrays.copyOf(ops, (int) Math.min(Integer.MAX_VALUE - 16,
                                                          Math.max(2L * ops.length, need)));
    }

    private void opsByte(int b) {
        ensure(1);
        ops[opsLen++] = (byte) b;
    }

    /** Writes x as a varint at b[p] (room checked by the caller); the next position. */
    private static int putUv(byte[] b, int p, long x) {
        while ((x & ~0x7FL) != 0) {
            b[p++] = (byte) ((x & 0x7F) | 0x80);
            x >>>= 7;
        }
        b[p++] = (byte) x;
        return p;
    }

    private void uv(long x) {
        ensure(10);
        opsLen = putUv(ops, opsLen, x);
    }

    private void sv(long i) {
        uv((i << 1) ^ (i >> 63));
    }

    private void opsBytes(byte[] b) {
        uv(b.length);
        if (opsLen + b.length > ops.length) {
            ops = java.util.Arrays.copyOf(ops, Math.max(ops.length * 2, opsLen + b.length));
        }
        System.arraycopy(b, 0, ops, opsLen, b.length);
        opsLen += b.length;
    }

    private void valuesEntry(byte[] b) {
        int need = valuesLen + 10 + b.length;
        if (need > values.length) {
            values = java.util.Arrays.copyOf(values, Math.max(values.length * 2, need));
        }
        long x = b.length;
        while ((x & ~0x7FL) != 0) {
            values[valuesLen++] = (byte) ((x & 0x7F) | 0x80);
            x >>>= 7;
        }
        values[valuesLen++] = (byte) x;
        System.arraycopy(b, 0, values, valuesLen, b.length);
        valuesLen += b.length;
    }

    // -- values

    /** The value as a long, if it is an integer that fits one. */
    private static Long integer(Object x) {
        if (x instanceof Long) return (Long) x;
        if (x instanceof Integer || x instanceof Short || x instanceof Byte) {
            return ((Number) x).longValue();
        }
        if (x instanceof BigInt) {
            BigInt b = (BigInt) x;
            if (b.bipart == null) return b.lpart;
            return b.bipart.bitLength() < 64 ? b.bipart.longValue() : null;
        }
        if (x instanceof BigInteger) {
            BigInteger b = (BigInteger) x;
            return b.bitLength() < 64 ? b.longValue() : null;
        }
        return null;
    }

    /** The reference to an inline integer, or -1 if x is not one. */
    private static long inline(Object x) {
        if (x instanceof Long) {
            long i = (Long) x;
            if (i >= INLINE_MIN && i <= INLINE_MAX) return ((i << 1) ^ (i >> 63)) << 1;
        }
        return -1;
    }

    private void ref(Object x) {
        long z = inline(x);
        if (z >= 0) {
            uv(z);
            return;
        }
        if (x == null) {
            uv(1);
            return;
        }
        Long l = integer(x);
        if (l != null && l >= INLINE_MIN && l <= INLINE_MAX) {
            long i = l;
            uv(((i << 1) ^ (i >> 63)) << 1);
            return;
        }
        Integer id = ids.get(x);
        if (id == null) {
            id = ids.size() + 1;
            ids.put(x, id);
            valuesEntry(RT.printString(x).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        uv(((long) id << 1) | 1);
    }

    /** Writes a list of values, n:uv ref*n. */
    private void refs(PersistentVector elems, int len) {
        // Every reference takes at most 10 bytes: room for all at once, and
        // the loop writes the common one, a small integer, without calls.
        ensure(10L + 10L * len);
        byte[] b = ops;
        int p = putUv(b, opsLen, len);
        for (int j = 0; j < len; j++) {
            long z = inline(elems.nth(j));
            if (z >= 0) {
                p = putUv(b, p, z);
            } else {
                opsLen = p;
                ref(elems.nth(j));
                b = ops;
                p = opsLen;
            }
        }
        opsLen = p;
    }

    // -- outstanding invocations

    private static boolean near(long p) {
        return p >= 0 && p < (1 << 20);
    }

    private void putPending(long p, Object value) {
        Object v = value == null ? NIL : value;
        if (near(p)) {
            int i = (int) p;
            if (i >= pending.length) {
                pending = java.util.Arrays.copyOf(pending, Math.max(2 * pending.length, i + 1));
            }
            pending[i] = v;
        } else {
            if (pendingFar == null) pendingFar = new HashMap<>();
            pendingFar.put(p, v);
        }
    }

    /** Removes and returns the outstanding invocation's value, or null. */
    private Object takePending(long p) {
        if (near(p)) {
            int i = (int) p;
            if (i >= pending.length) return null;
            Object v = pending[i];
            pending[i] = null;
            return v;
        }
        return pendingFar == null ? null : pendingFar.remove(p);
    }

    /**
     * Writes a :value (absent, nil, micro-ops, or a description of what was
     * found instead) and returns its state for the record's head.
     */
    private int value(Object value) {
        if (value == ABSENT) return 0;
        if (value == null || value == NIL) return 1;
        int mark = opsLen;
        String err = microOps(value);
        if (err == null) return 2;
        opsLen = mark;
        opsBytes(err.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return 3;
    }

    /**
     * Ends the history: writes the :value of every invocation that never
     * completed (the checker treats them as indeterminate). Call once,
     * after the last {@link #add}; returns this.
     */
    public HistoryEncoder finish() {
        for (int i = 0; i < pending.length; i++) {
            if (pending[i] != null) trailer(i, pending[i]);
        }
        if (pendingFar != null) {
            for (Map.Entry<Long, Object> e : pendingFar.entrySet()) trailer(e.getKey(), e.getValue());
        }
        java.util.Arrays.fill(pending, null);
        pendingFar = null;
        if (sink != null) flush();
        return this;
    }

    /** Sends what was written since the last chunk. */
    private void flush() {
        sink.accept(values, valuesLen, ops, opsLen);
        valuesLen = 0;
        opsLen = 0;
    }

    private void trailer(long p, Object v) {
        opsByte(0x03);
        sv(p);
        int headAt = opsLen;
        opsByte(0);
        ops[headAt] = (byte) value(v);
    }

    // -- ops

    private static Object get(Object op, Keyword k, Object notFound) {
        if (op.getClass() == PersistentArrayMap.class) return ((PersistentArrayMap) op).valAt(k, notFound);
        if (op instanceof ILookup) return ((ILookup) op).valAt(k, notFound);
        Map<?, ?> m = (Map<?, ?>) op;
        return m.containsKey(k) ? m.get(k) : notFound;
    }

    /** "a map {:a 1}": what a value is, for messages. */
    static String describe(Object x) {
        String kind;
        if (x == null) kind = "nil";
        else if (x instanceof Keyword) kind = "a keyword";
        else if (x instanceof String) kind = "a string";
        else if (x instanceof Number) kind = "a number";
        else if (x instanceof Boolean) kind = "a boolean";
        else if (x instanceof clojure.lang.IPersistentMap || x instanceof Map) kind = "a map";
        else if (x instanceof clojure.lang.IPersistentSet || x instanceof java.util.Set) kind = "a set";
        else if (x instanceof clojure.lang.IPersistentVector) kind = "a vector";
        else if (x instanceof List) kind = "a list";
        else if (x instanceof clojure.lang.Symbol) kind = "a symbol";
        else kind = "a " + x.getClass().getName();
        if (x == null) return kind;
        String text = RT.printString(x);
        if (text.length() > 80) text = text.substring(0, 77) + "...";
        return kind + " " + text;
    }

    private IllegalArgumentException bad(Object process, Object index, String message) {
        StringBuilder where = new StringBuilder("history[").append(position).append(']');
        if (index != null || process != null) {
            where.append(" (");
            if (index != null) where.append(":index ").append(index);
            if (index != null && process != null) where.append(", ");
            if (process != null) where.append(":process ").append(process);
            where.append(')');
        }
        return new IllegalArgumentException(where + ": " + message);
    }

    private static boolean isOp(Object op) {
        // Exact classes first: on a class with many interfaces, a failed
        // interface test scans them all, on every op.
        Class<?> c = op == null ? null : op.getClass();
        if (c == PersistentArrayMap.class || c == PersistentHashMap.class) return true;
        return (op instanceof ILookup || op instanceof Map) && !(op instanceof clojure.lang.IPersistentVector);
    }

    /** Adds the next element of the history; returns this, for reduce. */
    public HistoryEncoder add(Object op) {
        if (!isOp(op)) {
            throw bad(null, null, "expected an op map {:type ..., :process ..., :value ...}, found "
                      + describe(op));
        }
        addFields(get(op, PROCESS, null), get(op, INDEX, null), get(op, TYPE, null),
                  get(op, TIME, null), get(op, F, null), get(op, VALUE, ABSENT));
        if (sink != null && opsLen >= chunkBytes) flush();
        return this;
    }

    private void addFields(Object process, Object index, Object type, Object time0,
                           Object f, Object value) {
        Long p = integer(process);
        if (p == null) {
            // Not a client op (the nemesis, or no :process): skipped, as
            // jepsen.history/client-ops does.
            opsByte(0x02);
            position++;
            return;
        }
        Long ix = null;
        if (index != null) {
            ix = integer(index);
            if (ix == null) {
                throw bad(process, null, ":index must be an integer, found " + describe(index));
            }
        }
        int head;
        if (type == INVOKE) head = 0;
        else if (type == OK) head = 1;
        else if (type == FAIL) head = 2;
        else if (type == INFO) head = 3;
        else if (type == null) {
            throw bad(process, index, "client op has no :type; every op needs :type :invoke, :ok, :fail or :info");
        } else {
            throw bad(process, index, "unknown :type " + RT.printString(type)
                      + ": expected :invoke, :ok, :fail or :info");
        }
        Long time = integer(time0);
        if (ix != null) head |= 4;
        if (time != null) head |= 8;
        opsByte(0x01);
        int headAt = opsLen;
        opsByte(head);
        sv(p);
        if (ix != null) sv(ix);
        if (time != null) sv(time);
        ref(f);
        int state;
        if (type == INVOKE) {
            putPending(p, value);
            state = 0;
        } else {
            Object inv = takePending(p);
            if ((value == ABSENT || value == null) && type != OK && inv != null) {
                // Jepsen copies the invocation's value into a failed or
                // indeterminate completion; where it did not, the
                // invocation says what was attempted.
                state = value(inv);
            } else {
                state = value(value);
            }
        }
        ops[headAt] = (byte) (head | (state << 4));
        position++;
    }

    /** A list that can hold micro-ops or elements (a set is a List in Clojure, but unordered). */
    private static boolean isList(Object x) {
        if (x == null) return false;
        if (x.getClass() == PersistentVector.class) return true;
        return x instanceof List && !(x instanceof clojure.lang.IPersistentSet);
    }

    /** The size of a list isList accepts; casts to the exact class skip interface checks. */
    private static int size(Object l) {
        if (l.getClass() == PersistentVector.class) return ((PersistentVector) l).count();
        return ((List<?>) l).size();
    }

    /** Element i of a list isList accepts, or null past its end. */
    private static Object nth(Object l, int i) {
        if (l.getClass() == PersistentVector.class) {
            PersistentVector v = (PersistentVector) l;
            return i < v.count() ? v.nth(i) : null;
        }
        List<?> x = (List<?>) l;
        return i < x.size() ? x.get(i) : null;
    }

    /** Writes the micro-ops, or returns what was found instead. */
    private String microOps(Object value) {
        if (!isList(value)) return describe(value);
        int n = size(value);
        uv(n);
        for (int i = 0; i < n; i++) {
            Object m = nth(value, i);
            if (!isList(m)) {
                return describe(value) + ", whose element " + i
                       + " is not a micro-op like [:append k v] or [:r k v] but " + describe(m);
            }
            Object mop = m;
            int size = size(mop);
            Object f = nth(mop, 0);
            int fn;
            if (f == APPEND || "append".equals(f)) fn = 0;
            else if (f == R || "r".equals(f)) fn = 1;
            else if (f == W || "w".equals(f)) fn = 2;
            else {
                return describe(value) + ", whose micro-op " + i + " has the unknown function "
                       + describe(f) + " (expected :append, :r or :w)";
            }
            // Elle reads [:r k] as [:r k nil]; everything else needs [f k v].
            if (size > 3 || size < 2 || (size == 2 && fn != 1)) {
                return describe(value) + ", whose micro-op " + i + " " + describe(m)
                       + " is not of the form [f k v]";
            }
            Object v = nth(mop, 2);
            int arg;
            if (v == null) arg = 0;
            else if (fn == 1 && isList(v)) arg = 2;
            else arg = 1;
            opsByte(fn | (arg << 2));
            ref(nth(mop, 1));
            if (arg == 1) {
                ref(v);
            } else if (arg == 2) {
                if (v.getClass() == PersistentVector.class) {
                    // The common case, without the List interface's detour.
                    PersistentVector elems = (PersistentVector) v;
                    refs(elems, elems.count());
                } else {
                    List<?> elems = (List<?>) v;
                    int len = elems.size();
                    uv(len);
                    for (int j = 0; j < len; j++) ref(elems.get(j));
                }
            }
        }
        return null;
    }
}
