/*
 * BigHeap -- deterministic generator of a large, realistic Java heap for heapgraph's
 * end-to-end benchmark (bench/e2e.sh).
 *
 * usage: java -Xms10g -Xmx10g -Xmn2g -XX:+UseParallelGC -XX:-UseAdaptiveSizePolicy \
 *             -XX:-ResizeTLAB -XX:TLABSize=256k BigHeap [TARGET_MB=2048] [MAX_WAIT_S=7200]
 * Fixed generation sizes with a large old generation: with adaptive sizing the old generation
 * ends ~98% full and a later young GC can escalate to a full GC that collects the deliberate
 * garbage before the dump. Fixed small TLABs: otherwise the unused rest of the (up to ~100 MB)
 * TLABs is written as huge int[] filler objects. About 4 GB RSS and ~15 s for 2 GB.
 *
 * Builds object graphs until the *estimated* HPROF dump size (8-byte ids, as written by
 * `jcmd <pid> GC.heap_dump -all`) reaches TARGET_MB, prints a "STATS ..." line and then
 * "READY <pid>", and sleeps (at most MAX_WAIT_S seconds) so a controller can take the dumps.
 * About 15k objects per MB of dump (~30M objects for 2 GB, ~68 bytes of dump per object).
 *
 * Content (all from one seeded java.util.Random, so the same TARGET_MB gives the same graph;
 * only JVM-internal objects, e.g. TLAB filler int[]s and the attach machinery, vary):
 *   - domain model: Customer -> Address, ArrayList<Order>, HashMap<String,String> attrs,
 *     referrer Customer (cross links and 2-cycles); Order -> customer (back edge: cycle),
 *     ArrayList/LinkedList<LineItem>, long[] timestamps, note String;
 *     LineItem -> Product (shared), Order; Product -> Category tree (parent <-> children),
 *     char[] description, int[] ratings, byte[] thumbnail.
 *   - Strings (new String objects with their own Latin-1 / UTF-16 byte[] values; some shared
 *     pool Strings referenced from many objects).
 *   - collections: HashMap<Long,Customer> (the main index), ConcurrentHashMap<String,Product>
 *     (catalog), ConcurrentHashMap<String,Session>, TreeMaps<Long,Order> (<= 50k entries each),
 *     LinkedLists of recent orders (10k..100k nodes each), ArrayList<Customer[256]> pages.
 *   - long chains: Event lists of 10k..100k nodes (one in four closed into a ring),
 *     random binary search trees of 1k..30k TreeNodes, misc primitive arrays of varied length.
 *   - garbage (~5% of the objects): deleted customers with their orders, cancelled orders that
 *     point at live customers/products, an unreachable Event ring, dead temp Strings. They are
 *     held during the build, a System.gc() moves everything to the old generation, then the
 *     holder is dropped: nothing collects them afterwards, so `GC.heap_dump -all` keeps them.
 */
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

public class BigHeap {

    // ------------------------------------------------------------------ domain model
    static final class Address {
        String street; String city; String zip; int number;
    }
    static final class Customer {
        long id; int tier;
        String name; String email; Address address;
        ArrayList<Order> orders; HashMap<String, String> attrs; Customer referrer;
    }
    static final class Order {
        long id; long totalCents; int status;
        Customer customer; List<LineItem> items; long[] timestamps; String note;
    }
    static final class LineItem {
        long priceCents; int qty; Product product; Order order;
    }
    static final class Product {
        long priceCents; int stock;
        String sku; String name; char[] description; int[] ratings; byte[] thumbnail; Category category;
    }
    static final class Category {
        int depth; String name; Category parent; ArrayList<Category> children; ArrayList<Product> products;
    }
    static final class Session {
        long created; String token; Customer customer; long[] history; LinkedList<LineItem> cart;
    }
    static final class Event {
        long ts; int kind; Event next; Object payload;
    }
    static final class TreeNode {
        int key; TreeNode left; TreeNode right; Object value;
    }

