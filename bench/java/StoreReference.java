// Java 17 reference for issue 45's store rows: seed 000's employee store on a MappedByteBuffer,
// written as the seed's addRecord_MBB does it, with iolab's store suite's data (the same
// generator as src/suites/store_data_set.cpp). Plain javac, no libraries; bench/java/README.md
// says what is kept from the seed and what is assumed. Run it with bench/java_reference.sh store.
//
// Journal record (the seed's): 1-byte active flag, 4-byte data length, then the data:
//   len + last (the key), len + first, id, zip, employed byte, len + comments
// (ints big-endian, the ByteBuffer default the seed uses; strings UTF-8). The journal grows by a
// fixed step (1 MiB, iolab's mmap backend's step) and is re-mapped over its whole length, as the
// seed does. An in-memory HashMap<String, Long> maps last name -> offset. No force(): the data
// reaches the page cache only, one "commit" (nothing to do) per phase, like iolab's
// "one commit per phase, page cache only" rows.

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Random;

public final class StoreReference {

    static final class Employee {
        String last;  // the key
        String first;
        int id;
        int zip;
        boolean employed;
        String comments;

        boolean sameAs(Employee o) {
            return last.equals(o.last) && first.equals(o.first) && id == o.id && zip == o.zip
                && employed == o.employed && comments.equals(o.comments);
        }
    }

    // ---------------------------------------------------------------- the data (iolab's)

    static final String[] LAST = {"Smith", "Zhang", "Garcia", "Muller", "Rossi", "Kowalski", "Nguyen", "Silva",
                                  "Okafor", "Tanaka", "Dubois", "Novak", "Haddad", "Larsen", "Moreau", "Ivanova"};
    static final String[] FIRST = {"Ana", "Wei", "Maria", "Jonas", "Luca", "Ewa", "Minh", "Joao",
                                   "Chidi", "Yuki", "Claire", "Petr", "Rania", "Sofie", "Hugo", "Olga"};
    static final String TEXT =
        "joined the team in spring; prefers written notes; on call every third week; speaks three languages; "
      + "mentor for new hires; ";

    // store_data_set.cpp's make_record(i), bit for bit: unique keys (~15 bytes, "Kowalski-1a2b3c4d")
    // in no sorted order, comments of 20..80 bytes.
    static Employee makeRecord(long i) {
        long h = (i + 1) * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        Employee e = new Employee();
        int tag = (int) i * (int) 2654435761L;
        e.last = LAST[(int) (h & 15)] + String.format("-%08x", tag);
        e.first = FIRST[(int) ((h >>> 8) & 15)];
        e.id = (int) i;
        e.zip = (int) (10000 + (h >>> 16) % 90000);
        e.employed = ((h >>> 40) & 1) != 0;
        int len = (int) (20 + (h >>> 44) % 61);
        int from = (int) ((h >>> 24) % 40);
        e.comments = TEXT.substring(from, Math.min(TEXT.length(), from + len));
        return e;
    }

    // ---------------------------------------------------------------- the store (seed 000, MBB)

    static final class MappedStore implements AutoCloseable {
        final Path path;
        final RandomAccessFile journal;
        final FileChannel channel;
        final long step;
        MappedByteBuffer mbb;
        final List<MappedByteBuffer> oldMaps = new ArrayList<>();
        final HashMap<String, Long> employeeIdx = new HashMap<>();
        int currentEnd;
        int remaps;
        final byte[] scratch = new byte[256];   // decode buffer, grown on demand

        MappedStore(Path path, long step) throws IOException {
            this.path = path;
            this.step = step;
            journal = new RandomAccessFile(path.toFile(), "rw");
            channel = journal.getChannel();
            journal.setLength(step);
            mbb = channel.map(FileChannel.MapMode.READ_WRITE, 0, journal.length());
        }

        // addRecord_MBB: append at the end (no deleted records in these phases, so
        // getStorageLocation always answers "the end"), growing the file by a step and
        // re-mapping the whole file when the record does not fit.
        void addRecord(Employee emp) throws IOException {
            byte[] last = emp.last.getBytes(StandardCharsets.UTF_8);
            byte[] first = emp.first.getBytes(StandardCharsets.UTF_8);
            byte[] comments = emp.comments.getBytes(StandardCharsets.UTF_8);
            int datalen = last.length + first.length + comments.length + 12 + 9;
            int length = 5 + datalen;
            if ((long) currentEnd + length >= mbb.capacity()) {
                // the seed also calls mbb.force() here; left out: page cache only (see the header)
                long journalLen = mbb.capacity();
                while (currentEnd + length >= journalLen) journalLen += step;
                journal.setLength(journalLen);
                oldMaps.add(mbb);   // the seed leaves the old mapping to the GC; unmapped at close
                mbb = channel.map(FileChannel.MapMode.READ_WRITE, 0, journalLen);
                remaps++;
            }
            long offset = currentEnd;
            mbb.position(currentEnd);
            mbb.put((byte) 1);   // 1 = active record
            mbb.putInt(datalen);
            mbb.putInt(last.length);
            mbb.put(last);
            mbb.putInt(first.length);
            mbb.put(first);
            mbb.putInt(emp.id);
            mbb.putInt(emp.zip);
            mbb.put(emp.employed ? (byte) 1 : (byte) 0);
            mbb.putInt(comments.length);
            mbb.put(comments);
            currentEnd += length;
            employeeIdx.put(emp.last, offset);
        }

