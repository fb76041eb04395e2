// Java 17 reference for issue 45: the four commit-log mechanisms of the table, written
// the way a Java message queue writes them, so iolab's C++ designs can be compared side by side
// on the same machine. Plain javac, no libraries; bench/java/README.md says what each mechanism
// does, what it stands for and what is assumed. Run it with bench/java_reference.sh commitlog.
//
// Every mechanism appends `messages` frames (16-byte header + body) to a fresh log in a scratch
// directory, one producer thread, no consumer. Frame (iolab's, docs/commitlog.md, little-endian):
//   0 length (4) | 4 CRC32C (4) | 8 sequence (8) | 16 body
// CRC32C (java.util.zip.CRC32C, computed on the append path) of the body followed by the length
// and the sequence. The body is a fixed pattern whose first 8 bytes are the sequence number.
// Segments are files of `segment` bytes named by the log position of their first byte (20 digits
// + ".log", RocketMQ's naming); a frame never straddles two.

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

public final class CommitLogReference {
    static final int HEADER = 16;
    static final int PAGE = 4096;
    static final int MAX_BODY = 16 << 20;                    // iolab's limit
    // kafka: batch.size
    static final int KAFKA_BATCH = 16 * 1024;
    // rocketmq: FlushRealTimeService, flushCommitLogLeastPages = 4, interval 10 ms (issue 45;
    // RocketMQ's default flushIntervalCommitLog is 500 ms), thorough flush after 10 s
    static final int FLUSH_LEAST_PAGES = 4;
    static final long FLUSH_INTERVAL_MS = 10;
    static final long FLUSH_THOROUGH_NS = 10_000_000_000L;
    // rocketmq-transient: ring and commit cadence (commitIntervalCommitLog = 200 ms)
    static final int RING = 16 << 20;
    static final long COMMIT_INTERVAL_NS = 200_000_000L;
    // activemq: Journal.DEFAULT_MAX_WRITE_BATCH_SIZE (KahaDB journalMaxWriteBatchSize)
    static final int ACTIVEMQ_BATCH = 4 << 20;

    static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    static final List<String> MECHANISMS = List.of("kafka", "mapped", "transient", "activemq");

    // ---------------------------------------------------------------- options

    static final class Config {
        List<String> mechanisms = MECHANISMS;
        long messages = 262_144;
        int size = 1024;
        long segment = 1L << 30;
        int runs = 3;
        int warmup = 3;
        long warmupMessages = -1;          // default: messages / 4, at least min(messages, 20,000)
        int kafkaBatch = KAFKA_BATCH;
        int activemqBatch = ACTIVEMQ_BATCH;
        int ring = RING;
        Path dir = Paths.get(System.getenv().getOrDefault("TMPDIR", "/tmp"));
        int frame() { return HEADER + size; }
    }

    static final String USAGE =
        "usage: CommitLogReference [--mechanism kafka,mapped,transient,activemq|all] [--messages N]\n"
      + "         [--size BYTES] [--segment BYTES] [--runs N] [--warmup N] [--warmup-messages N] [--dir PATH]\n"
      + "         [--kafka-batch BYTES] [--activemq-batch BYTES] [--ring BYTES]\n"
      + "  defaults: all mechanisms, 262144 messages of 1024 bytes (256 MiB of bodies), 1 GiB segments,\n"
      + "  3 timed runs after 3 warm-up runs of messages/4, scratch directory under $TMPDIR or /tmp;\n"
      + "  kafka batches of 16 KiB, activemq write batches of up to 4 MiB, a 16 MiB transient ring\n"
      + "  (a power of two; grown to hold two frames).\n"
      + "  BYTES take k, m, g (binary) suffixes.";

    static final List<String> OPTIONS = List.of("--mechanism", "--mechanisms", "--messages", "--size", "--segment",
                                                "--runs", "--warmup", "--warmup-messages", "--dir",
                                                "--kafka-batch", "--activemq-batch", "--ring");