    // ------------------------------------------------------------------ roots (static fields)
    static HashMap<Long, Customer> CUSTOMERS = new HashMap<>();
    static ArrayList<Customer[]> CUSTOMER_PAGES = new ArrayList<>();
    static ConcurrentHashMap<String, Product> CATALOG = new ConcurrentHashMap<>();
    static ArrayList<Product> PRODUCTS = new ArrayList<>();
    static ArrayList<Category> LEAF_CATEGORIES = new ArrayList<>();
    static Category CATEGORY_ROOT;
    static ConcurrentHashMap<String, Session> SESSIONS = new ConcurrentHashMap<>();
    static ArrayList<TreeMap<Long, Order>> ORDER_INDEXES = new ArrayList<>();
    static ArrayList<LinkedList<Order>> RECENT_ORDERS = new ArrayList<>();
    static ArrayList<Event> CHAINS = new ArrayList<>();
    static ArrayList<TreeNode> TREES = new ArrayList<>();
    static ArrayList<Object[]> BUFFERS = new ArrayList<>();
    static String[] CITIES, ZIPS, STREET_WORDS;
    static ArrayList<Object> GARBAGE = new ArrayList<>();   // dropped before READY

    static final Random R = new Random(0x5EEDB16L);

    // ------------------------------------------------------------------ dump-size model
    // HPROF with 8-byte ids: INSTANCE_DUMP = tag 1 + id 8 + stack serial 4 + class id 8 + length 4
    // + field bytes (object fields 8 bytes each, over the class and its superclasses);
    // OBJ_ARRAY_DUMP = 1+8+4+4+8 + 8*n; PRIM_ARRAY_DUMP = 1+8+4+4+1 + n*elemSize.
    static long est, objs, garbObjs, garbBytes, strings;
    static boolean garbageMode;
    static final long JVM_BASE = 10L << 20;  // JVM's own objects, classes, symbols, roots (measured, JDK 17)

    static void count(long bytes) {
        est += bytes; objs++;
        if (garbageMode) { garbObjs++; garbBytes += bytes; }
    }
    static void inst(int refs, int primBytes) { count(25 + 8L * refs + primBytes); }
    static void oarr(int n) { count(25 + 8L * n); }
    static void parr(int n, int elem) { count(18 + (long) n * elem); }

    // JDK 17 field layouts
    static void cString() { inst(1, 6); }              // value, hash, coder, hashIsZero
    static void cLong() { inst(0, 8); }
    static void cArrayList(int cap) {    // elementData, size, modCount; capacity 0 shares an empty array
        inst(1, 8);
        if (cap > 0) oarr(cap);
    }
    static void cHashMap() { inst(4, 16); }            // keySet, values, table, entrySet + 4 ints
    static void cHashNode() { inst(3, 4); }            // HashMap$Node / CHM$Node
    static void cLinkedList() { inst(2, 8); }
    static void cLinkedNode() { inst(3, 0); }
    static void cTreeMap() { inst(7, 8); }
    static void cTreeEntry() { inst(5, 1); }
    static void cCHM() { inst(8, 20); }

    static int hashCap(long size) {       // HashMap/CHM table length after growth from 16
        int cap = 16;
        while (size > cap * 3L / 4) cap <<= 1;
        return cap;
    }
    static int listCap(long size) {       // ArrayList default-constructor growth
        if (size == 0) return 0;
        long cap = 10;
        while (cap < size) cap += cap >> 1;
        return (int) cap;
    }

    // ------------------------------------------------------------------ strings
    static final StringBuilder SB = new StringBuilder(128);
    static String str() {                 // new String from SB with an exact-length byte[] value
        String s = SB.toString();
        boolean latin1 = true;
        for (int i = 0; i < s.length(); i++) if (s.charAt(i) > 0xFF) { latin1 = false; break; }
        cString();
        parr(latin1 ? s.length() : 2 * s.length(), 1);
        strings++;
        return s;
    }
    static String str(String a) { SB.setLength(0); SB.append(a); return str(); }

