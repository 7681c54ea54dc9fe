/*
 * LeakDemo -- deterministic heap-dump generator for heapgraph tests.
 *
 * Builds a known object graph, then dumps its own heap in HPROF format via
 * com.sun.management.HotSpotDiagnosticMXBean.dumpHeap(path, live=false).
 * live=false means no GC is run before the dump, so the deliberately
 * unreachable LeakDemo$Garbage ring is present in the dump too.
 * Use gen.sh to run it (it also takes the matching class histogram and
 * checks that no GC happened before the dump).
 *
 * EXACT CONTENTS OF THE DUMP (program-created objects; the JVM itself adds
 * many more Strings, byte[], Object[], HashMap$Node, ... of its own):
 *
 *   class                        instances  reachable from
 *   LeakDemo                         0      (class only; statics are GC roots)
 *   LeakDemo$Session              2000      static LeakDemo.CACHE (the "leak")
 *   LeakDemo$Node                  500      static LeakDemo.CHAIN_HEAD (singly linked chain)
 *   LeakDemo$TreeNode              127      static LeakDemo.TREE_ROOT (complete binary tree, depth 7)
 *   LeakDemo$Holder                  1      ONLY a local variable in thread "leakdemo-holder"
 *   LeakDemo$HolderThread            1      thread object root of "leakdemo-holder" (+ main's local t)
 *   LeakDemo$Garbage              1000      NOTHING -- unreachable ring (g[999].next == g[0])
 *
 *   Arrays created by the program:
 *   byte[1024]   2000  Session.payload, one per Session; payload[j] == (byte)(seq + j)
 *   byte[99]     1000  Garbage.junk, one per Garbage (unreachable); junk[j] == (byte) seq
 *   byte[12]     2000  value arrays of the 2000 Session id Strings (Latin-1 compact strings)
 *   long[512]       1  Holder.data; data[j] == j
 *   int[16], long[16]  1 each, referenced from LeakDemo.MIXED
 *   LeakDemo$Session[100]      1  static LeakDemo.RECENT = sessions 1900..1999 (shared with CACHE)
 *   LeakDemo$Node[10]          1  static LeakDemo.CHAIN_INDEX = nodes 0,50,100,...,450 (shared with chain)
 *   LeakDemo$TreeNode[][7]     1  static LeakDemo.TREE_LEVELS; level k is a TreeNode[2^k]
 *   LeakDemo$TreeNode[]        7  lengths 1,2,4,8,16,32,64 (shared with the tree)
 *   java.lang.Object[8]        1  static LeakDemo.MIXED = {CHAIN_INDEX, TREE_ROOT, RECENT,
 *                                   int[16], long[16], null, "leakdemo-mixed", MIXED (self-cycle)}
 *
 *   Strings: 2000 non-interned ids "session-0000" .. "session-1999" (each is both the HashMap
 *   key and Session.id -- same String object).
 *   CACHE is new HashMap<>(4096): its table is one HashMap$Node[4096], 2000 HashMap$Node entries
 *   (no resize, no treeification).
 *
 *   Totals by array length also include JVM-owned arrays: in the committed samples there are
 *   2005 byte[1024] (2000 payloads + 5 JDK buffers), exactly 1000 byte[99], 2067 byte[12] and
 *   1 long[512]. Only the LeakDemo-created numbers above are guaranteed.
 *
 * Field layouts:
 *   Session   { String id; int seq; byte[] payload; }          seq 0..1999, id "session-%04d"
 *   Node      { int value; Node next; }                          value 0..499, head has value 0, tail.next == null
 *   TreeNode  { int id; TreeNode left; TreeNode right; }         id 0..126 in breadth-first order,
 *                                                                children of i are 2i+1 and 2i+2
 *   Garbage   { int seq; Garbage next; byte[] junk; }            seq 0..999, next = (seq+1) % 1000
 *   Holder    { String name; long[] data; }                      name "held-by-thread-local"
 *
 * Protocol: java LeakDemo OUT.hprof writes the dump, then prints "DUMPED\n" on stdout and blocks
 * reading stdin (until a newline or EOF) without allocating, so a controller can take
 * `jcmd <pid> GC.class_histogram -all` of exactly the dumped heap.
 *
 * Compile with javac -XDstringConcat=inline (avoids invokedynamic string concatenation, which
 * would pull java.lang.invoke machinery and its objects into the heap); no lambdas are used
 * for the same reason.
 */
import com.sun.management.HotSpotDiagnosticMXBean;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;

public final class LeakDemo {
    static final int SESSIONS = 2000;
    static final int PAYLOAD_BYTES = 1024;
    static final int RECENT_COUNT = 100;
    static final int CHAIN_LENGTH = 500;
    static final int CHAIN_INDEX_STEP = 50;
    static final int TREE_DEPTH = 7;          // 2^7 - 1 = 127 nodes
    static final int GARBAGE = 1000;
    static final int GARBAGE_JUNK_BYTES = 99;
    static final int HOLDER_LONGS = 512;

    // ---- the "leak" and other reachable structures (static fields = GC roots via the class)
    static final HashMap<String, Session> CACHE = new HashMap<>(4096);
    static Session[] RECENT;
    static Node CHAIN_HEAD;
    static Node[] CHAIN_INDEX;
    static TreeNode TREE_ROOT;
    static TreeNode[][] TREE_LEVELS;
    static Object[] MIXED;

    static final Object LOCK = new Object();
    static boolean holderReady;
    static volatile long blackhole;

    static final class Session {
        final String id;
        final int seq;
        final byte[] payload;

        Session(String id, int seq) {
            this.id = id;
            this.seq = seq;
            this.payload = new byte[PAYLOAD_BYTES];
            for (int j = 0; j < PAYLOAD_BYTES; j++) {
                payload[j] = (byte) (seq + j);
            }
        }
    }

