/*
 * ContentDemo -- plants known content (duplicate strings, duplicate primitive arrays,
 * collections of known size and capacity, named threads with deep stacks holding large
 * locals, system properties) for heapgraph's content analyses, and writes what it planted,
 * with the JVM's own sizes, to a JSON file. Run it with data/gen/content.sh, which also
 * builds the agent jar, takes the heap dump and the Thread.print output, and checks them.
 *
 * WHAT IS PLANTED (all reachable from static fields of ContentDemo, except the thread locals):
 *
 *   Strings (each copy a distinct java.lang.String; the text of every group exists nowhere
 *   else in the heap -- see plain() for how the literals are kept out):
 *     LATIN1_DUPS   20,000  "planted-duplicate-alpha"            own byte[] each (Latin-1, coder 0)
 *     UTF16_DUPS     5,000  "planted-utf16-caf\u00e9-\u03b2eta-\u20ac"   own byte[] each (coder 1, UTF-16)
 *     LONG_DUPS      3,000  a 200-char Latin-1 text               own byte[] each
 *     SHARED_DUPS    1,000  "planted-shared-array-value"         ONE byte[] for all (new String(String)
 *                                                                shares its argument's array on JDK 9+)
 *     HOSTILE_DUPS      10  </script><img src=x onerror=alert(1)>"'&\u0001   own byte[] each;
 *                           HOSTILE_DUPS[0] is also the value of system property heapgraph.hostile
 *   Primitive arrays (distinct arrays, identical content within a group):
 *     INT_DUPS    500 x int[100]    a[i] == i * 7
 *     BYTE_DUPS   300 x byte[1024]  a[i] == (byte) (i * 31 + 7)   (not zeros: the JDK has zeroed byte[1024]s)
 *     LONG_ARRAY_DUPS 200 x long[16]  a[i] == i * 1_000_000_007L
 *   Collections:
 *     PRESIZED_LISTS      50 ArrayList, new ArrayList<>(1000), 3 elements        size 3, capacity 1000
 *     PRESIZED_MAPS       40 HashMap, new HashMap<>(1000), 1 put                  size 1, table length 1024
 *     EMPTY_DEFAULT_LISTS 30 ArrayList, new ArrayList<>()                         size 0, capacity 0 (one shared
 *                                                                                 empty Object[0] for all 30)
 *     EMPTY_SIZED_LISTS   30 ArrayList, new ArrayList<>(64)                       size 0, capacity 64
 *     COLLIDING_MAP        1 HashMap of 1,000 ContentDemo$CollidingKey (hashCode() always 42,
 *                          equals by id): all in one bucket, which HashMap turns into a tree of
 *                          HashMap$TreeNode; table length 2048
 *     INTEGER_MAP          1 HashMap of Integer 0..999: 1,000 buckets of one entry; table length 2048
 *   Threads (ContentDemo$Worker, run() -> descend(1) -> ... -> descend(depth), deepest frame parks
 *   in CountDownLatch.await()):
 *     planted-worker-1  non-daemon  depth 40  byte[1048576] local in descend(10), byte[100001] in descend(40)
 *     planted-worker-2  daemon      depth 60  byte[2097152] local in descend(10), byte[200002] in descend(60)
 *     planted-worker-3  non-daemon  depth 80  byte[3145728] local in descend(10), byte[300003] in descend(80)
 *     "depth" counts descend frames from the outermost, descend(1) called by run(), so in a
 *     stack listed from the top (HPROF frame numbers, Thread.print) descend(10) is the 10th
 *     descend frame from the bottom. Nothing but those frames refers to the local arrays.
 *   System properties: heapgraph.planted = planted-value-42, heapgraph.hostile = the hostile text.
 *
 * The exact figures (with the JVM's own shallow sizes from Instrumentation.getObjectSize, the
 * coder and backing-array counts read by reflection, the frames from Thread.getStackTrace())
 * go to the JSON file named by the first argument. Needs:
 *   -javaagent:<jar whose manifest says Premain-Class: ContentDemo$Agent>
 *   --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
 *
 * Protocol: java ContentDemo OUT.json plants everything, waits until the three workers are
 * parked, writes OUT.json, prints "READY\n" and blocks reading stdin (until a newline or EOF)
 * without allocating, so the controller can take `jcmd PID GC.heap_dump` and `jcmd PID
 * Thread.print` of one unmoving heap. Then it releases the workers and exits.
 *
 * Compile with javac -XDstringConcat=inline; no lambdas (both would pull java.lang.invoke
 * objects into the heap).
 */
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