    static final String[] FIRST = {"James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael",
        "Linda", "William", "Elizabeth", "David", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
        "Thomas", "Sarah", "Charles", "Karen", "Jürgen", "Zoë", "Łukasz", "Ðorđe", "Søren", "Amélie",
        "Chen", "Wei", "Yuki", "Hiroshi", "李娜", "Олег", "Fatima", "Omar", "Priya", "Arjun", "Lucía",
        "Mateo", "Ingrid", "Lars"};
    static final String[] LAST = {"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller",
        "Davis", "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson",
        "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Müller", "Schmidt", "Kowalski", "Nowak",
        "Sørensen", "Dubois", "Rossi", "Bianchi", "Tanaka", "Suzuki", "王", "Иванов", "Khan", "Patel",
        "Silva", "Santos", "Novák", "Horvath", "Berg", "Olsen"};
    static final String[] FIRST_ASCII = {"james", "mary", "john", "patricia", "robert", "jennifer",
        "michael", "linda", "william", "elizabeth", "david", "barbara", "richard", "susan", "joseph",
        "jessica", "thomas", "sarah", "charles", "karen", "juergen", "zoe", "lukasz", "dorde", "soren",
        "amelie", "chen", "wei", "yuki", "hiroshi", "li.na", "oleg", "fatima", "omar", "priya", "arjun",
        "lucia", "mateo", "ingrid", "lars"};
    static final String[] DOMAINS = {"example.com", "mail.example.org", "corp.example.net", "gmail.test",
        "shop.example", "univ.example.edu"};
    static final String[] ATTR_KEYS = {"locale", "source", "campaign", "segment", "newsletter", "currency",
        "timezone", "loyalty"};
    static final String[] ATTR_VALUES = {"en_US", "de_DE", "fr_FR", "ja_JP", "web", "mobile", "partner",
        "gold", "silver", "yes", "no", "EUR", "USD", "UTC", "Europe/Berlin"};
    static final String[] WORDS = {"deluxe", "compact", "wireless", "organic", "steel", "classic", "smart",
        "mini", "pro", "ultra", "eco", "family", "travel", "kitchen", "garden", "office", "sport", "kids"};

    // ------------------------------------------------------------------ builders
    static long nextCustomerId = 1_000_000L, nextOrderId = 50_000_000L;
    static int pagePos = 256;
    static Customer[] page;
    static TreeMap<Long, Order> orderIndex;
    static LinkedList<Order> recent;
    static int recentLimit;

    static int skewed(int max) {          // small values likely, up to max
        double u = R.nextDouble();
        return 1 + (int) (u * u * u * max);
    }
    static int logUniform(int lo, int hi) {
        return (int) Math.round(Math.exp(Math.log(lo) + R.nextDouble() * (Math.log(hi) - Math.log(lo))));
    }

    static Category buildCategory(Category parent, int depth) {
        Category c = new Category(); inst(4, 4);
        c.depth = depth; c.parent = parent;
        SB.setLength(0);
        SB.append(WORDS[R.nextInt(WORDS.length)]).append('-').append(depth).append('-').append(R.nextInt(1000));
        c.name = str();
        if (depth < 4) {
            int n = 2 + R.nextInt(5);
            c.children = new ArrayList<>(n); cArrayList(n);
            for (int i = 0; i < n; i++) c.children.add(buildCategory(c, depth + 1));
        } else {
            LEAF_CATEGORIES.add(c);
        }
        c.products = new ArrayList<>();   // sized at the end (see finishEstimate)
        return c;
    }