    static Config parse(String[] args) throws RefSupport.UsageError {
        Config c = new Config();
        for (int i = 0; i < args.length; i++) {
            String a = args[i], v;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) { v = a.substring(eq + 1); a = a.substring(0, eq); }
            else if (a.equals("--help") || a.equals("-h")) { System.out.println(USAGE); System.exit(0); return c; }
            else if (!a.startsWith("--")) throw new RefSupport.UsageError("unexpected argument '" + a + "'");
            else if (!OPTIONS.contains(a)) throw new RefSupport.UsageError("unknown option " + a);
            else if (i + 1 < args.length) v = args[++i];
            else throw new RefSupport.UsageError(a + " needs a value");
            switch (a) {
                case "--mechanism": case "--mechanisms": {
                    if (v.equals("all")) { c.mechanisms = MECHANISMS; break; }
                    List<String> m = new ArrayList<>();
                    for (String s : v.split(",")) {
                        if (!MECHANISMS.contains(s)) throw new RefSupport.UsageError("--mechanism: unknown mechanism '" + s + "' (kafka, mapped, transient, activemq or all)");
                        if (!m.contains(s)) m.add(s);
                    }
                    c.mechanisms = m;
                    break;
                }
                case "--messages": c.messages = RefSupport.parseCount(a, v, 1, 1L << 40); break;
                case "--size": c.size = (int) RefSupport.parseCount(a, v, 16, MAX_BODY); break;
                case "--segment": c.segment = RefSupport.parseCount(a, v, 1, Integer.MAX_VALUE); break;
                case "--runs": c.runs = (int) RefSupport.parseCount(a, v, 1, 1000); break;
                case "--warmup": c.warmup = (int) RefSupport.parseCount(a, v, 0, 1000); break;
                case "--warmup-messages": c.warmupMessages = RefSupport.parseCount(a, v, 1, 1L << 40); break;
                case "--dir": c.dir = Paths.get(v); break;
                case "--kafka-batch": c.kafkaBatch = (int) RefSupport.parseCount(a, v, 1, 1 << 30); break;
                case "--activemq-batch": c.activemqBatch = (int) RefSupport.parseCount(a, v, 1, 1 << 30); break;
                case "--ring": {
                    c.ring = (int) RefSupport.parseCount(a, v, 4096, 1 << 30);
                    if (Integer.bitCount(c.ring) != 1) throw new RefSupport.UsageError("--ring " + v + " is not a power of two");
                    break;
                }
                default: throw new RefSupport.UsageError("unknown option " + a);
            }
        }
        if (c.segment < c.frame())
            throw new RefSupport.UsageError("--segment " + c.segment + " is smaller than one frame (" + c.frame() + " bytes)");
        if (!Files.isDirectory(c.dir)) throw new RefSupport.UsageError("--dir " + c.dir + " is not a directory");
        if (c.warmupMessages < 0) c.warmupMessages = Math.max(c.messages / 4, Math.min(c.messages, 20_000));
        return c;
    }

    // ---------------------------------------------------------------- messages

    // The producer's messages: one body buffer reused for every message (nothing allocated per
    // message); stamp() writes the sequence into it and returns the frame's CRC32C.
    static final class Source {
        final int size;
        final byte[] body;
        final byte[] tail = new byte[12];   // length and sequence, the CRC's last 12 bytes
        final CRC32C crc = new CRC32C();

        Source(int size) {
            this.size = size;
            body = new byte[size];
            new Random(45).nextBytes(body);
            INT_LE.set(tail, 0, size);
        }

        int stamp(long seq) {
            LONG_LE.set(body, 0, seq);
            crc.reset();
            crc.update(body, 0, size);
            LONG_LE.set(tail, 4, seq);
            crc.update(tail, 0, 12);
            return (int) crc.getValue();
        }
    }

    // Segments a log of n frames may reach (a frame never straddles two).
    static int segmentsFor(long n, int frame, long segment) {
        long perSegment = segment / frame;
        return (int) Math.min(Integer.MAX_VALUE - 8, (n + perSegment - 1) / perSegment + 1);
    }

    static Path segmentPath(Path dir, long base) {
        return dir.resolve(String.format("%020d.log", base));
    }

    static FileChannel createSegment(Path dir, long base, long preallocate) throws IOException {
        Path p = segmentPath(dir, base);
        if (preallocate > 0) {
            // RandomAccessFile.setLength: ftruncate, a sparse file (what RocketMQ's map() of a new
            // file amounts to; pure Java has no fallocate)
            try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
                f.setLength(preallocate);
            }
            return FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        return FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    // ---------------------------------------------------------------- measurement

    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    static final long CLK_TCK = Long.getLong("clk.tck", 100);

    // /proc/self/stat: minflt, majflt, utime, stime (clock ticks) of the whole process.
    static long[] procStat() {
        try {
            String s = new String(Files.readAllBytes(Paths.get("/proc/self/stat")));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            // f[0] is field 3 (state): minflt is field 10, majflt 12, utime 14, stime 15
            return new long[] {Long.parseLong(f[7]), Long.parseLong(f[9]), Long.parseLong(f[11]), Long.parseLong(f[12])};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // CPU time of every thread of the process (JIT and GC threads too), in nanoseconds: the first
    // field of /proc/self/task/<tid>/schedstat. (OperatingSystemMXBean.getProcessCpuTime counts
    // in clock ticks on Linux: 10 ms, too coarse for a run of a tenth of a second.)
    static Map<String, Long> taskCpu() {
        Map<String, Long> m = new java.util.HashMap<>();
        try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path t : ds) {
                try {
                    String s = Files.readString(t.resolve("schedstat"));
                    m.put(t.getFileName().toString(), Long.parseLong(s.substring(0, s.indexOf(' '))));
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return m;
    }

    static long cpuSince(Map<String, Long> before, Map<String, Long> after) {
        long sum = 0;
        for (Map.Entry<String, Long> e : after.entrySet()) sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        return sum;
    }

    // The timed region: wall clock; process CPU (all threads' schedstat, nanoseconds);
    // /proc/self/stat for the user/system split (clock ticks: 10 ms) and minor faults; and the
    // CPU time of each thread of the log (ThreadMXBean.getThreadCpuTime: CLOCK_THREAD_CPUTIME_ID).
    static final class Region {
        final Map<String, Thread> threads = new LinkedHashMap<>();
        long t0, t1;
        Map<String, Long> cpu0, cpu1;
        long[] stat0, stat1, thr0, thr1;
        final Map<String, Long> counters = new LinkedHashMap<>();

        Region thread(String role, Thread t) { threads.put(role, t); return this; }

        long[] threadCpu() {
            long[] r = new long[threads.size()];
            int i = 0;
            for (Thread t : threads.values()) r[i++] = THREADS.getThreadCpuTime(t.getId());
            return r;
        }

        void begin() {
            stat0 = procStat();
            cpu0 = taskCpu();
            thr0 = threadCpu();
            t0 = System.nanoTime();
        }

        void end() {
            t1 = System.nanoTime();
            thr1 = threadCpu();
            cpu1 = taskCpu();
            stat1 = procStat();
        }

        void count(String name, long v) { counters.put(name, v); }
    }

    // ---------------------------------------------------------------- flush thread (mapped, transient)

    interface SegmentForce {
        void force(int segment) throws IOException;
    }

    // RocketMQ's FlushRealTimeService: every 10 ms, force once >= 4 pages were written (by page
    // number, as MappedFile.isAbleToFlush counts them) since the last force, or anything after
    // 10 s. `source` is how far the log can be flushed: the stored position (mapped) or the
    // committed one (transient).
    static final class Flusher extends Thread {
        final AtomicLong source;
        final long segment;
        final SegmentForce target;
        volatile boolean stop;
        volatile Throwable failure;
        long flushed, forces, forceNs;

        Flusher(AtomicLong source, long segment, SegmentForce target) {
            super("flush");
            setDaemon(true);
            this.source = source;
            this.segment = segment;
            this.target = target;
        }

        @Override public void run() {
            long last = System.nanoTime();
            try {
                while (!stop) {
                    Thread.sleep(FLUSH_INTERVAL_MS);
                    long w = source.get();
                    long now = System.nanoTime();
                    boolean thorough = now - last >= FLUSH_THOROUGH_NS;
                    if (w / PAGE - flushed / PAGE >= FLUSH_LEAST_PAGES || (thorough && w > flushed)) {
                        long start = System.nanoTime();
                        for (long s = flushed / segment; s <= (w - 1) / segment; s++) target.force((int) s);
                        forceNs += System.nanoTime() - start;
                        forces++;
                        flushed = w;
                        last = now;
                    }
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void finish() throws Exception {
            stop = true;   // never interrupt: an interrupt closes a FileChannel inside force()
            join();
            if (failure != null) throw new IOException("flush thread failed", failure);
        }
    }

    // ---------------------------------------------------------------- mechanisms

    // kafka: the producer gathers frames into a 16 KiB batch (a direct buffer, reused) and writes
    // each full batch with FileChannel.write at the file's position (pwrite). No flush. A
    // message is acknowledged when its batch's write returns.
    static void kafka(Path dir, Config c, long n, Source src, Region r) throws IOException {
        final int frame = c.frame(), size = c.size;
        final long segment = c.segment;
        ByteBuffer batch = ByteBuffer.allocateDirect(Math.max(c.kafkaBatch, frame)).order(ByteOrder.LITTLE_ENDIAN);
        long base = 0, filePos = 0, writes = 0;
        FileChannel ch = createSegment(dir, base, 0);
        r.thread("producer", Thread.currentThread());
        try {
            r.begin();
            for (long seq = 1; seq <= n; seq++) {
                int crc = src.stamp(seq);
                if (filePos + batch.position() + frame > segment) {   // roll
                    if (batch.position() > 0) { filePos = writeBatch(ch, batch, filePos); writes++; }
                    ch.close();
                    base += segment;
                    ch = createSegment(dir, base, 0);
                    filePos = 0;
                } else if (batch.remaining() < frame) {
                    filePos = writeBatch(ch, batch, filePos);
                    writes++;
                }
                batch.putInt(size).putInt(crc).putLong(seq).put(src.body, 0, size);
            }
            if (batch.position() > 0) { filePos = writeBatch(ch, batch, filePos); writes++; }
            r.end();
        } finally {
            ch.close();
            RefSupport.free(batch);
        }
        r.count("writes", writes);
    }

    static long writeBatch(FileChannel ch, ByteBuffer batch, long pos) throws IOException {
        batch.flip();
        while (batch.hasRemaining()) pos += ch.write(batch, pos);
        batch.clear();
        return pos;
    }

    // mapped (RocketMQ's DefaultMappedFile, default settings): a 1 GiB segment made to length and
    // mapped READ_WRITE before the run; each frame is put through the MappedByteBuffer and is
    // acknowledged once stored; the flush thread forces the mapping (FlushRealTimeService).
    // A roll maps the next segment on the producer's thread (RocketMQ's AllocateMappedFileService
    // makes it ahead; at the default sizes no run rolls).
    static void mapped(Path dir, Config c, long n, Source src, Region r) throws Exception {
        final int frame = c.frame(), size = c.size;
        final long segment = c.segment;
        final int segs = segmentsFor(n, frame, segment);
        final AtomicReferenceArray<MappedByteBuffer> maps = new AtomicReferenceArray<>(segs);
        final AtomicLong stored = new AtomicLong();
        MappedByteBuffer m = mapSegment(dir, 0, segment);
        maps.set(0, m);
        Flusher flusher = new Flusher(stored, segment, s -> maps.get(s).force());
        flusher.start();
        r.thread("producer", Thread.currentThread()).thread("flush", flusher);
        int seg = 0;
        long off = 0;
        try {
            r.begin();
            for (long seq = 1; seq <= n; seq++) {
                int crc = src.stamp(seq);
                if (off + frame > segment) {
                    m = mapSegment(dir, (long) (seg + 1) * segment, segment);
                    maps.set(++seg, m);
                    off = 0;
                }
                int o = (int) off;
                m.putInt(o, size);
                m.putInt(o + 4, crc);
                m.putLong(o + 8, seq);
                m.put(o + HEADER, src.body, 0, size);
                off += frame;
                stored.lazySet((long) seg * segment + off);   // acknowledged: stored
            }
            r.end();
        } finally {
            try {
                flusher.finish();
            } finally {
                for (int i = 0; i < segs; i++) RefSupport.free(maps.get(i));
            }
        }
        r.count("forces", flusher.forces);
        r.count("force_ms", flusher.forceNs / 1_000_000);
    }

    static MappedByteBuffer mapSegment(Path dir, long base, long segment) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(segmentPath(dir, base).toFile(), "rw")) {
            f.setLength(segment);
            MappedByteBuffer m = f.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, segment);
            m.order(ByteOrder.LITTLE_ENDIAN);
            return m;
        }
    }

    // transient (RocketMQ's transientStorePoolEnable, with issue 45's 16 MiB ring): the producer
    // copies each frame into a direct ring and counts it acknowledged once copied; a commit thread
    // (CommitRealTimeService) writes what the ring holds beyond the committed position with
    // FileChannel.write at the file position every 200 ms, or at once when the producer finds
    // the ring half full; the producer waits while the ring is full; the flush thread
    // force(false)s the file channel (what RocketMQ's flush does for a file written through its
    // channel) with the rule above. Segments are made to length as in mapped (RocketMQ maps them
    // for reading); the commit thread creates a segment it reaches.
    static final class Committer extends Thread {
        final Path dir;
        final long segment;
        final int ringCap;
        final ByteBuffer view;
        final AtomicLong written, committed = new AtomicLong();
        final AtomicReferenceArray<FileChannel> channels;
        final Thread producer;
        volatile boolean producerWaiting, stop;
        volatile Throwable failure;
        long commits, writes;

        Committer(Path dir, long segment, ByteBuffer ring, AtomicLong written,
                  AtomicReferenceArray<FileChannel> channels, Thread producer) {
            super("commit");
            setDaemon(true);
            this.dir = dir;
            this.segment = segment;
            this.ringCap = ring.capacity();
            this.view = ring.duplicate();
            this.written = written;
            this.channels = channels;
            this.producer = producer;
        }

        @Override public void run() {
            long c = 0;
            try {
                for (;;) {
                    boolean stopping = stop;
                    long w = written.get();
                    if (w > c) {
                        commit(c, w);
                        c = w;
                        committed.set(c);
                        commits++;
                        if (producerWaiting) LockSupport.unpark(producer);
                    } else if (stopping) {
                        break;
                    }
                    if (!stopping) LockSupport.parkNanos(this, COMMIT_INTERVAL_NS);
                }
            } catch (Throwable t) {
                failure = t;
                LockSupport.unpark(producer);
            }
        }

        void commit(long from, long to) throws IOException {
            while (from < to) {
                int seg = (int) (from / segment);
                long segOff = from - seg * segment;
                int ri = (int) (from & (ringCap - 1));
                int len = (int) Math.min(Math.min(to - from, ringCap - ri), segment - segOff);
                FileChannel ch = channels.get(seg);
                if (ch == null) {
                    ch = createSegment(dir, seg * segment, segment);
                    channels.set(seg, ch);
                }
                view.clear();
                view.position(ri).limit(ri + len);
                long pos = segOff;
                while (view.hasRemaining()) pos += ch.write(view, pos);
                writes++;
                from += len;
            }
        }

        void finish() throws Exception {
            stop = true;
            LockSupport.unpark(this);
            join();
            if (failure != null) throw new IOException("commit thread failed", failure);
        }
    }

    static void transientRing(Path dir, Config c, long n, Source src, Region r) throws Exception {
        final int frame = c.frame(), size = c.size;
        final long segment = c.segment;
        int ringCap = c.ring;
        while (ringCap < 2 * frame) ringCap <<= 1;           // a frame fits in half the ring
        final int mask = ringCap - 1, half = ringCap / 2;
        final ByteBuffer ring = ByteBuffer.allocateDirect(ringCap).order(ByteOrder.LITTLE_ENDIAN);
        final int segs = segmentsFor(n, frame, segment);
        final AtomicReferenceArray<FileChannel> channels = new AtomicReferenceArray<>(segs);
        final AtomicLong written = new AtomicLong();
        channels.set(0, createSegment(dir, 0, segment));
        Committer committer = new Committer(dir, segment, ring, written, channels, Thread.currentThread());
        Flusher flusher = new Flusher(committer.committed, segment, s -> channels.get(s).force(false));
        committer.start();
        flusher.start();
        r.thread("producer", Thread.currentThread()).thread("commit", committer).thread("flush", flusher);
        final byte[] scratch = new byte[frame];               // a frame that wraps round the ring
        long pos = 0, committedSeen = 0, nextSignal = half, waits = 0, signals = 0;
        long segOff = 0;
        try {
            r.begin();
            for (long seq = 1; seq <= n; seq++) {
                int crc = src.stamp(seq);
                long pad = segOff + frame > segment ? segment - segOff : 0;
                long need = pos + pad + frame - ringCap;      // committed position the copy needs
                if (committedSeen < need) {
                    committedSeen = committer.committed.get();
                    if (committedSeen < need) {
                        waits++;
                        committedSeen = awaitCommitted(committer, need);
                    }
                }
                if (pad > 0) {                                // the rest of the segment stays zero
                    Arrays.fill(scratch, (byte) 0);
                    putWrapped(ring, (int) (pos & mask), scratch, (int) pad);
                    pos += pad;
                    segOff = 0;
                }
                int ri = (int) (pos & mask);
                if (ri + frame <= ringCap) {
                    ring.putInt(ri, size);
                    ring.putInt(ri + 4, crc);
                    ring.putLong(ri + 8, seq);
                    ring.put(ri + HEADER, src.body, 0, size);
                } else {
                    INT_LE.set(scratch, 0, size);
                    INT_LE.set(scratch, 4, crc);
                    LONG_LE.set(scratch, 8, seq);
                    System.arraycopy(src.body, 0, scratch, HEADER, size);
                    putWrapped(ring, ri, scratch, frame);
                }
                pos += frame;
                segOff += frame;
                written.lazySet(pos);                         // acknowledged: copied
                if (pos >= nextSignal) {                      // half full: wake the commit thread
                    committedSeen = committer.committed.get();
                    if (pos - committedSeen >= half) {
                        LockSupport.unpark(committer);
                        signals++;
                        nextSignal = pos + half;
                    } else {
                        nextSignal = committedSeen + half;
                    }
                }
            }
            r.end();
        } finally {
            try {
                committer.finish();                           // commits the rest, outside the timed region
            } finally {
                try {
                    flusher.finish();
                } finally {
                    for (int i = 0; i < segs; i++) if (channels.get(i) != null) channels.get(i).close();
                    RefSupport.free(ring);
                }
            }
        }
        r.count("commits", committer.commits);
        r.count("writes", committer.writes);
        r.count("forces", flusher.forces);
        r.count("force_ms", flusher.forceNs / 1_000_000);
        r.count("ring_full_waits", waits);
        r.count("half_full_wakeups", signals);
    }

    static long awaitCommitted(Committer committer, long need) throws IOException {
        LockSupport.unpark(committer);
        for (;;) {
            committer.producerWaiting = true;
            long c = committer.committed.get();
            if (c >= need) {
                committer.producerWaiting = false;
                return c;
            }
            if (committer.failure != null) throw new IOException("commit thread failed", committer.failure);
            LockSupport.park(committer);
        }
    }

    static void putWrapped(ByteBuffer ring, int ri, byte[] src, int len) {
        int first = Math.min(len, ring.capacity() - ri);
        ring.put(ri, src, 0, first);
        if (first < len) ring.put(0, src, first, len - first);
    }

    // activemq (KahaDB's DataFileAppender): the producer queues each frame into the next write
    // batch under the appender's lock (enqueueMutex), waiting while that batch is full and the
    // previous one is still being written; the writer thread takes whatever batch is queued as soon
    // as it is free and writes it with one RandomAccessFile.seek + write. Batches of up to 4 MiB
    // (Journal.DEFAULT_MAX_WRITE_BATCH_SIZE), two buffers reused. No sync
    // (journalDiskSyncStrategy=never). A message is acknowledged when its batch's write returns.
    static final class WriteBatch {
        final byte[] buf;
        int seg, len;
        long offset, lastSeq;
        WriteBatch(int cap) { buf = new byte[cap]; }
    }

    static final class KahaAppender extends Thread {
        final Object lock = new Object();
        final ArrayDeque<WriteBatch> pool = new ArrayDeque<>(2);
        final Path dir;
        final long segment;
        WriteBatch next;          // being filled by the producer (guarded by lock)
        long acked;               // guarded by lock
        boolean closing;          // guarded by lock
        Throwable failure;        // guarded by lock
        RandomAccessFile file;
        int fileSeg;
        long writes, writtenBytes;

        KahaAppender(Path dir, long segment, int cap) throws IOException {
            super("activemq-writer");
            setDaemon(true);
            this.dir = dir;
            this.segment = segment;
            pool.add(new WriteBatch(cap));
            pool.add(new WriteBatch(cap));
            createSegment(dir, 0, 0).close();
            file = new RandomAccessFile(segmentPath(dir, 0).toFile(), "rw");
        }

        @Override public void run() {
            WriteBatch done = null;
            try {
                for (;;) {
                    WriteBatch b;
                    synchronized (lock) {
                        if (done != null) {
                            acked = done.lastSeq;
                            pool.addLast(done);
                            done = null;
                            lock.notifyAll();
                        }
                        while (next == null && !closing) lock.wait();
                        if (next == null) break;
                        b = next;
                        next = null;
                        lock.notifyAll();
                    }
                    if (b.seg != fileSeg) {
                        file.close();
                        file = new RandomAccessFile(segmentPath(dir, b.seg * segment).toFile(), "rw");
                        fileSeg = b.seg;
                    }
                    file.seek(b.offset);
                    file.write(b.buf, 0, b.len);
                    writes++;
                    writtenBytes += b.len;
                    done = b;
                }
            } catch (Throwable t) {
                synchronized (lock) {
                    failure = t;
                    lock.notifyAll();
                }
            } finally {
                try {
                    file.close();
                } catch (IOException e) {
                    synchronized (lock) {
                        if (failure == null) failure = e;
                    }
                }
            }
        }

        void finish() throws Exception {
            synchronized (lock) {
                closing = true;
                lock.notifyAll();
            }
            join();
            synchronized (lock) {
                if (failure != null) throw new IOException("writer thread failed", failure);
            }
        }
    }

    static void activemq(Path dir, Config c, long n, Source src, Region r) throws Exception {
        final int frame = c.frame(), size = c.size;
        final long segment = c.segment;
        final KahaAppender app = new KahaAppender(dir, segment, Math.max(c.activemqBatch, frame));
        final Object lock = app.lock;
        app.start();
        r.thread("producer", Thread.currentThread()).thread("writer", app);
        long pos = 0, waits = 0;   // log position of the next frame
        try {
            r.begin();
            for (long seq = 1; seq <= n; seq++) {
                int crc = src.stamp(seq);
                synchronized (lock) {
                    WriteBatch b;
                    for (;;) {
                        if (app.failure != null) throw new IOException("writer thread failed", app.failure);
                        b = app.next;
                        boolean roll = pos % segment + frame > segment;
                        if (b == null) {
                            if (app.pool.isEmpty()) { waits++; lock.wait(); continue; }
                            if (roll) pos = (pos / segment + 1) * segment;
                            b = app.pool.pollFirst();
                            b.seg = (int) (pos / segment);
                            b.offset = pos % segment;
                            b.len = 0;
                            app.next = b;
                            break;
                        }
                        if (b.len + frame <= b.buf.length && !roll) break;
                        waits++;                               // full: wait for the writer to take it
                        while (app.next != null && app.failure == null) lock.wait();
                    }
                    byte[] buf = b.buf;
                    int o = b.len;
                    INT_LE.set(buf, o, size);
                    INT_LE.set(buf, o + 4, crc);
                    LONG_LE.set(buf, o + 8, seq);
                    System.arraycopy(src.body, 0, buf, o + HEADER, size);
                    b.len = o + frame;
                    b.lastSeq = seq;
                    pos += frame;
                    if (o == 0) lock.notifyAll();              // the writer may be waiting for work
                }
            }
            synchronized (lock) {                              // the last acknowledgement
                while (app.acked < n && app.failure == null) lock.wait();
                if (app.failure != null) throw new IOException("writer thread failed", app.failure);
            }
            r.end();
        } finally {
            app.finish();
        }
        r.count("writes", app.writes);
        r.count("batch_bytes_avg", app.writes == 0 ? 0 : app.writtenBytes / app.writes);
        r.count("producer_waits", waits);
    }

    // ---------------------------------------------------------------- verification

    // Reads every segment back: sequences 1..n in order with no gap, every length and CRC right,
    // the body's sequence stamp right, nothing after the last frame but zeros or the file's end.
    static void verify(Path dir, Config c, long n) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.sorted(Comparator.comparing(Path::toString)).toList();
        }
        CRC32C crc = new CRC32C();
        byte[] tail = new byte[12];
        long seq = 1;
        for (int i = 0; i < files.size(); i++) {
            Path p = files.get(i);
            if (!p.equals(segmentPath(dir, i * c.segment)))
                throw new IOException("verify: unexpected file " + p + " (segment " + i + " expected)");
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                long len = ch.size();
                if (len == 0) continue;
                MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY, 0, len);
                m.order(ByteOrder.LITTLE_ENDIAN);
                try {
                    int at = 0;
                    while (at + HEADER <= len) {
                        int l = m.getInt(at);
                        if (l == 0) {
                            if (m.getInt(at + 4) != 0 || m.getLong(at + 8) != 0)
                                throw new IOException("verify: " + p + " offset " + at + ": zero length with a non-zero header");
                            break;
                        }
                        if (l != c.size) throw bad(p, at, seq, "length " + l);
                        long s = m.getLong(at + 8);
                        if (s != seq) throw bad(p, at, seq, "sequence " + s);
                        if (seq > n) throw bad(p, at, seq, "more frames than the " + n + " acknowledged");
                        if (at + HEADER + (long) l > len) throw bad(p, at, seq, "truncated frame");
                        crc.reset();
                        crc.update(m.slice(at + HEADER, l));
                        INT_LE.set(tail, 0, l);
                        LONG_LE.set(tail, 4, s);
                        crc.update(tail, 0, 12);
                        if ((int) crc.getValue() != m.getInt(at + 4)) throw bad(p, at, seq, "CRC32C mismatch");
                        if (m.getLong(at + HEADER) != s) throw bad(p, at, seq, "the body carries another sequence");
                        seq++;
                        at += HEADER + l;
                    }
                } finally {
                    RefSupport.free(m);
                }
            }
        }
        if (seq - 1 != n) throw new IOException("verify: the log holds " + (seq - 1) + " frames; " + n + " were acknowledged");
    }

    static IOException bad(Path p, int at, long seq, String what) {
        return new IOException("verify: " + p + " offset " + at + " (sequence " + seq + " expected): " + what);
    }

    // ---------------------------------------------------------------- driver

    interface Mechanism {
        void run(Path dir, Config c, long n, Source src, Region r) throws Exception;
    }

    static Mechanism mechanism(String name) {
        switch (name) {
            case "kafka": return CommitLogReference::kafka;
            case "mapped": return CommitLogReference::mapped;
            case "transient": return CommitLogReference::transientRing;
            case "activemq": return CommitLogReference::activemq;
            default: throw new IllegalArgumentException(name);
        }
    }

    static int runCounter;

    static Region runOnce(Path scratch, String name, Config c, long n, Source src) throws Exception {
        Path dir = Files.createDirectory(scratch.resolve(name + "-" + (++runCounter)));
        try {
            System.gc();   // outside the timed region: old buffers gone, no collection due inside it
            Region r = new Region();
            mechanism(name).run(dir, c, n, src, r);
            verify(dir, c, n);
            return r;
        } finally {
            deleteTree(dir);
        }
    }

    static String fmt(double v) {
        if (Math.abs(v) >= 1000) return String.format(Locale.ROOT, "%.0f", v);
        return String.format(Locale.ROOT, "%.1f", v);
    }

    // One run's figures, in print order.
    static LinkedHashMap<String, Double> figures(Region r, long n, Config c) {
        LinkedHashMap<String, Double> f = new LinkedHashMap<>();
        double sec = (r.t1 - r.t0) / 1e9;
        double tickNs = 1e9 / CLK_TCK;
        f.put("seconds", sec);
        f.put("msg_per_s", n / sec);
        f.put("mib_per_s", n * (double) c.size / sec / (1 << 20));
        f.put("user_ns_per_msg", (r.stat1[2] - r.stat0[2]) * tickNs / n);
        f.put("sys_ns_per_msg", (r.stat1[3] - r.stat0[3]) * tickNs / n);
        long cpu = cpuSince(r.cpu0, r.cpu1);
        f.put("cpu_ns_per_msg", cpu / (double) n);
        long threads = 0;
        int i = 0;
        for (String role : r.threads.keySet()) {
            long d = r.thr1[i] - r.thr0[i];
            threads += d;
            f.put(role + "_cpu_ns_per_msg", d / (double) n);
            i++;
        }
        f.put("other_cpu_ns_per_msg", (cpu - threads) / (double) n);   // JIT, GC, the JVM
        f.put("minflt_per_msg", (r.stat1[0] - r.stat0[0]) / (double) n);
        f.put("majflt", (double) (r.stat1[1] - r.stat0[1]));
        for (Map.Entry<String, Long> e : r.counters.entrySet()) f.put(e.getKey(), (double) e.getValue());
        return f;
    }

    static String line(Map<String, Double> f) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Double> e : f.entrySet()) {
            double v = e.getValue();
            String s = e.getKey().equals("seconds") ? String.format(Locale.ROOT, "%.4f", v)
                     : e.getKey().equals("minflt_per_msg") ? String.format(Locale.ROOT, "%.4f", v)
                     : fmt(v);
            b.append(' ').append(e.getKey()).append('=').append(s);
        }
        return b.toString();
    }

    static void deleteTree(Path p) {
        if (p == null || !Files.exists(p)) return;
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(q);
        } catch (IOException e) {
            System.err.println("CommitLogReference: could not remove " + p + ": " + e.getMessage());
        }
    }

    public static void main(String[] args) {
        Config c;
        try {
            c = parse(args);
        } catch (RefSupport.UsageError e) {
            RefSupport.exitUsage("CommitLogReference", e);
            return;
        }
        Path scratch;
        try {
            scratch = Files.createTempDirectory(c.dir, "iolab-java-commitlog-");
        } catch (IOException e) {
            System.err.println("CommitLogReference: cannot create a scratch directory in " + c.dir + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        final Path cleanup = scratch;
        Thread hook = new Thread(() -> deleteTree(cleanup));   // Ctrl-C, SIGTERM
        Runtime.getRuntime().addShutdownHook(hook);
        int rc = 0;
        try {
            System.out.printf(Locale.ROOT, "# java CommitLogReference: java %s, messages=%d size=%d segment=%d runs=%d warmup=%dx%d kafka_batch=%d activemq_batch=%d ring=%d dir=%s clk_tck=%d%n",
                              System.getProperty("java.version"), c.messages, c.size, c.segment, c.runs, c.warmup,
                              c.warmupMessages, c.kafkaBatch, c.activemqBatch, c.ring, scratch, CLK_TCK);
            Source src = new Source(c.size);
            for (String name : c.mechanisms) {
                for (int w = 0; w < c.warmup; w++) runOnce(scratch, name, c, c.warmupMessages, src);
                List<LinkedHashMap<String, Double>> runs = new ArrayList<>();
                for (int k = 1; k <= c.runs; k++) {
                    LinkedHashMap<String, Double> f = figures(runOnce(scratch, name, c, c.messages, src), c.messages, c);
                    runs.add(f);
                    System.out.println("java mechanism=" + name + " run=" + k + " messages=" + c.messages + line(f) + " verified=yes");
                    System.out.flush();
                }
                LinkedHashMap<String, Double> med = new LinkedHashMap<>();
                for (String key : runs.get(0).keySet()) {
                    double[] v = new double[runs.size()];
                    for (int k = 0; k < v.length; k++) v[k] = runs.get(k).getOrDefault(key, 0.0);
                    med.put(key, RefSupport.median(v));
                }
                System.out.println("java mechanism=" + name + " median runs=" + c.runs + " messages=" + c.messages + line(med));
                System.out.flush();
            }
        } catch (Throwable t) {
            System.err.println("CommitLogReference: " + t);
            for (Throwable cause = t.getCause(); cause != null; cause = cause.getCause())
                System.err.println("  caused by: " + cause);
            rc = 1;
        } finally {
            deleteTree(scratch);
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        System.exit(rc);
    }
}
