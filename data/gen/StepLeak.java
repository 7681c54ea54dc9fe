/*
 * StepLeak -- a leak that grows in steps, and a steady state, for heapgraph's `diff` tests
 * (issue 8; docs/diff.md).
 *
 *   leak   DIR: three live dumps DIR/stepleak-1.hprof .. -3.hprof. Before each, one step
 *               adds STEP_LISTENERS StepLeak$Listener (each with a byte[PAYLOAD]) to the
 *               static list StepLeak$EventHub.LISTENERS that nothing ever clears: the
 *               planted holder, about 1.6 MB more at every step.
 *   steady DIR: two live dumps DIR/steady-1.hprof and -2.hprof of the same steady state.
 *
 * Both modes run the same bounded workload before every dump: StepLeak$Cache.ENTRIES, a
 * HashMap of CACHE_ENTRIES Integer keys whose byte[CACHE_BYTES] values are replaced each
 * round, so it churns without growing. A first dump, deleted at once, loads the classes
 * that dumping itself needs, so they are in every kept dump.
 *
 * Dumps come from HotSpotDiagnosticMXBean.dumpHeap(path, true) (a full GC first); gen.sh
 * gzips them. No lambdas (they would pull java.lang.invoke objects into the heap).
 */
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class StepLeak {
    static final int STEP_LISTENERS = 1500;
    static final int PAYLOAD = 1024;
    static final int CACHE_ENTRIES = 500;
    static final int CACHE_BYTES = 512;

    static final class Listener {
        final byte[] payload = new byte[PAYLOAD];
        int events;
    }

    static final class EventHub {
        static final List<Listener> LISTENERS = new ArrayList<Listener>();
    }

    static final class Cache {
        static final Map<Integer, byte[]> ENTRIES = new HashMap<Integer, byte[]>();
    }

    static void work(int round) {
        for (int i = 0; i < CACHE_ENTRIES; ++i) {
            byte[] value = new byte[CACHE_BYTES];
            value[0] = (byte) round;
            Cache.ENTRIES.put(Integer.valueOf(i), value);
        }
    }

    static void dump(HotSpotDiagnosticMXBean bean, File file) throws Exception {
        file.delete();
        bean.dumpHeap(file.getPath(), true);
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        File dir = new File(args[1]);
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        work(0);
        File warmup = new File(dir, "warmup.hprof");
        dump(bean, warmup);
        warmup.delete();
        if (mode.equals("leak")) {
            for (int step = 1; step <= 3; ++step) {
                work(step);
                for (int i = 0; i < STEP_LISTENERS; ++i) EventHub.LISTENERS.add(new Listener());
                dump(bean, new File(dir, "stepleak-" + step + ".hprof"));
            }
        } else {
            for (int step = 1; step <= 2; ++step) {
                work(step);
                dump(bean, new File(dir, "steady-" + step + ".hprof"));
            }
        }
        System.out.println(EventHub.LISTENERS.size() + Cache.ENTRIES.size());
    }
}