public final class ContentDemo {
    // ---- sizes of the planted groups
    static final int LATIN1_COUNT = 20_000;
    static final int UTF16_COUNT = 5_000;
    static final int LONG_COUNT = 3_000;
    static final int LONG_LENGTH = 200;
    static final int SHARED_COUNT = 1_000;
    static final int HOSTILE_COUNT = 10;
    static final int INT_ARRAYS = 500, INT_LENGTH = 100;
    static final int BYTE_ARRAYS = 300, BYTE_LENGTH = 1024;
    static final int LONG_ARRAYS = 200, LONG_ARRAY_LENGTH = 16;
    static final int PRESIZED_LIST_COUNT = 50, PRESIZED_LIST_CAPACITY = 1000, PRESIZED_LIST_SIZE = 3;
    static final int PRESIZED_MAP_COUNT = 40, PRESIZED_MAP_CAPACITY = 1000;
    static final int EMPTY_LIST_COUNT = 30, EMPTY_SIZED_CAPACITY = 64;
    static final int MAP_ENTRIES = 1_000;
    static final int COLLIDING_HASH = 42;
    static final int BIG_LOCAL_DEPTH = 10;

    // ---- the planted content, reachable from these statics
    static String[] LATIN1_DUPS, UTF16_DUPS, LONG_DUPS, SHARED_DUPS, HOSTILE_DUPS;
    static int[][] INT_DUPS;
    static byte[][] BYTE_DUPS;
    static long[][] LONG_ARRAY_DUPS;
    static ArrayList<?>[] PRESIZED_LISTS, EMPTY_DEFAULT_LISTS, EMPTY_SIZED_LISTS;
    static HashMap<?, ?>[] PRESIZED_MAPS;
    static HashMap<CollidingKey, Boolean> COLLIDING_MAP;
    static HashMap<Integer, Boolean> INTEGER_MAP;
    static Worker[] WORKERS;

    static final CountDownLatch PARKED = new CountDownLatch(3);
    static final CountDownLatch RELEASE = new CountDownLatch(1);
    static volatile long sink;

    /** The -javaagent entry point: keeps the Instrumentation for getObjectSize. */
    public static final class Agent {
        static volatile Instrumentation inst;

        public static void premain(String args, Instrumentation instrumentation) {
            inst = instrumentation;
        }
    }

    /** A key whose hashCode always collides; equal only to a key with the same id. */
    static final class CollidingKey {
        final int id;

        CollidingKey(int id) {
            this.id = id;
        }

        @Override
        public int hashCode() {
            return COLLIDING_HASH;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof CollidingKey && ((CollidingKey) o).id == id;
        }
    }

    /** A planted thread: run() -> descend(1) -> ... -> descend(maxDepth), which parks. */
    static final class Worker extends Thread {
        final int maxDepth;
        final int bigBytes;       // byte[] local of descend(BIG_LOCAL_DEPTH)
        final int deepestBytes;   // byte[] local of descend(maxDepth)

        Worker(String name, boolean daemon, int maxDepth, int bigBytes, int deepestBytes) {
            super(name);
            setDaemon(daemon);
            this.maxDepth = maxDepth;
            this.bigBytes = bigBytes;
            this.deepestBytes = deepestBytes;
        }

        @Override
        public void run() {
            try {
                sink += descend(1);
            } catch (InterruptedException e) {
                // exit
            }
        }

        int descend(int depth) throws InterruptedException {
            byte[] big = depth == BIG_LOCAL_DEPTH ? new byte[bigBytes] : null;
            int r;
            if (depth == maxDepth) {
                byte[] deepest = new byte[deepestBytes];
                PARKED.countDown();
                RELEASE.await();
                r = deepest.length;          // keeps 'deepest' live across the wait
            } else {
                r = descend(depth + 1);
            }
            return big == null ? r : r + big.length;   // keeps 'big' live across the call
        }
    }