    static Product buildProduct() {
        Product p = new Product(); inst(6, 12);
        p.priceCents = 99 + R.nextInt(200_000);
        p.stock = R.nextInt(10_000);
        SB.setLength(0);
        SB.append("SKU-").append(100_000 + PRODUCTS.size()).append('-').append((char) ('A' + R.nextInt(26)));
        p.sku = str();
        SB.setLength(0);
        SB.append(WORDS[R.nextInt(WORDS.length)]).append(' ').append(WORDS[R.nextInt(WORDS.length)])
          .append(' ').append(WORDS[R.nextInt(WORDS.length)]);
        p.name = str();
        int dl = logUniform(16, 600);
        p.description = new char[dl]; parr(dl, 2);
        for (int i = 0; i < dl; i++) p.description[i] = (char) ('a' + R.nextInt(26));
        int rl = skewed(64);
        p.ratings = new int[rl]; parr(rl, 4);
        for (int i = 0; i < rl; i++) p.ratings[i] = 1 + R.nextInt(5);
        if (R.nextInt(4) != 0) {
            int tl = logUniform(256, 16_384);
            p.thumbnail = new byte[tl]; parr(tl, 1);
            R.nextBytes(p.thumbnail);
        }
        Category c = LEAF_CATEGORIES.get(R.nextInt(LEAF_CATEGORIES.size()));
        p.category = c;
        c.products.add(p);
        PRODUCTS.add(p);
        CATALOG.put(p.sku, p); cHashNode();
        return p;
    }

    static Address buildAddress() {
        Address a = new Address(); inst(3, 4);
        a.number = 1 + R.nextInt(999);
        SB.setLength(0);
        SB.append(STREET_WORDS[R.nextInt(STREET_WORDS.length)]).append(' ')
          .append(R.nextBoolean() ? "Street" : R.nextBoolean() ? "Avenue" : "Road");
        a.street = str();
        a.city = CITIES[R.nextInt(CITIES.length)];                  // shared
        a.zip = R.nextInt(3) == 0 ? ZIPS[R.nextInt(ZIPS.length)]    // shared
                                  : str(Integer.toString(10_000 + R.nextInt(90_000)));
        return a;
    }

    static LineItem buildLineItem(Order o) {
        LineItem li = new LineItem(); inst(2, 12);
        li.product = PRODUCTS.get(R.nextInt(PRODUCTS.size()));
        li.order = o;
        li.qty = skewed(10);
        li.priceCents = li.product.priceCents;
        return li;
    }

    static Order buildOrder(Customer c) {
        Order o = new Order(); inst(4, 20);
        o.id = nextOrderId++;
        o.customer = c;
        o.status = R.nextInt(6);
        int n = skewed(8);
        if (R.nextInt(5) == 0) {
            LinkedList<LineItem> l = new LinkedList<>(); cLinkedList();
            for (int i = 0; i < n; i++) { l.add(buildLineItem(o)); cLinkedNode(); }
            o.items = l;
        } else {
            ArrayList<LineItem> l = new ArrayList<>(n); cArrayList(n);
            for (int i = 0; i < n; i++) l.add(buildLineItem(o));
            o.items = l;
        }
        long total = 0;
        for (LineItem li : o.items) total += li.priceCents * li.qty;
        o.totalCents = total;
        if (R.nextInt(10) < 4) {
            int tn = 1 + R.nextInt(8);
            o.timestamps = new long[tn]; parr(tn, 8);
            long t = 1_600_000_000_000L + R.nextInt(1_000_000_000);
            for (int i = 0; i < tn; i++) { t += R.nextInt(86_400_000); o.timestamps[i] = t; }
        }
        if (R.nextInt(20) == 0) {
            SB.setLength(0);
            SB.append("please deliver to the ").append(WORDS[R.nextInt(WORDS.length)]).append(" entrance, code ")
              .append(R.nextInt(10_000));
            o.note = str();
        }
        return o;
    }