        // A get: look the key up, decode the record into a new Employee (absolute reads, one
        // reused byte[] for the strings' bytes).
        Employee getRecord(String last) {
            Long off = employeeIdx.get(last);
            if (off == null) return null;
            int p = (int) (long) off;
            if (mbb.get(p) != 1) return null;
            p += 5;
            Employee e = new Employee();
            int n = mbb.getInt(p);
            e.last = string(p + 4, n);
            p += 4 + n;
            n = mbb.getInt(p);
            e.first = string(p + 4, n);
            p += 4 + n;
            e.id = mbb.getInt(p);
            e.zip = mbb.getInt(p + 4);
            e.employed = mbb.get(p + 8) == 1;
            p += 9;
            n = mbb.getInt(p);
            e.comments = string(p + 4, n);
            return e;
        }

        String string(int at, int n) {
            byte[] b = n <= scratch.length ? scratch : new byte[n];
            mbb.get(at, b, 0, n);
            return new String(b, 0, n, StandardCharsets.UTF_8);
        }

        @Override public void close() throws IOException {
            for (MappedByteBuffer m : oldMaps) RefSupport.free(m);
            RefSupport.free(mbb);
            channel.close();
            journal.close();
        }
    }

    // ---------------------------------------------------------------- driver

    static final String USAGE =
        "usage: StoreReference [--records N] [--runs N] [--warmup N] [--step BYTES] [--seed N] [--dir PATH]\n"
      + "  defaults: 100000 records, 3 timed runs after 3 warm-up runs, a 1 MiB growth step, seed 45,\n"
      + "  scratch directory under $TMPDIR or /tmp.";