    /**
     * The text of a literal written with a leading '~', as a char[]. A literal stays in the
     * heap (the class's resolved constant pool holds the interned String), so writing a planted
     * text itself as a literal would add one more copy; "~text" is a different text.
     */
    static char[] plain(String tildeLiteral) {
        if (tildeLiteral.charAt(0) != '~') {
            throw new IllegalArgumentException(tildeLiteral);
        }
        return Arrays.copyOfRange(tildeLiteral.toCharArray(), 1, tildeLiteral.length());
    }

    /** count distinct Strings, each with its own backing array: new String(char[]) copies. */
    static String[] copies(char[] text, int count) {
        String[] out = new String[count];
        for (int i = 0; i < count; i++) {
            out[i] = new String(text);
        }
        return out;
    }

    static void plantStrings() {
        LATIN1_DUPS = copies(plain("~planted-duplicate-alpha"), LATIN1_COUNT);
        UTF16_DUPS = copies(plain("~planted-utf16-caf\u00e9-\u03b2eta-\u20ac"), UTF16_COUNT);
        char[] lng = new char[LONG_LENGTH];
        char[] head = plain("~planted-long-latin1-text:");
        char[] tail = plain("~abcdefghijklmnopqrstuvwxyz0123456789");
        for (int i = 0; i < LONG_LENGTH; i++) {
            lng[i] = i < head.length ? head[i] : tail[(i - head.length) % tail.length];
        }
        LONG_DUPS = copies(lng, LONG_COUNT);
        String original = new String(plain("~planted-shared-array-value"));
        SHARED_DUPS = new String[SHARED_COUNT];
        SHARED_DUPS[0] = original;
        for (int i = 1; i < SHARED_COUNT; i++) {
            SHARED_DUPS[i] = new String(original);      // shares original's byte[]
        }
        HOSTILE_DUPS = copies(plain("~</script><img src=x onerror=alert(1)>\"'&\001"), HOSTILE_COUNT);
    }

    static void plantArrays() {
        INT_DUPS = new int[INT_ARRAYS][];
        for (int k = 0; k < INT_ARRAYS; k++) {
            int[] a = new int[INT_LENGTH];
            for (int i = 0; i < INT_LENGTH; i++) {
                a[i] = i * 7;
            }
            INT_DUPS[k] = a;
        }
        BYTE_DUPS = new byte[BYTE_ARRAYS][];
        for (int k = 0; k < BYTE_ARRAYS; k++) {
            byte[] a = new byte[BYTE_LENGTH];
            for (int i = 0; i < BYTE_LENGTH; i++) {
                a[i] = (byte) (i * 31 + 7);
            }
            BYTE_DUPS[k] = a;
        }
        LONG_ARRAY_DUPS = new long[LONG_ARRAYS][];
        for (int k = 0; k < LONG_ARRAYS; k++) {
            long[] a = new long[LONG_ARRAY_LENGTH];
            for (int i = 0; i < LONG_ARRAY_LENGTH; i++) {
                a[i] = i * 1_000_000_007L;
            }
            LONG_ARRAY_DUPS[k] = a;
        }
    }

    static void plantCollections() {
        PRESIZED_LISTS = new ArrayList<?>[PRESIZED_LIST_COUNT];
        for (int k = 0; k < PRESIZED_LIST_COUNT; k++) {
            ArrayList<Integer> l = new ArrayList<Integer>(PRESIZED_LIST_CAPACITY);
            for (int i = 0; i < PRESIZED_LIST_SIZE; i++) {
                l.add(Integer.valueOf(i));              // the JDK's cached Integers
            }
            PRESIZED_LISTS[k] = l;
        }
        PRESIZED_MAPS = new HashMap<?, ?>[PRESIZED_MAP_COUNT];
        for (int k = 0; k < PRESIZED_MAP_COUNT; k++) {
            HashMap<Integer, Boolean> m = new HashMap<Integer, Boolean>(PRESIZED_MAP_CAPACITY);
            m.put(Integer.valueOf(k), Boolean.TRUE);    // the table (1024) is allocated here
            PRESIZED_MAPS[k] = m;
        }
        EMPTY_DEFAULT_LISTS = new ArrayList<?>[EMPTY_LIST_COUNT];
        EMPTY_SIZED_LISTS = new ArrayList<?>[EMPTY_LIST_COUNT];
        for (int k = 0; k < EMPTY_LIST_COUNT; k++) {
            EMPTY_DEFAULT_LISTS[k] = new ArrayList<Object>();
            EMPTY_SIZED_LISTS[k] = new ArrayList<Object>(EMPTY_SIZED_CAPACITY);
        }
        COLLIDING_MAP = new HashMap<CollidingKey, Boolean>();
        INTEGER_MAP = new HashMap<Integer, Boolean>();
        for (int i = 0; i < MAP_ENTRIES; i++) {
            COLLIDING_MAP.put(new CollidingKey(i), Boolean.TRUE);
            INTEGER_MAP.put(Integer.valueOf(i), Boolean.TRUE);
        }
    }