    static Customer buildCustomer(boolean live) {
        Customer c = new Customer(); inst(6, 12);
        c.id = nextCustomerId++;
        c.tier = R.nextInt(4);
        int f = R.nextInt(FIRST.length), l = R.nextInt(LAST.length);
        SB.setLength(0);
        SB.append(FIRST[f]).append(' ').append(LAST[l]);
        c.name = str();
        SB.setLength(0);
        SB.append(FIRST_ASCII[f]).append('.').append(R.nextInt(100_000)).append('@')
          .append(DOMAINS[R.nextInt(DOMAINS.length)]);
        c.email = str();
        c.address = buildAddress();
        double u = R.nextDouble();
        int no = u < 0.15 ? 0 : u < 0.35 ? 1 : u < 0.55 ? 2 : u < 0.70 ? 3 : u < 0.80 ? 4 : 5 + R.nextInt(8);
        c.orders = new ArrayList<>(no); cArrayList(no);
        for (int i = 0; i < no; i++) {
            Order o = buildOrder(c);
            c.orders.add(o);
            if (live) indexOrder(o);
        }
        if (live && R.nextInt(100) == 0) {           // cancelled order: points at c, c does not know it
            boolean g = garbageMode; garbageMode = true;
            GARBAGE.add(buildOrder(c));
            garbageMode = g;
        }
        if (R.nextInt(5) == 0) {
            c.attrs = new HashMap<>(); cHashMap();
            int na = 1 + R.nextInt(6), k0 = R.nextInt(ATTR_KEYS.length);
            for (int i = 0; i < na; i++) {   // distinct keys: no overwritten (collected) values
                String k = ATTR_KEYS[(k0 + i) % ATTR_KEYS.length];
                String v = R.nextBoolean() ? ATTR_VALUES[R.nextInt(ATTR_VALUES.length)]
                                           : str(Integer.toHexString(R.nextInt()));
                c.attrs.put(k, v); cHashNode();
            }
            oarr(16);   // table (<= 6 entries: never resized)
        }
        return c;
    }

    static void indexOrder(Order o) {
        if (R.nextInt(10) == 0) {
            if (orderIndex == null || orderIndex.size() >= 50_000) {
                orderIndex = new TreeMap<>(); cTreeMap();
                ORDER_INDEXES.add(orderIndex);
            }
            orderIndex.put(o.id, o); cLong(); cTreeEntry();
        }
        if (R.nextInt(30) == 0) {
            if (recent == null || recent.size() >= recentLimit) {
                recent = new LinkedList<>(); cLinkedList();
                recentLimit = 10_000 + R.nextInt(90_001);
                RECENT_ORDERS.add(recent);
            }
            recent.addFirst(o); cLinkedNode();
        }
    }

    static void addLiveCustomer() {
        Customer c = buildCustomer(true);
        if (pagePos == 256) {
            page = new Customer[256]; oarr(256);
            CUSTOMER_PAGES.add(page);
            pagePos = 0;
        }
        page[pagePos++] = c;
        CUSTOMERS.put(c.id, c); cLong(); cHashNode();
        int r = R.nextInt(100);
        if (r < 10 && CUSTOMERS.size() > 1) {           // referral: link to an earlier customer
            Customer[] p = CUSTOMER_PAGES.get(R.nextInt(CUSTOMER_PAGES.size()));
            Customer other = p[R.nextInt(p == page ? pagePos : 256)];
            c.referrer = other;
            if (r < 2 && other.referrer == null && other != c) other.referrer = c;   // 2-cycle
        }
        if (R.nextInt(25) == 0) addSession(c);
    }

    static void addSession(Customer c) {
        Session s = new Session(); inst(4, 8);
        s.created = 1_700_000_000_000L + R.nextInt(1_000_000_000);
        SB.setLength(0);
        for (int i = 0; i < 4; i++) SB.append(Long.toHexString(R.nextLong() | Long.MIN_VALUE));
        s.token = str();
        s.customer = c;
        int hl = logUniform(32, 1024);
        s.history = new long[hl]; parr(hl, 8);
        for (int i = 0; i < hl; i++) s.history[i] = R.nextLong();
        s.cart = new LinkedList<>(); cLinkedList();
        int n = R.nextInt(4);
        for (int i = 0; i < n; i++) { s.cart.add(buildLineItem(null)); cLinkedNode(); }
        SESSIONS.put(s.token, s); cHashNode();
    }