    static final List<String> OPTIONS = List.of("--records", "--runs", "--warmup", "--step", "--seed", "--dir");

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            System.err.println("StoreReference: could not remove " + p + ": " + e.getMessage());
        }
    }

    // One run on a fresh journal: the insert phase and the get phase timed separately, then every
    // record read back and compared (untimed). Returns {insert ns, get ns}.
    static long[] runOnce(Path file, Employee[] records, String[] getKeys, int[] getOrder, long step,
                          long[] sink) throws IOException {
        try (MappedStore store = new MappedStore(file, step)) {
            long t0 = System.nanoTime();
            for (Employee e : records) store.addRecord(e);
            long t1 = System.nanoTime();
            // gets: every key in a random order; fold what came back so nothing can be skipped
            long found = 0, fieldBytes = 0, numbers = 0;
            long t2 = System.nanoTime();
            for (String key : getKeys) {
                Employee e = store.getRecord(key);
                if (e != null) {
                    found++;
                    fieldBytes += e.last.length() + e.first.length() + e.comments.length();
                    numbers ^= ((long) e.id << 32 | (e.zip & 0xFFFFFFFFL)) ^ (e.employed ? 1 : 0);
                }
            }
            long t3 = System.nanoTime();
            // verification, untimed: the fold, then every record field by field, and the count
            long eFound = 0, eBytes = 0, eNumbers = 0;
            for (Employee e : records) {
                eFound++;
                eBytes += e.last.length() + e.first.length() + e.comments.length();
                eNumbers ^= ((long) e.id << 32 | (e.zip & 0xFFFFFFFFL)) ^ (e.employed ? 1 : 0);
            }
            if (found != eFound || fieldBytes != eBytes || numbers != eNumbers)
                throw new IOException("verify: the timed get pass got other records than were written ("
                                      + found + " found of " + eFound + ")");
            for (int j = 0; j < getKeys.length; j++) {
                Employee want = records[getOrder[j]];
                Employee got = store.getRecord(getKeys[j]);
                if (got == null) throw new IOException("verify: key " + want.last + " is missing");
                if (!got.sameAs(want)) throw new IOException("verify: key " + want.last + " holds a different value than was written");
            }
            if (store.employeeIdx.size() != records.length)
                throw new IOException("verify: " + store.employeeIdx.size() + " keys where " + records.length + " were inserted");
            sink[0] += store.remaps;
            return new long[] {t1 - t0, t3 - t2};
        } finally {
            deleteQuietly(file);
        }
    }

    public static void main(String[] args) {
        int records = 100_000, runs = 3, warmup = 3;
        long step = 1 << 20, seed = 45;
        Path dir = Paths.get(System.getenv().getOrDefault("TMPDIR", "/tmp"));
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i], v;
                int eq = a.indexOf('=');
                if (a.equals("--help") || a.equals("-h")) { System.out.println(USAGE); return; }
                if (a.startsWith("--") && eq > 0) { v = a.substring(eq + 1); a = a.substring(0, eq); }
                else if (!a.startsWith("--")) throw new RefSupport.UsageError("unexpected argument '" + a + "'");
                else if (!OPTIONS.contains(a)) throw new RefSupport.UsageError("unknown option " + a);
                else if (i + 1 < args.length) v = args[++i];
                else throw new RefSupport.UsageError(a + " needs a value");
                switch (a) {
                    case "--records": records = (int) RefSupport.parseCount(a, v, 1, 10_000_000); break;
                    case "--runs": runs = (int) RefSupport.parseCount(a, v, 1, 1000); break;
                    case "--warmup": warmup = (int) RefSupport.parseCount(a, v, 0, 1000); break;
                    case "--step": step = RefSupport.parseCount(a, v, 4096, 1L << 30); break;
                    case "--seed": seed = RefSupport.parseCount(a, v, Long.MIN_VALUE, Long.MAX_VALUE); break;
                    case "--dir": dir = Paths.get(v); break;
                    default: throw new RefSupport.UsageError("unknown option " + a);
                }
            }
            if (!Files.isDirectory(dir)) throw new RefSupport.UsageError("--dir " + dir + " is not a directory");
        } catch (RefSupport.UsageError e) {
            RefSupport.exitUsage("StoreReference", e);
            return;
        }

        Path scratch;
        try {
            scratch = Files.createTempDirectory(dir, "iolab-java-store-");
        } catch (IOException e) {
            System.err.println("StoreReference: cannot create a scratch directory in " + dir + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        final Path journal = scratch.resolve("employees.ejb");
        Thread hook = new Thread(() -> { deleteQuietly(journal); deleteQuietly(scratch); });
        Runtime.getRuntime().addShutdownHook(hook);
        int rc = 0;
        try {
            // the data set, untimed: records in insertion order, a random get order, and the get
            // keys as fresh String objects (as a request would bring them: hashed and compared,
            // not found by identity), made anew for every run
            Employee[] data = new Employee[records];
            for (int i = 0; i < records; i++) data[i] = makeRecord(i);
            int[] order = new int[records];
            for (int i = 0; i < records; i++) order[i] = i;
            Random rng = new Random(seed);
            for (int i = records - 1; i > 0; i--) {
                int j = rng.nextInt(i + 1);
                int t = order[i]; order[i] = order[j]; order[j] = t;
            }
            long dataBytes = 0;
            for (Employee e : data) dataBytes += 5 + 21 + e.last.length() + e.first.length() + e.comments.length();
            System.out.printf(Locale.ROOT, "# java StoreReference: java %s, records=%d (%d journal bytes) step=%d runs=%d warmup=%d dir=%s%n",
                              System.getProperty("java.version"), records, dataBytes, step, runs, warmup, scratch);
            long[] remaps = new long[1];
            double[] ins = new double[runs], get = new double[runs];
            for (int r = -warmup; r < runs; r++) {
                String[] keys = new String[records];
                for (int j = 0; j < records; j++) keys[j] = new String(data[order[j]].last.toCharArray());
                System.gc();   // outside the timed phases
                remaps[0] = 0;
                long[] ns = runOnce(journal, data, keys, order, step, remaps);
                if (r < 0) continue;
                ins[r] = ns[0] / 1e6;
                get[r] = ns[1] / 1e6;
                System.out.printf(Locale.ROOT, "java store phase=insert records=%d run=%d ms=%.2f ns_per_op=%.0f remaps=%d verified=yes%n",
                                  records, r + 1, ins[r], ns[0] / (double) records, remaps[0]);
                System.out.printf(Locale.ROOT, "java store phase=get records=%d run=%d ms=%.2f ns_per_op=%.0f verified=yes%n",
                                  records, r + 1, get[r], ns[1] / (double) records);
            }
            System.out.printf(Locale.ROOT, "java store phase=insert records=%d median runs=%d ms=%.2f ns_per_op=%.0f%n",
                              records, runs, RefSupport.median(ins), RefSupport.median(ins) * 1e6 / records);
            System.out.printf(Locale.ROOT, "java store phase=get records=%d median runs=%d ms=%.2f ns_per_op=%.0f%n",
                              records, runs, RefSupport.median(get), RefSupport.median(get) * 1e6 / records);
        } catch (Throwable t) {
            System.err.println("StoreReference: " + t);
            rc = 1;
        } finally {
            deleteQuietly(journal);
            deleteQuietly(scratch);
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        System.exit(rc);
    }
}
