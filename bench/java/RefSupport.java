// Helpers shared by the Java 17 references of issue 45 (CommitLogReference, StoreReference):
// freeing a direct or mapped buffer at once, the usage error of their options with its report
// and exit, the size-suffix number parser, and the median of their runs.
// bench/java_reference.sh compiles this file with the reference it runs.

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;

final class RefSupport {
    private RefSupport() {}

    // ---------------------------------------------------------------- options

    static final class UsageError extends Exception {
        private static final long serialVersionUID = 1L;
        UsageError(String m) { super(m); }
    }

    // A bad command line: `<program>: <what> (--help for usage)` on stderr, exit status 2.
    static void exitUsage(String program, UsageError e) {
        System.err.println(program + ": " + e.getMessage() + " (--help for usage)");
        System.exit(2);
    }

    // A whole number in min..max, with an optional k, m or g (binary) suffix; opt names the
    // option in the error.
    static long parseCount(String opt, String v, long min, long max) throws UsageError {
        String s = v.trim().toLowerCase(Locale.ROOT);
        long mult = 1;
        if (!s.isEmpty()) {
            char c = s.charAt(s.length() - 1);
            if (c == 'k') mult = 1L << 10; else if (c == 'm') mult = 1L << 20; else if (c == 'g') mult = 1L << 30;
            if (mult != 1) s = s.substring(0, s.length() - 1);
        }
        long n;
        try {
            n = Math.multiplyExact(Long.parseLong(s), mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new UsageError(opt + ": '" + v + "' is not a whole number");
        }
        if (n < min || n > max) throw new UsageError(opt + ": " + v + " is out of range (" + min + ".." + max + ")");
        return n;
    }

    // ---------------------------------------------------------------- runs

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int k = s.length;
        return k % 2 == 1 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
    }

    // ---------------------------------------------------------------- unmapping

    // MappedByteBuffers and direct buffers are otherwise freed by the GC; a log or a store that
    // deletes its files releases them at once (RocketMQ's UtilAll.cleanBuffer, Netty, Lucene do
    // the same).
    static final Object UNSAFE;
    static final Method INVOKE_CLEANER;
    static {
        Object u = null;
        Method m = null;
        try {
            Class<?> c = Class.forName("sun.misc.Unsafe");
            Field f = c.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            u = f.get(null);
            m = c.getMethod("invokeCleaner", ByteBuffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            u = null;
            m = null;
        }
        UNSAFE = u;
        INVOKE_CLEANER = m;
    }

    // Frees a direct buffer (a MappedByteBuffer is one) now; a heap buffer, or a JVM without
    // Unsafe.invokeCleaner, leaves it to the GC.
    static void free(ByteBuffer b) {
        if (b == null || !b.isDirect() || INVOKE_CLEANER == null) return;
        try {
            INVOKE_CLEANER.invoke(UNSAFE, b);
        } catch (ReflectiveOperationException e) {
            // left to the GC
        }
    }
}