    static Event buildChain(int len, boolean ring) {
        Event head = null, tail = null;
        long ts = 1_650_000_000_000L + R.nextInt(1_000_000);
        for (int i = 0; i < len; i++) {
            Event e = new Event(); inst(2, 12);
            e.ts = ts += R.nextInt(1000);
            e.kind = R.nextInt(16);
            int p = R.nextInt(100);
            if (p < 10) { e.payload = Long.valueOf(R.nextLong()); cLong(); }
            else if (p < 15) { SB.setLength(0); SB.append("evt#").append(i).append('/').append(e.kind); e.payload = str(); }
            else if (p < 17) e.payload = PRODUCTS.get(R.nextInt(PRODUCTS.size()));
            if (tail == null) head = e; else tail.next = e;
            tail = e;
        }
        if (ring) tail.next = head;
        return head;
    }

    static TreeNode buildTree(int n) {
        TreeNode root = null;
        for (int i = 0; i < n; i++) {
            TreeNode t = new TreeNode(); inst(3, 4);
            t.key = R.nextInt();
            if (R.nextInt(10) < 3) {
                int vl = 1 + R.nextInt(16);
                int[] v = new int[vl]; parr(vl, 4);
                v[0] = i;
                t.value = v;
            } else if (R.nextInt(10) == 0) {
                t.value = CUSTOMERS.get(1_000_000L + R.nextInt((int) (nextCustomerId - 1_000_000L)));
            }
            if (root == null) { root = t; continue; }
            TreeNode cur = root;
            while (true) {
                if (t.key < cur.key) { if (cur.left == null) { cur.left = t; break; } cur = cur.left; }
                else { if (cur.right == null) { cur.right = t; break; } cur = cur.right; }
            }
        }
        return root;
    }

    static Object[] bufPage;
    static int bufPos = 1024;
    static void addBuffer() {
        Object a;
        switch (R.nextInt(5)) {
            case 0: { int n = logUniform(512, 65_536); byte[] b = new byte[n]; R.nextBytes(b); parr(n, 1); a = b; break; }
            case 1: { int n = logUniform(64, 16_384); int[] b = new int[n]; b[n - 1] = n; parr(n, 4); a = b; break; }
            case 2: { int n = logUniform(32, 8_192); long[] b = new long[n]; b[0] = n; parr(n, 8); a = b; break; }
            case 3: { int n = logUniform(64, 8_192); char[] b = new char[n]; java.util.Arrays.fill(b, 'x'); parr(n, 2); a = b; break; }
            default: {
                int n = logUniform(4, 512);
                Object[] b = new Object[n]; oarr(n);
                for (int i = 0; i < n; i += 1 + R.nextInt(3)) b[i] = PRODUCTS.get(R.nextInt(PRODUCTS.size()));
                a = b;
            }
        }
        if (bufPos == 1024) { bufPage = new Object[1024]; oarr(1024); BUFFERS.add(bufPage); bufPos = 0; }
        bufPage[bufPos++] = a;
    }

    static void finishEstimate() {
        // collection internals whose final size is only known at the end
        cHashMap(); oarr(hashCap(CUSTOMERS.size()));
        cCHM(); oarr(hashCap(CATALOG.size()));
        cCHM(); oarr(hashCap(SESSIONS.size()));
        for (ArrayList<?> l : List.of(CUSTOMER_PAGES, PRODUCTS, LEAF_CATEGORIES, ORDER_INDEXES, RECENT_ORDERS,
                                      CHAINS, TREES, BUFFERS))
            cArrayList(listCap(l.size()));
        for (Category c : LEAF_CATEGORIES) { cArrayList(listCap(c.products.size())); }
    }