    // ---------------------------------------------------------------- expected.json

    static Field field(Class<?> c, String name) throws Exception {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    static long size(Object o) {
        return Agent.inst.getObjectSize(o);
    }

    /** JSON string literal: escapes '"', '\\', control characters and all non-ASCII as \\uXXXX. */
    static void str(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                String hex = Integer.toHexString(c);
                sb.append("\\u");
                for (int p = hex.length(); p < 4; p++) {
                    sb.append('0');
                }
                sb.append(hex);
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }

    static void key(StringBuilder sb, String k) {
        str(sb, k);
        sb.append(": ");
    }

    /*
     * Wasted bytes of a group of equal strings -- the rule MAT's "Duplicate Strings" idea
     * implies as we understand it: one copy is needed, everything beyond it is waste.
     *   wasted = (count - 1) * shallow(String) + (distinctArrays - 1) * shallow(backing array)
     * so 1,000 Strings sharing one array waste only the 999 extra String objects. Shallow sizes
     * are the JVM's (Instrumentation.getObjectSize), equal for every copy of a group.
     * For a group of equal primitive arrays: wasted = (count - 1) * shallow(array).
     */
    static void stringGroup(StringBuilder sb, String name, String holder, String[] group, String note)
            throws Exception {
        Field value = field(String.class, "value");
        Field coder = field(String.class, "coder");
        IdentityHashMap<Object, Boolean> arrays = new IdentityHashMap<Object, Boolean>();
        String first = group[0];
        for (String s : group) {
            if (!s.equals(first) || size(s) != size(first) || size(value.get(s)) != size(value.get(first))) {
                throw new IllegalStateException("group " + name + " is not uniform");
            }
            arrays.put(value.get(s), Boolean.TRUE);
        }
        byte[] firstValue = (byte[]) value.get(first);
        long stringShallow = size(first);
        long arrayShallow = size(firstValue);
        long wasted = (group.length - 1) * stringShallow + (arrays.size() - 1) * arrayShallow;
        sb.append("    {");
        key(sb, "name"); str(sb, name); sb.append(", ");
        key(sb, "holder"); str(sb, holder); sb.append(",\n     ");
        key(sb, "value"); str(sb, first); sb.append(",\n     ");
        key(sb, "length"); sb.append(first.length()).append(", ");
        key(sb, "coder"); sb.append(coder.getByte(first)).append(", ");
        key(sb, "count"); sb.append(group.length).append(", ");
        key(sb, "distinct_arrays"); sb.append(arrays.size()).append(",\n     ");
        key(sb, "string_shallow"); sb.append(stringShallow).append(", ");
        key(sb, "array_class"); str(sb, "byte[]"); sb.append(", ");
        key(sb, "array_length"); sb.append(firstValue.length).append(", ");
        key(sb, "array_shallow"); sb.append(arrayShallow).append(", ");
        key(sb, "wasted_bytes"); sb.append(wasted);
        if (note != null) {
            sb.append(",\n     ");
            key(sb, "note"); str(sb, note);
        }
        sb.append('}');
    }

    static void arrayGroup(StringBuilder sb, String type, String holder, Object[] group, int length,
                           String content) {
        long shallow = size(group[0]);
        IdentityHashMap<Object, Boolean> distinct = new IdentityHashMap<Object, Boolean>();
        for (Object a : group) {
            distinct.put(a, Boolean.TRUE);
        }
        sb.append("    {");
        key(sb, "element_type"); str(sb, type); sb.append(", ");
        key(sb, "holder"); str(sb, holder); sb.append(", ");
        key(sb, "length"); sb.append(length).append(", ");
        key(sb, "count"); sb.append(group.length).append(", ");
        key(sb, "distinct_arrays"); sb.append(distinct.size()).append(",\n     ");
        key(sb, "content"); str(sb, content); sb.append(", ");
        key(sb, "array_shallow"); sb.append(shallow).append(", ");
        key(sb, "wasted_bytes"); sb.append((distinct.size() - 1) * shallow).append('}');
    }

    /** Backing array of an ArrayList or HashMap, read by reflection (needs --add-opens java.util). */
    static Object backing(Object c) throws Exception {
        if (c instanceof ArrayList) {
            return field(ArrayList.class, "elementData").get(c);
        }
        return field(HashMap.class, "table").get(c);
    }

    static int length(Object array) {
        return array == null ? 0 : ((Object[]) array).length;
    }

    static void collectionGroup(StringBuilder sb, String name, String holder, Object[] group, String note)
            throws Exception {
        Object first = group[0];
        int size = first instanceof ArrayList ? ((ArrayList<?>) first).size() : ((HashMap<?, ?>) first).size();
        Object firstArray = backing(first);
        int capacity = length(firstArray);
        IdentityHashMap<Object, Boolean> arrays = new IdentityHashMap<Object, Boolean>();
        for (Object c : group) {
            int s = c instanceof ArrayList ? ((ArrayList<?>) c).size() : ((HashMap<?, ?>) c).size();
            Object a = backing(c);
            if (c.getClass() != first.getClass() || s != size || length(a) != capacity) {
                throw new IllegalStateException("group " + name + " is not uniform");
            }
            if (a != null) {
                arrays.put(a, Boolean.TRUE);
            }
        }
        sb.append("    {");
        key(sb, "name"); str(sb, name); sb.append(", ");
        key(sb, "holder"); str(sb, holder); sb.append(",\n     ");
        key(sb, "class"); str(sb, first.getClass().getName()); sb.append(", ");
        key(sb, "count"); sb.append(group.length).append(", ");
        key(sb, "size"); sb.append(size).append(", ");
        key(sb, "capacity"); sb.append(capacity).append(",\n     ");
        key(sb, "shallow"); sb.append(size(first)).append(", ");
        key(sb, "backing_array_class");
        str(sb, firstArray == null ? "" : firstArray.getClass().getComponentType().getName() + "[]");
        sb.append(", ");
        key(sb, "backing_array_shallow"); sb.append(firstArray == null ? 0 : size(firstArray)).append(", ");
        key(sb, "distinct_backing_arrays"); sb.append(arrays.size());
        if (first instanceof HashMap) {
            // bucket occupancy, following HashMap$Node.next (tree bins keep those links too)
            Field next = field(Class.forName("java.util.HashMap$Node"), "next");
            int used = 0, longest = 0;
            String binClass = "";
            for (Object bin : (Object[]) firstArray) {
                if (bin == null) {
                    continue;
                }
                used++;
                int n = 0;
                for (Object e = bin; e != null; e = next.get(e)) {
                    n++;
                }
                if (n > longest) {
                    longest = n;
                    binClass = bin.getClass().getName();
                }
            }
            sb.append(",\n     ");
            key(sb, "buckets_used"); sb.append(used).append(", ");
            key(sb, "longest_bucket"); sb.append(longest).append(", ");
            key(sb, "longest_bucket_node_class"); str(sb, binClass);
        }
        if (note != null) {
            sb.append(",\n     ");
            key(sb, "note"); str(sb, note);
        }
        sb.append('}');
    }

    static void threadEntry(StringBuilder sb, Worker w) {
        StackTraceElement[] frames = w.getStackTrace();
        int deepest = -1, descends = 0;     // frame index (0 = top) of descend(maxDepth)
        for (int i = 0; i < frames.length; i++) {
            if (frames[i].getClassName().equals(Worker.class.getName())
                    && frames[i].getMethodName().equals("descend")) {
                if (deepest < 0) {
                    deepest = i;
                }
                descends++;
            }
        }
        if (descends != w.maxDepth) {
            throw new IllegalStateException(w.getName() + ": " + descends + " descend frames");
        }
        sb.append("    {");
        key(sb, "name"); str(sb, w.getName()); sb.append(", ");
        key(sb, "daemon"); sb.append(w.isDaemon()).append(", ");
        key(sb, "state"); str(sb, w.getState().name()); sb.append(", ");
        key(sb, "depth"); sb.append(w.maxDepth).append(", ");
        key(sb, "frame_count"); sb.append(frames.length).append(",\n     ");
        key(sb, "big_locals"); sb.append("[\n");
        int[][] locals = {{BIG_LOCAL_DEPTH, w.bigBytes}, {w.maxDepth, w.deepestBytes}};
        for (int k = 0; k < locals.length; k++) {
            sb.append("       {");
            key(sb, "type"); str(sb, "byte[]"); sb.append(", ");
            key(sb, "length"); sb.append(locals[k][1]).append(", ");
            key(sb, "shallow"); sb.append(size(new byte[locals[k][1]])).append(", ");
            key(sb, "descend_depth"); sb.append(locals[k][0]).append(", ");
            key(sb, "frame_index"); sb.append(deepest + (w.maxDepth - locals[k][0])).append(", ");
            key(sb, "method"); str(sb, "descend"); sb.append(", ");
            key(sb, "class"); str(sb, Worker.class.getName()); sb.append('}');
            sb.append(k + 1 < locals.length ? ",\n" : "\n");
        }
        sb.append("     ],\n     ");
        key(sb, "frames"); sb.append("[\n");
        for (int i = 0; i < frames.length; i++) {
            sb.append("       {");
            key(sb, "class"); str(sb, frames[i].getClassName()); sb.append(", ");
            key(sb, "method"); str(sb, frames[i].getMethodName());
            if (frames[i].isNativeMethod()) {
                sb.append(", ");
                key(sb, "native"); sb.append("true");
            }
            sb.append('}').append(i + 1 < frames.length ? ",\n" : "\n");
        }
        sb.append("     ]}");
    }

    static String expectedJson() throws Exception {
        StringBuilder sb = new StringBuilder(1 << 16);
        sb.append("{\n  ");
        key(sb, "generator"); str(sb, "data/gen/ContentDemo.java, run by data/gen/content.sh"); sb.append(",\n  ");
        key(sb, "java_vm_version"); str(sb, System.getProperty("java.vm.version")); sb.append(",\n  ");
        key(sb, "sizes_from"); str(sb, "java.lang.instrument.Instrumentation.getObjectSize"); sb.append(",\n  ");
        key(sb, "waste_rule");
        str(sb, "strings: (count - 1) * string_shallow + (distinct_arrays - 1) * array_shallow;"
                + " arrays: (distinct_arrays - 1) * array_shallow");
        sb.append(",\n  ");

        key(sb, "strings"); sb.append("[\n");
        stringGroup(sb, "latin1", "ContentDemo.LATIN1_DUPS", LATIN1_DUPS, null);
        sb.append(",\n");
        stringGroup(sb, "utf16", "ContentDemo.UTF16_DUPS", UTF16_DUPS, null);
        sb.append(",\n");
        stringGroup(sb, "long-latin1", "ContentDemo.LONG_DUPS", LONG_DUPS, null);
        sb.append(",\n");
        stringGroup(sb, "shared-array", "ContentDemo.SHARED_DUPS", SHARED_DUPS,
                "new String(String) copies: all share one byte[]");
        sb.append(",\n");
        stringGroup(sb, "hostile", "ContentDemo.HOSTILE_DUPS", HOSTILE_DUPS,
                "HOSTILE_DUPS[0] is also the value of system property heapgraph.hostile");
        sb.append("\n  ],\n  ");

        key(sb, "arrays"); sb.append("[\n");
        arrayGroup(sb, "int", "ContentDemo.INT_DUPS", INT_DUPS, INT_LENGTH, "a[i] = i * 7");
        sb.append(",\n");
        arrayGroup(sb, "byte", "ContentDemo.BYTE_DUPS", BYTE_DUPS, BYTE_LENGTH, "a[i] = (byte) (i * 31 + 7)");
        sb.append(",\n");
        arrayGroup(sb, "long", "ContentDemo.LONG_ARRAY_DUPS", LONG_ARRAY_DUPS, LONG_ARRAY_LENGTH,
                "a[i] = i * 1000000007L");
        sb.append("\n  ],\n  ");

        key(sb, "collections"); sb.append("[\n");
        collectionGroup(sb, "presized-list", "ContentDemo.PRESIZED_LISTS", PRESIZED_LISTS,
                "new ArrayList<>(1000), 3 adds");
        sb.append(",\n");
        collectionGroup(sb, "presized-map", "ContentDemo.PRESIZED_MAPS", PRESIZED_MAPS,
                "new HashMap<>(1000), 1 put");
        sb.append(",\n");
        collectionGroup(sb, "empty-default-list", "ContentDemo.EMPTY_DEFAULT_LISTS", EMPTY_DEFAULT_LISTS,
                "new ArrayList<>(): all share ArrayList.DEFAULTCAPACITY_EMPTY_ELEMENTDATA");
        sb.append(",\n");
        collectionGroup(sb, "empty-sized-list", "ContentDemo.EMPTY_SIZED_LISTS", EMPTY_SIZED_LISTS,
                "new ArrayList<>(64), nothing added");
        sb.append(",\n");
        collectionGroup(sb, "colliding-map", "ContentDemo.COLLIDING_MAP", new Object[] {COLLIDING_MAP},
                "keys ContentDemo$CollidingKey, hashCode() == 42 for all, equals by id");
        sb.append(",\n");
        collectionGroup(sb, "integer-map", "ContentDemo.INTEGER_MAP", new Object[] {INTEGER_MAP},
                "keys Integer 0..999");
        sb.append("\n  ],\n  ");

        key(sb, "threads"); sb.append("[\n");
        for (int i = 0; i < WORKERS.length; i++) {
            threadEntry(sb, WORKERS[i]);
            sb.append(i + 1 < WORKERS.length ? ",\n" : "\n");
        }
        sb.append("  ],\n  ");

        key(sb, "system_properties"); sb.append("[\n");
        String[] keys = {"heapgraph.planted", "heapgraph.hostile"};
        for (int i = 0; i < keys.length; i++) {
            sb.append("    {");
            key(sb, "key"); str(sb, keys[i]); sb.append(", ");
            key(sb, "value"); str(sb, System.getProperty(keys[i])); sb.append('}');
            sb.append(i + 1 < keys.length ? ",\n" : "\n");
        }
        sb.append("  ]\n}\n");
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || Agent.inst == null) {
            System.err.println("usage: java -javaagent:AGENT.jar ... ContentDemo <expected.json>");
            System.exit(2);
        }
        byte[] marker = "READY\n".getBytes(StandardCharsets.US_ASCII);
        FileOutputStream out = new FileOutputStream(FileDescriptor.out);
        FileInputStream in = new FileInputStream(FileDescriptor.in);

        plantStrings();
        plantArrays();
        plantCollections();
        System.setProperty("heapgraph.planted", "planted-value-42");
        System.setProperty("heapgraph.hostile", HOSTILE_DUPS[0]);

        WORKERS = new Worker[] {
            new Worker("planted-worker-1", false, 40, 1 << 20, 100_001),
            new Worker("planted-worker-2", true, 60, 2 << 20, 200_002),
            new Worker("planted-worker-3", false, 80, 3 << 20, 300_003),
        };
        for (Worker w : WORKERS) {
            w.start();
        }
        PARKED.await();
        for (Worker w : WORKERS) {               // counted down just before parking
            while (w.getState() != Thread.State.WAITING) {
                Thread.sleep(1);
            }
        }

        try (FileOutputStream json = new FileOutputStream(args[0])) {
            json.write(expectedJson().getBytes(StandardCharsets.US_ASCII));
        }

        out.write(marker);
        out.flush();
        // Block until the controller has taken the dump and Thread.print; EOF also releases us.
        while (true) {
            int c = in.read();
            if (c < 0 || c == '\n') {
                break;
            }
        }
        RELEASE.countDown();
        for (Worker w : WORKERS) {
            w.join();
        }
    }
}