    static final class Node {
        final int value;
        Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    static final class TreeNode {
        final int id;
        TreeNode left;
        TreeNode right;

        TreeNode(int id) {
            this.id = id;
        }
    }

    static final class Garbage {
        final int seq;
        Garbage next;
        final byte[] junk = new byte[GARBAGE_JUNK_BYTES];

        Garbage(int seq) {
            this.seq = seq;
            for (int j = 0; j < GARBAGE_JUNK_BYTES; j++) {
                junk[j] = (byte) seq;
            }
        }
    }

    static final class Holder {
        final String name = "held-by-thread-local";
        final long[] data = new long[HOLDER_LONGS];

        Holder() {
            for (int j = 0; j < HOLDER_LONGS; j++) {
                data[j] = j;
            }
        }
    }

    /** Keeps a Holder reachable only through a local variable of its run() frame. */
    static final class HolderThread extends Thread {
        HolderThread() {
            super("leakdemo-holder");
            setDaemon(true);
        }

        @Override
        public void run() {
            Holder local = new Holder();
            synchronized (LOCK) {
                holderReady = true;
                LOCK.notifyAll();
                try {
                    while (true) {
                        LOCK.wait();     // forever; the JVM exits because this is a daemon thread
                    }
                } catch (InterruptedException e) {
                    // fall through
                }
            }
            blackhole = local.data.length;   // keeps 'local' live across the wait
        }
    }

    /** One reusable builder, so building the ids leaves no StringBuilder garbage behind. */
    static final StringBuilder ID_BUILDER = new StringBuilder(16);

    /** "session-0000" .. "session-1999" without String.format / indy concat. */
    static String sessionId(int i) {
        StringBuilder sb = ID_BUILDER;
        sb.setLength(0);
        sb.append("session-");
        sb.append((char) ('0' + (i / 1000) % 10));
        sb.append((char) ('0' + (i / 100) % 10));
        sb.append((char) ('0' + (i / 10) % 10));
        sb.append((char) ('0' + i % 10));
        return sb.toString();
    }

    static void buildSessions() {
        RECENT = new Session[RECENT_COUNT];
        for (int i = 0; i < SESSIONS; i++) {
            String id = sessionId(i);
            Session s = new Session(id, i);
            CACHE.put(id, s);
            if (i >= SESSIONS - RECENT_COUNT) {
                RECENT[i - (SESSIONS - RECENT_COUNT)] = s;
            }
        }
    }

    static void buildChain() {
        CHAIN_INDEX = new Node[CHAIN_LENGTH / CHAIN_INDEX_STEP];
        Node next = null;
        for (int v = CHAIN_LENGTH - 1; v >= 0; v--) {
            next = new Node(v, next);
            if (v % CHAIN_INDEX_STEP == 0) {
                CHAIN_INDEX[v / CHAIN_INDEX_STEP] = next;
            }
        }
        CHAIN_HEAD = next;
    }

    static void buildTree() {
        TREE_LEVELS = new TreeNode[TREE_DEPTH][];
        int id = 0;
        for (int level = 0; level < TREE_DEPTH; level++) {
            TreeNode[] row = new TreeNode[1 << level];
            for (int k = 0; k < row.length; k++) {
                row[k] = new TreeNode(id++);
                if (level > 0) {
                    TreeNode parent = TREE_LEVELS[level - 1][k / 2];
                    if ((k & 1) == 0) {
                        parent.left = row[k];
                    } else {
                        parent.right = row[k];
                    }
                }
            }
            TREE_LEVELS[level] = row;
        }
        TREE_ROOT = TREE_LEVELS[0][0];
    }

    static void buildMixed() {
        MIXED = new Object[8];
        MIXED[0] = CHAIN_INDEX;
        MIXED[1] = TREE_ROOT;
        MIXED[2] = RECENT;
        MIXED[3] = new int[16];
        MIXED[4] = new long[16];
        MIXED[5] = null;
        MIXED[6] = "leakdemo-mixed";
        MIXED[7] = MIXED;
    }

    /** Allocates an unreachable ring of Garbage objects; nothing refers to it after return. */
    static void makeGarbage() {
        Garbage first = new Garbage(0);
        Garbage prev = first;
        for (int i = 1; i < GARBAGE; i++) {
            Garbage g = new Garbage(i);
            prev.next = g;
            prev = g;
        }
        prev.next = first;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].endsWith(".hprof")) {
            System.err.println("usage: java LeakDemo <output.hprof>");
            System.exit(2);
        }
        String path = args[0];

        // Everything used after the dump is prepared up front, so that between the dump and the
        // external `jcmd GC.class_histogram -all` this JVM allocates nothing on the Java heap.
        HotSpotDiagnosticMXBean diag = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        // (the controller knows our pid; ProcessHandle.current() would load extra classes/lambdas)
        byte[] marker = "DUMPED\n".getBytes(StandardCharsets.US_ASCII);
        FileOutputStream out = new FileOutputStream(FileDescriptor.out);
        FileInputStream in = new FileInputStream(FileDescriptor.in);

        buildSessions();
        buildChain();
        buildTree();
        buildMixed();

        HolderThread t = new HolderThread();
        t.start();
        synchronized (LOCK) {
            while (!holderReady) {
                LOCK.wait();
            }
        }

        makeGarbage();

        diag.dumpHeap(path, false);   // live=false: no GC, unreachable objects kept

        out.write(marker);
        out.flush();
        // Block until the controller (gen.sh) has taken the histogram; EOF also releases us.
        while (true) {
            int c = in.read();
            if (c < 0 || c == '\n') {
                break;
            }
        }
    }
}