    public static void main(String[] args) throws Exception {
        long targetMb = args.length > 0 ? Long.parseLong(args[0]) : 2048;
        long maxWait = args.length > 1 ? Long.parseLong(args[1]) : 7200;
        long target = targetMb << 20;
        long t0 = System.nanoTime();

        // shared pools
        CITIES = new String[500]; oarr(500);
        for (int i = 0; i < CITIES.length; i++) {
            SB.setLength(0);
            SB.append(WORDS[R.nextInt(WORDS.length)]).append("ville-").append(i);
            CITIES[i] = str();
        }
        ZIPS = new String[2000]; oarr(2000);
        for (int i = 0; i < ZIPS.length; i++) ZIPS[i] = str(Integer.toString(10_000 + R.nextInt(90_000)));
        STREET_WORDS = new String[300]; oarr(300);
        for (int i = 0; i < STREET_WORDS.length; i++) {
            SB.setLength(0);
            SB.append(LAST[R.nextInt(LAST.length)]).append(i % 7 == 0 ? "ová" : "").append(WORDS[i % WORDS.length]);
            STREET_WORDS[i] = str();
        }
        CATEGORY_ROOT = buildCategory(null, 0);
        for (int i = 0; i < 1000; i++) buildProduct();

        long nextChain = 0, nextTree = 500_000, nextBuffer = 0;
        long budget = target - JVM_BASE;
        int customers = 0, units = 0;
        while (est < budget) {
            // one in 20 customer units is a deleted customer: unreachable at dump time
            if (R.nextInt(20) == 0) {
                garbageMode = true;
                GARBAGE.add(buildCustomer(false));
                if (R.nextInt(4) == 0) {   // and some dead temp strings
                    SB.setLength(0); SB.append("tmp-").append(R.nextLong()); GARBAGE.add(str());
                }
                garbageMode = false;
            } else {
                addLiveCustomer();
                customers++;
            }
            if (++units % 10 == 0) buildProduct();
            if (objs >= nextBuffer) { addBuffer(); nextBuffer += 2_000; }
            if (objs >= nextChain) {
                CHAINS.add(buildChain(10_000 + R.nextInt(90_001), CHAINS.size() % 4 == 3));
                nextChain += 1_500_000;
            }
            if (objs >= nextTree) {
                TREES.add(buildTree(logUniform(1_000, 30_000)));
                nextTree += 1_000_000;
            }
        }
        // an unreachable ring of events
        garbageMode = true;
        GARBAGE.add(buildChain(20_000, true));
        garbageMode = false;
        finishEstimate();
        long tBuilt = System.nanoTime();

        // move everything (garbage included) to the old generation, then drop the garbage
        System.gc();
        Object keepLocal = CUSTOMERS.get(1_000_000L);   // a JAVA_FRAME root
        GARBAGE = null;
        long tGc = System.nanoTime();

        Runtime rt = Runtime.getRuntime();
        System.out.printf("STATS target_mb=%d est_dump_mb=%.1f objects=%d garbage_objects=%d (%.1f%%) "
                + "garbage_mb=%.1f strings=%d customers=%d products=%d chains=%d trees=%d "
                + "build_s=%.1f gc_s=%.1f heap_used_mb=%d%n",
                targetMb, (est + JVM_BASE) / 1048576.0, objs, garbObjs, 100.0 * garbObjs / objs,
                garbBytes / 1048576.0, strings, customers, PRODUCTS.size(), CHAINS.size(), TREES.size(),
                (tBuilt - t0) / 1e9, (tGc - tBuilt) / 1e9, (rt.totalMemory() - rt.freeMemory()) >> 20);
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        long end = System.currentTimeMillis() + maxWait * 1000;
        while (System.currentTimeMillis() < end) Thread.sleep(1000);
        if (keepLocal.hashCode() == 42) System.out.println();
    }
}
