/*
 * ThreeLeaks -- plants three classic leaks for heapgraph's leak-suspect tests (issue 7).
 *
 *   1. a static map that keeps growing: ThreeLeaks$SessionCache.SESSIONS, a HashMap of
 *      SESSIONS String keys to byte[ENTRY_BYTES] values;
 *   2. a listener list that is never cleared: ThreeLeaks$EventBus.LISTENERS, an ArrayList of
 *      LISTENERS ThreeLeaks$PayloadListener, each holding a byte[ENTRY_BYTES];
 *   3. a large value held by a ThreadLocal in a pooled thread: a single-thread
 *      ExecutorService runs one task that sets ThreeLeaks.BUFFER (a ThreadLocal<byte[]>) to a
 *      byte[THREAD_LOCAL_BYTES] and returns; the worker thread stays alive in the pool.
 *
 * Each leak holds about 6 MB of a heap of about 20 MB, so each is well over MAT's 10%.
 * The main thread keeps one instance of SessionCache and of EventBus in local variables
 * (as application code would keep its services): an instance refers to its class, so each
 * class object is reachable both from the application class loader and from the main
 * thread, and the dominator tree has each class object directly under the super root. With
 * no such instance, both classes would hang under the loader's class list and the loader
 * would be one suspect holding leaks 1 and 2 together.
 *
 * Protocol: prints "READY" once the leaks are planted, then blocks reading stdin; the
 * controller (gen.sh) takes `jcmd <pid> GC.heap_dump -gz=1 FILE` (a live dump: full GC first).
 * No lambdas (they would pull java.lang.invoke objects into the heap).
 */
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public final class ThreeLeaks {
    static final int SESSIONS = 3000;
    static final int LISTENERS = 3000;
    static final int ENTRY_BYTES = 2048;
    static final int THREAD_LOCAL_BYTES = 6 << 20;

    static final ThreadLocal<byte[]> BUFFER = new ThreadLocal<byte[]>();

    static final class SessionCache {
        static final Map<String, byte[]> SESSIONS = new HashMap<String, byte[]>();

        void remember(String id, byte[] state) {
            SESSIONS.put(id, state);
        }
    }

    interface Listener {
        void onEvent(int event);
    }

    static final class PayloadListener implements Listener {
        final byte[] state = new byte[ENTRY_BYTES];
        int events;

        public void onEvent(int event) {
            events += event;
        }
    }

    static final class EventBus {
        static final List<Listener> LISTENERS = new ArrayList<Listener>();

        void register(Listener listener) {
            LISTENERS.add(listener);
        }
    }

    static final class FillBuffer implements Runnable {
        public void run() {
            byte[] buffer = new byte[THREAD_LOCAL_BYTES];
            buffer[0] = 1;
            BUFFER.set(buffer);
        }
    }

    public static void main(String[] args) throws Exception {
        SessionCache cache = new SessionCache();
        EventBus bus = new EventBus();
        for (int i = 0; i < SESSIONS; ++i) cache.remember("session-" + i, new byte[ENTRY_BYTES]);
        for (int i = 0; i < LISTENERS; ++i) bus.register(new PayloadListener());
        ExecutorService pool = Executors.newFixedThreadPool(1);
        Future<?> done = pool.submit(new FillBuffer());
        done.get();
        System.out.println("READY");
        System.out.flush();
        System.in.read();
        pool.shutdown();
        System.out.println(cache.hashCode() + bus.hashCode());
    }
}
