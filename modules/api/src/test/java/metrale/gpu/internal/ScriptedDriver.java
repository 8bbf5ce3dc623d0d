// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import metrale.gpu.CudaError;
import metrale.gpu.DeviceInfo;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import metrale.gpu.spi.MemInfo;

/**
 * A driver for the core's own tests: what the runtime core asks of a driver, and nothing that
 * needs a device or a simulator.
 *
 * <ul>
 *   <li><b>Memory</b> is an address space of 64 KiB pages, made on first write (unwritten bytes
 *       read 0): {@link #memAlloc} hands out 64 KiB-aligned ranges that are never reused, so a
 *       test can read and write any byte of a live range ({@link #read}, {@link #write}), and a
 *       range check refuses anything else with {@code INVALID_VALUE}.</li>
 *   <li><b>Streams</b> run their work at once, in the calling thread. A capturing stream records
 *       it as graph nodes instead (one chain per capture), which a graph launch runs.</li>
 *   <li><b>Events</b> complete when recorded, unless {@link #holdEvents()}: then a recorded event
 *       stays incomplete until {@link #complete}, a sync of its stream, or of the context.</li>
 *   <li><b>Failures</b> are scripted: {@link #failNext} makes the next call of that name fail;
 *       a sticky error makes every later call fail with it, as a faulted context does.</li>
 *   <li><b>Kernels</b> are Java code registered by module and name ({@link #kernel}), run over
 *       this driver's bytes with the launch's argument words.</li>
 *   <li>Every call is logged by its method name ({@link #calls()}, {@link #count}); a call no test
 *       scripts throws {@link UnsupportedOperationException} naming it.</li>
 * </ul>
 *
 * <p>A runtime opens over it with {@link #open()} or {@link #builder()}: the {@code scripted}
 * backend (registered in this test tree's {@code META-INF/services}) is available only to the
 * thread between {@code builder()} and its {@code open()}, so no other test ever chooses it.
 * Thread-safe: one lock.
 */
public final class ScriptedDriver implements Driver {

    /** The backend's name. */
    public static final String BACKEND = "scripted";

    /** Page size of the address space, and the alignment of every allocation. */
    static final int PAGE = 1 << 16;

    private static final long DEVICE_BASE = 0x7000_0000_0000L;
    private static final long MANAGED_BASE = 0x3000_0000_0000L;

    /** Java code standing in for a kernel: it reads and writes the driver's bytes. */
    @FunctionalInterface
    public interface Kernel {
        /**
         * Runs the kernel.
         *
         * @param device the driver, for {@link #read} and {@link #write}
         * @param config the launch's grid and block
         * @param args   the launch's argument words
         */
        void run(ScriptedDriver device, LaunchConfig config, long[] args);
    }

    /** A graph node: its type and parameters, run by {@link #run(Node)}. */
    private static final class Node {
        final long handle;
        final int type;
        long func;
        LaunchConfig config;
        long[] args;
        long dst;
        long src;
        long bytes;
        int value;
        /** A host copy or a child graph: what it does. */
        Runnable other;

        Node(long handle, int type) {
            this.handle = handle;
            this.type = type;
        }

        Node copy() {
            Node n = new Node(handle, type);
            n.take(this);
            return n;
        }

        void take(Node o) {
            func = o.func;
            config = o.config;
            args = o.args;
            dst = o.dst;
            src = o.src;
            bytes = o.bytes;
            value = o.value;
            other = o.other;
        }
    }

    /** An event: where it was last recorded, and whether that work is complete. */
    private static final class Ev {
        long stream = -1;
        boolean done = true;
    }

    private final long capacity;
    private final TreeMap<Long, Long> allocations = new TreeMap<>(Long::compareUnsigned);
    private final Set<Long> managed = new HashSet<>();
    private final Map<Long, byte[]> pages = new HashMap<>();
    private final Map<Long, Arena> host = new HashMap<>();
    private final TreeMap<Long, Long> hostBytes = new TreeMap<>(Long::compareUnsigned);
    private long nextDevice = DEVICE_BASE;
    private long nextManaged = MANAGED_BASE;
    private long used;
    /** The stream-ordered pool: bytes it reserves from the device, and of them those free for reuse. */
    private long poolReserved;
    private long poolFree;
    private long poolReservedHigh;
    private long poolUsedHigh;

    private final List<String> calls = new ArrayList<>();
    /** The host side of each blocking copy: its address if native, -1 for a heap segment. */
    private final List<Long> syncCopyHosts = new ArrayList<>();
    private final Map<String, Integer> counts = new HashMap<>();
    private final Map<String, ArrayDeque<CudaError>> failures = new HashMap<>();
    private final Map<String, Integer> drops = new HashMap<>();
    private String race;
    private CudaError sticky;

    private long nextHandle = 16;
    private final Set<Long> streams = new HashSet<>();
    private final Map<Long, Ev> events = new HashMap<>();
    private final List<Recorded> recorded = new ArrayList<>();
    private boolean hold;
    private final Map<Long, List<Node>> capturing = new HashMap<>();
    private final Map<Long, List<Node>> graphs = new HashMap<>();
    private final Map<Long, List<Node>> execs = new HashMap<>();
    private final Map<Long, Node> nodes = new HashMap<>();
    private boolean noEdges;
    private int nodeType = -1;

    private final Map<String, Kernel> kernels = new HashMap<>();
    private final Map<Long, String> modules = new HashMap<>();
    private final Map<Long, String> functions = new HashMap<>();

    private boolean memPools;
    private boolean checksOrder;
    private Extents extents;
    private boolean closed;

    /** A driver of a 1 GiB device. */
    public ScriptedDriver() {
        this(1L << 30);
    }

    /** @param capacity the device's memory in bytes */
    public ScriptedDriver(long capacity) {
        this.capacity = capacity;
    }

    // ---- opening a runtime over it --------------------------------------------------------------

    /** The driver the calling thread is opening a runtime over, until the provider takes it. */
    private static final ThreadLocal<ScriptedDriver> OPENING = new ThreadLocal<>();

    /**
     * {@return a builder for a runtime over this driver} Its {@code open()}, on this thread, opens
     * the runtime; until then the calling thread sees the {@code scripted} backend available. Every
     * site is walked ({@code leakDetection=all}), since the core's tests assert on sites; a test of
     * another level sets it.
     */
    public GpuBuilder builder() {
        OPENING.set(this);
        // The tests over this driver script and count cuMemAlloc and cuMemFree; the pool's ask for it.
        return Gpu.builder().backend(BACKEND).leakDetection(LeakDetection.ALL).allocator("driver");
    }

    /** {@return a runtime over this driver with the default options but {@code leakDetection=all} and {@code allocator=driver}} */
    public Gpu open() {
        return builder().open();
    }

    /** The {@code scripted} backend: available only to a thread that called {@link #builder()} and has not opened yet. */
    public static final class Provider implements BackendProvider {

        /** Created by {@link java.util.ServiceLoader}. */
        public Provider() {
        }

        @Override
        public String name() {
            return BACKEND;
        }

        @Override
        public int priority() {
            return Integer.MIN_VALUE;
        }

        @Override
        public Availability availability() {
            return OPENING.get() != null ? Availability.yes()
                    : Availability.no("the core's test driver: open it with ScriptedDriver.open");
        }

        @Override
        public Driver open(DriverConfig config) {
            ScriptedDriver d = OPENING.get();
            if (d == null) {
                throw new IllegalStateException("the scripted backend opens only through ScriptedDriver.builder()");
            }
            OPENING.remove();
            return d;
        }
    }

    // ---- what a test scripts and reads ----------------------------------------------------------

    /** Makes the next call of {@code call} (a method name, e.g. {@code memAlloc}) fail with {@code error}. */
    public synchronized ScriptedDriver failNext(String call, CudaError error) {
        failures.computeIfAbsent(call, k -> new ArrayDeque<>()).add(error);
        return this;
    }

    /**
     * Makes the next call of {@code call} return without doing anything, as a driver that
     * silently ignores it would; for the graph node setters.
     */
    public synchronized ScriptedDriver dropNext(String call) {
        drops.merge(call, 1, Integer::sum);
        return this;
    }

    /** {@return whether the call just logged is to be dropped} */
    private boolean dropped(String call) {
        Integer n = drops.get(call);
        if (n == null) {
            return false;
        }
        if (n == 1) {
            drops.remove(call);
        } else {
            drops.put(call, n - 1);
        }
        return true;
    }

    /**
     * Makes the driver one that checks stream order, answering {@code description} for every block
     * the pool hands out ({@code null}: none is unordered).
     */
    public synchronized ScriptedDriver reportRaces(String description) {
        race = description;
        checksOrder = true;
        return this;
    }

    /** Recorded events stay incomplete until {@link #complete}, a stream sync or a context sync. */
    public synchronized ScriptedDriver holdEvents() {
        hold = true;
        return this;
    }

    /** Completes the work before {@code event}'s last record. */
    public synchronized void complete(long event) {
        ev(event, "complete").done = true;
    }

    /** {@return whether the work before {@code event}'s last record is complete} */
    public synchronized boolean isComplete(long event) {
        return ev(event, "isComplete").done;
    }

    /** Completes every recorded event and stops holding them. */
    public synchronized void releaseEvents() {
        hold = false;
        events.values().forEach(e -> e.done = true);
    }

    /** One {@code eventRecord}: the event and the stream it was recorded on. */
    public record Recorded(long event, long stream) {
    }

    /** {@return the event records so far, oldest first (an event recorded twice appears twice)} */
    public synchronized List<Recorded> recordedEvents() {
        return List.copyOf(recorded);
    }

    /** Makes {@link #graphGetEdges} answer no edges, as for a capture that forked. */
    public synchronized ScriptedDriver noEdges() {
        noEdges = true;
        return this;
    }

    /** Makes {@link #graphNodeType} answer {@code type} for every node, as a driver whose nodes are not what the trace says. */
    public synchronized ScriptedDriver nodeType(int type) {
        nodeType = type;
        return this;
    }

    /** Gives the driver a stream-ordered allocator ({@code cuMemAllocAsync}). */
    public synchronized ScriptedDriver withMemPools() {
        memPools = true;
        return this;
    }

    /** Registers {@code kernel} as {@code func} of module {@code module}. */
    public synchronized ScriptedDriver kernel(String module, String func, Kernel kernel) {
        kernels.put(module + "::" + func, kernel);
        return this;
    }

    /** {@return every call so far, by method name, oldest first} */
    public synchronized List<String> calls() {
        return List.copyOf(calls);
    }

    /** What the runtime told this driver of bounds, with the arguments, oldest first; never scripted to fail. */
    private final List<String> bounds = new ArrayList<>();

    /**
     * {@return what the runtime told this driver of its memory's bounds, oldest first}: {@code carve
     * 0xP N}, {@code release 0xP}, {@code held 0xP} and {@code redzone 0xP N PAD}
     */
    public synchronized List<String> bounds() {
        return List.copyOf(bounds);
    }

    @Override
    public synchronized void poolBlockCarved(long ptr, long bytes) {
        bounds.add("carve 0x" + Long.toHexString(ptr) + " " + bytes);
    }

    @Override
    public synchronized void poolBlockReleased(long ptr, long stream) {
        bounds.add("release 0x" + Long.toHexString(ptr));
    }

    @Override
    public synchronized void memoryHeld(long ptr) {
        bounds.add("held 0x" + Long.toHexString(ptr));
    }

    @Override
    public synchronized void redZone(long ptr, long bytes, long pad) {
        bounds.add("redzone 0x" + Long.toHexString(ptr) + " " + bytes + " " + pad);
    }

    /**
     * {@return the host side of each {@code memcpyHtoD} and {@code memcpyDtoH} so far, oldest
     * first: its address when native, -1 for a heap segment}
     */
    public synchronized List<Long> syncCopyHosts() {
        return List.copyOf(syncCopyHosts);
    }

    /** {@return the base addresses of the live page-locked allocations} */
    public synchronized Set<Long> pageLocked() {
        return Set.copyOf(hostBytes.keySet());
    }

    /** {@return how often {@code call} was made} */
    public synchronized int count(String call) {
        return counts.getOrDefault(call, 0);
    }

    /** {@return the live device allocations, base to bytes} */
    public synchronized Map<Long, Long> allocations() {
        return Map.copyOf(allocations);
    }

    /** {@return the bytes allocated from the device} */
    public synchronized long usedBytes() {
        return used;
    }

    /** {@return {@code n} bytes of device memory at {@code addr}} */
    public synchronized byte[] read(long addr, int n) {
        check("read", addr, n);
        byte[] out = new byte[n];
        if (inHost(addr, n)) {
            MemorySegment.copy(MemorySegment.ofAddress(addr).reinterpret(n), ValueLayout.JAVA_BYTE, 0, out, 0, n);
            return out;
        }
        for (int done = 0; done < n; ) {
            long a = addr + done;
            int off = (int) (a & (PAGE - 1));
            int k = Math.min(n - done, PAGE - off);
            byte[] page = pages.get(a >>> 16);
            if (page != null) {
                System.arraycopy(page, off, out, done, k);
            }
            done += k;
        }
        return out;
    }

    /** Writes {@code data} to device memory at {@code addr}. */
    public synchronized void write(long addr, byte[] data) {
        check("write", addr, data.length);
        if (inHost(addr, data.length)) {
            MemorySegment.copy(data, 0, MemorySegment.ofAddress(addr).reinterpret(data.length), ValueLayout.JAVA_BYTE, 0, data.length);
            return;
        }
        for (int done = 0; done < data.length; ) {
            long a = addr + done;
            int off = (int) (a & (PAGE - 1));
            int k = Math.min(data.length - done, PAGE - off);
            System.arraycopy(data, done, pages.computeIfAbsent(a >>> 16, p -> new byte[PAGE]), off, k);
            done += k;
        }
    }

    private void fill(long addr, int value, long bytes) {
        byte[] b = new byte[(int) Math.min(bytes, PAGE)];
        Arrays.fill(b, (byte) value);
        for (long done = 0; done < bytes; done += b.length) {
            int k = (int) Math.min(b.length, bytes - done);
            write(addr + done, k == b.length ? b : Arrays.copyOf(b, k));
        }
    }

    private void copy(long dst, long src, long bytes) {
        for (long done = 0; done < bytes; done += PAGE) {
            int k = (int) Math.min(PAGE, bytes - done);
            write(dst + done, read(src + done, k));
        }
    }

    // ---- the machinery ---------------------------------------------------------------------------

    /** Logs a call and fails it as scripted, or with the context's sticky error. */
    private void call(String name) {
        calls.add(name);
        counts.merge(name, 1, Integer::sum);
        if (sticky != null) {
            throw new GpuException(sticky, name, "the context is faulted (scripted)");
        }
        ArrayDeque<CudaError> q = failures.get(name);
        CudaError e = q == null ? null : q.poll();
        if (e != null) {
            if (e.isSticky()) {
                sticky = e;
            }
            throw new GpuException(e, name, "scripted failure");
        }
    }

    private static UnsupportedOperationException unscripted(String call) {
        return new UnsupportedOperationException("ScriptedDriver does not script " + call + "; a test that needs it adds it");
    }

    private static GpuException invalid(String call, String why) {
        return new GpuException(CudaError.INVALID_VALUE, call, why);
    }

    private long floorHost(long a) {
        Long k = hostBytes.floorKey(a);
        return k == null ? -1 : k;
    }

    private boolean inHost(long a, long n) {
        long base = floorHost(a);
        return base != -1 && Long.compareUnsigned(a - base, hostBytes.get(base)) < 0
                && Long.compareUnsigned(n, hostBytes.get(base) - (a - base)) <= 0;
    }

    /** Refuses a range that is not inside one live allocation or page-locked range. */
    private void check(String call, long addr, long n) {
        var f = allocations.floorEntry(addr);
        boolean in = f != null && Long.compareUnsigned(addr - f.getKey(), f.getValue()) < 0
                && Long.compareUnsigned(n, f.getValue() - (addr - f.getKey())) <= 0;
        if (!in && !inHost(addr, n)) {
            throw invalid(call, "[0x" + Long.toHexString(addr) + ", +" + n + ") is not in live memory");
        }
    }

    private void stream(String call, long s) {
        if (s > 2 && !streams.contains(s)) {
            throw new GpuException(CudaError.INVALID_HANDLE, call, "stream 0x" + Long.toHexString(s) + " is not live");
        }
    }

    private Ev ev(long event, String call) {
        Ev e = events.get(event);
        if (e == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, call, "event " + event + " is not live");
        }
        return e;
    }

    /** Runs work on {@code s}, or records it as a node when {@code s} is capturing. */
    private void enqueue(long s, Node n) {
        List<Node> g = capturing.get(s);
        if (g != null) {
            nodes.put(n.handle, n);
            g.add(n);
        } else {
            run(n);
        }
    }

    private void run(Node n) {
        switch (n.type) {
            case NODE_KERNEL -> {
                Kernel k = kernels.get(functions.get(n.func));
                if (k == null) {
                    throw new GpuException(CudaError.INVALID_HANDLE, "launchKernel", "function " + n.func + " is unloaded");
                }
                k.run(this, n.config, n.args);
            }
            case NODE_MEMSET -> {
                check("memset", n.dst, n.bytes);
                fill(n.dst, n.value, n.bytes);
            }
            case NODE_MEMCPY -> {
                if (n.other != null) {
                    n.other.run();
                } else {
                    check("memcpy", n.src, n.bytes);
                    check("memcpy", n.dst, n.bytes);
                    copy(n.dst, n.src, n.bytes);
                }
            }
            default -> n.other.run();
        }
    }

    private Node node(int type) {
        return new Node(nextHandle++, type);
    }

    private Node memsetNode(long ptr, int value, long bytes) {
        Node n = node(NODE_MEMSET);
        n.dst = ptr;
        n.value = value & 0xff;
        n.bytes = bytes;
        return n;
    }

    private Node copyNode(long dst, long src, long bytes) {
        Node n = node(NODE_MEMCPY);
        n.dst = dst;
        n.src = src;
        n.bytes = bytes;
        return n;
    }

    // ---- the driver ---------------------------------------------------------------------------------

    @Override
    public String name() {
        return BACKEND;
    }

    @Override
    public synchronized DeviceInfo deviceInfo() {
        call("deviceInfo");
        return new DeviceInfo(BACKEND, "Scripted Device", capacity, 4, 9, 0, 99 << 10);
    }

    @Override
    public synchronized void bindToThread() {
        call("bindToThread");
    }

    @Override
    public synchronized long memAlloc(long bytes) {
        call("memAlloc");
        return alloc("memAlloc", bytes, false);
    }

    private long alloc(String call, long bytes, boolean isManaged) {
        if (bytes <= 0) {
            throw invalid(call, "bytes=" + bytes);
        }
        if (Long.compareUnsigned(bytes, capacity - used) > 0) {
            throw new GpuException(CudaError.OUT_OF_MEMORY, call, "bytes=" + bytes + ", " + (capacity - used) + " free");
        }
        long span = (bytes + PAGE - 1) & -PAGE;
        long p = isManaged ? nextManaged : nextDevice;
        if (isManaged) {
            nextManaged += span + PAGE;
            managed.add(p);
        } else {
            nextDevice += span + PAGE;
        }
        allocations.put(p, bytes);
        used += bytes;
        return p;
    }

    @Override
    public synchronized long memAllocManaged(long bytes, int flags) {
        call("memAllocManaged");
        return alloc("memAllocManaged", bytes, true);
    }

    @Override
    public synchronized void memFree(long ptr) {
        call("memFree");
        release("memFree", ptr);
    }

    private void release(String call, long ptr) {
        if (ptr == 0) {
            return;
        }
        Long bytes = allocations.remove(ptr);
        if (bytes == null) {
            throw invalid(call, "ptr=0x" + Long.toHexString(ptr) + " is no live allocation's base");
        }
        managed.remove(ptr);
        used -= bytes;
        for (long pg = ptr >>> 16; pg <= (ptr + bytes - 1) >>> 16; pg++) {
            pages.remove(pg);
        }
    }

    @Override
    public synchronized MemInfo memGetInfo() {
        call("memGetInfo");
        return new MemInfo(capacity - used, capacity);
    }

    @Override
    public synchronized MemorySegment memHostAlloc(long bytes, int flags) {
        call("memHostAlloc");
        if (bytes == 0) {
            return MemorySegment.NULL;
        }
        Arena a = Arena.ofShared();
        MemorySegment seg = a.allocate(bytes, 4096);
        host.put(seg.address(), a);
        hostBytes.put(seg.address(), bytes);
        return seg;
    }

    @Override
    public synchronized void memFreeHost(MemorySegment seg) {
        call("memFreeHost");
        if (seg.address() == 0) {
            return;
        }
        Arena a = host.remove(seg.address());
        if (a == null) {
            throw invalid("memFreeHost", "not a base from memHostAlloc");
        }
        hostBytes.remove(seg.address());
        a.close();
    }

    @Override
    public synchronized long memHostGetDevicePointer(MemorySegment seg) {
        call("memHostGetDevicePointer");
        return seg.address();
    }

    @Override
    public boolean supportsMemPools() {
        return memPools;
    }

    @Override
    public synchronized long memAllocAsync(long bytes, long stream) {
        call("memAllocAsync");
        stream("memAllocAsync", stream);
        long p;
        if (bytes > 0 && poolFree >= bytes) {
            // Reserved memory freed before: the pool hands it out again without asking the device.
            used -= bytes;
            p = alloc("memAllocAsync", bytes, false);
            poolFree -= bytes;
        } else {
            p = alloc("memAllocAsync", bytes, false);
            poolReserved += bytes;
        }
        poolReservedHigh = Math.max(poolReservedHigh, poolReserved);
        poolUsedHigh = Math.max(poolUsedHigh, poolReserved - poolFree);
        return p;
    }

    @Override
    public synchronized void memFreeAsync(long ptr, long stream) {
        call("memFreeAsync");
        stream("memFreeAsync", stream);
        Long bytes = allocations.get(ptr);
        release("memFreeAsync", ptr);
        // The bytes stay reserved by the pool, and allocated from the device, until a trim.
        used += bytes;
        poolFree += bytes;
    }

    @Override
    public synchronized void memPoolTrimTo(long minBytesToKeep) {
        call("memPoolTrimTo");
        long give = Math.min(poolFree, Math.max(0, poolReserved - minBytesToKeep));
        poolFree -= give;
        poolReserved -= give;
        used -= give;
    }

    @Override
    public synchronized long memPoolGetAttribute(int attr) {
        call("memPoolGetAttribute");
        return switch (attr) {
            case MEMPOOL_ATTR_RESERVED_MEM_CURRENT -> poolReserved;
            case MEMPOOL_ATTR_USED_MEM_CURRENT -> poolReserved - poolFree;
            case MEMPOOL_ATTR_RESERVED_MEM_HIGH -> poolReservedHigh;
            case MEMPOOL_ATTR_USED_MEM_HIGH -> poolUsedHigh;
            default -> throw invalid("memPoolGetAttribute", "attr=" + attr);
        };
    }

    @Override
    public synchronized void memPoolSetAttribute(int attr, long value) {
        call("memPoolSetAttribute");
    }

    @Override
    public synchronized boolean detectsStreamOrderViolations() {
        return checksOrder;
    }

    @Override
    public synchronized String streamOrderViolation(long ptr, long bytes, long stream) {
        call("streamOrderViolation");
        return race;
    }

    @Override
    public synchronized void allocationExtents(Extents extents) {
        this.extents = extents;
    }

    /** {@return the runtime's answer to which allocation {@code addr} lies in, as {@link #allocationExtents} gave it; {@code null} when none} */
    public long[] extentOf(long addr) {
        Extents e;
        synchronized (this) {
            e = extents;
        }
        return e == null ? null : e.of(addr);
    }

    @Override
    public synchronized void memcpyHtoD(long dst, MemorySegment src, long bytes) {
        call("memcpyHtoD");
        syncCopyHosts.add(src.isNative() ? src.address() : -1L);
        write(dst, src.asSlice(0, bytes).toArray(ValueLayout.JAVA_BYTE));
    }

    @Override
    public synchronized void memcpyDtoH(MemorySegment dst, long src, long bytes) {
        call("memcpyDtoH");
        syncCopyHosts.add(dst.isNative() ? dst.address() : -1L);
        MemorySegment.copy(read(src, (int) bytes), 0, dst, ValueLayout.JAVA_BYTE, 0, (int) bytes);
    }

    @Override
    public synchronized void memcpyDtoD(long dst, long src, long bytes) {
        call("memcpyDtoD");
        run(copyNode(dst, src, bytes));
    }

    @Override
    public synchronized void memcpyHtoDAsync(long dst, MemorySegment src, long bytes, long stream) {
        call("memcpyHtoDAsync");
        stream("memcpyHtoDAsync", stream);
        check("memcpyHtoDAsync", dst, bytes);
        Node n = node(NODE_MEMCPY);
        n.other = () -> write(dst, src.asSlice(0, bytes).toArray(ValueLayout.JAVA_BYTE));
        enqueue(stream, n);
    }

    @Override
    public synchronized void memcpyDtoHAsync(MemorySegment dst, long src, long bytes, long stream) {
        call("memcpyDtoHAsync");
        stream("memcpyDtoHAsync", stream);
        check("memcpyDtoHAsync", src, bytes);
        Node n = node(NODE_MEMCPY);
        n.other = () -> MemorySegment.copy(read(src, (int) bytes), 0, dst, ValueLayout.JAVA_BYTE, 0, (int) bytes);
        enqueue(stream, n);
    }

    @Override
    public synchronized void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        call("memcpyDtoDAsync");
        stream("memcpyDtoDAsync", stream);
        enqueue(stream, copyNode(dst, src, bytes));
    }

    @Override
    public synchronized void memcpy2DAsync(long dst, long dstPitch, long src, long srcPitch, long widthBytes, long height,
                                           long stream) {
        call("memcpy2DAsync");
        throw unscripted("memcpy2DAsync");
    }

    @Override
    public synchronized void memsetD8(long ptr, int value, long bytes) {
        call("memsetD8");
        run(memsetNode(ptr, value, bytes));
    }

    @Override
    public synchronized void memsetD8Async(long ptr, int value, long bytes, long stream) {
        call("memsetD8Async");
        stream("memsetD8Async", stream);
        enqueue(stream, memsetNode(ptr, value, bytes));
    }

    @Override
    public synchronized long streamCreate(int flags) {
        call("streamCreate");
        if (flags != 0 && flags != 1) {
            throw invalid("streamCreate", "flags=" + flags);
        }
        long s = nextHandle++;
        streams.add(s);
        return s;
    }

    @Override
    public synchronized void streamDestroy(long stream) {
        call("streamDestroy");
        if (!streams.remove(stream)) {
            throw new GpuException(CudaError.INVALID_HANDLE, "streamDestroy", "stream " + stream + " is not live");
        }
        capturing.remove(stream);
    }

    @Override
    public synchronized void streamSynchronize(long stream) {
        call("streamSynchronize");
        stream("streamSynchronize", stream);
        if (capturing.containsKey(stream)) {
            throw new GpuException(CudaError.STREAM_CAPTURE_UNSUPPORTED, "streamSynchronize", "the stream is capturing");
        }
        for (Ev e : events.values()) {
            if (e.stream == stream || (stream <= 1 && e.stream <= 1)) {
                e.done = true;
            }
        }
    }

    @Override
    public synchronized boolean streamQuery(long stream) {
        call("streamQuery");
        stream("streamQuery", stream);
        return true;
    }

    @Override
    public synchronized void ctxSynchronize() {
        call("ctxSynchronize");
        events.values().forEach(e -> e.done = true);
    }

    @Override
    public synchronized long eventCreate(int flags) {
        call("eventCreate");
        long e = nextHandle++;
        events.put(e, new Ev());
        return e;
    }

    @Override
    public synchronized void eventRecord(long event, long stream) {
        call("eventRecord");
        stream("eventRecord", stream);
        Ev e = ev(event, "eventRecord");
        e.stream = stream;
        e.done = !hold;
        recorded.add(new Recorded(event, stream));
    }

    @Override
    public synchronized void streamWaitEvent(long stream, long event, int flags) {
        call("streamWaitEvent");
        stream("streamWaitEvent", stream);
        ev(event, "streamWaitEvent");
    }

    @Override
    public synchronized void eventSynchronize(long event) {
        call("eventSynchronize");
        ev(event, "eventSynchronize").done = true;
    }

    @Override
    public synchronized boolean eventQuery(long event) {
        call("eventQuery");
        return ev(event, "eventQuery").done;
    }

    @Override
    public synchronized float eventElapsedTime(long start, long end) {
        call("eventElapsedTime");
        throw unscripted("eventElapsedTime");
    }

    @Override
    public synchronized void eventDestroy(long event) {
        call("eventDestroy");
        if (events.remove(event) == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "eventDestroy", "event " + event + " is not live");
        }
    }

    @Override
    public boolean supportsCaptureQuery() {
        return true;
    }

    @Override
    public synchronized void streamBeginCapture(long stream, int mode) {
        call("streamBeginCapture");
        stream("streamBeginCapture", stream);
        if (stream <= 1) {
            throw new GpuException(CudaError.STREAM_CAPTURE_UNSUPPORTED, "streamBeginCapture", "the legacy stream");
        }
        if (capturing.putIfAbsent(stream, new ArrayList<>()) != null) {
            throw new GpuException(CudaError.ILLEGAL_STATE, "streamBeginCapture", "already capturing");
        }
    }

    @Override
    public synchronized long streamEndCapture(long stream) {
        // Ended even when the call fails, as a capture CUDA invalidated is.
        List<Node> g = capturing.remove(stream);
        call("streamEndCapture");
        if (g == null) {
            throw new GpuException(CudaError.ILLEGAL_STATE, "streamEndCapture", "not capturing");
        }
        long h = nextHandle++;
        graphs.put(h, g);
        return h;
    }

    @Override
    public synchronized int streamIsCapturing(long stream) {
        call("streamIsCapturing");
        stream("streamIsCapturing", stream);
        return capturing.containsKey(stream) ? 1 : 0;
    }

    private List<Node> graph(Map<Long, List<Node>> in, long h, String call) {
        List<Node> g = in.get(h);
        if (g == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, call, "graph " + h + " is not live");
        }
        return g;
    }

    @Override
    public synchronized long graphInstantiate(long graph) {
        call("graphInstantiate");
        List<Node> exec = new ArrayList<>();
        for (Node n : graph(graphs, graph, "graphInstantiate")) {
            exec.add(n.copy());
        }
        long h = nextHandle++;
        execs.put(h, exec);
        return h;
    }

    @Override
    public synchronized void graphLaunch(long exec, long stream) {
        call("graphLaunch");
        stream("graphLaunch", stream);
        List<Node> g = graph(execs, exec, "graphLaunch");
        Node child = node(NODE_GRAPH);
        child.other = () -> g.forEach(this::run);
        enqueue(stream, child);
    }

    @Override
    public synchronized void graphExecDestroy(long exec) {
        call("graphExecDestroy");
        graph(execs, exec, "graphExecDestroy");
        execs.remove(exec);
    }

    @Override
    public synchronized void graphDestroy(long graph) {
        call("graphDestroy");
        graph(graphs, graph, "graphDestroy");
        graphs.remove(graph);
    }

    @Override
    public synchronized long[] graphGetNodes(long graph) {
        call("graphGetNodes");
        return graph(graphs, graph, "graphGetNodes").stream().mapToLong(n -> n.handle).toArray();
    }

    @Override
    public synchronized long[][] graphGetEdges(long graph) {
        call("graphGetEdges");
        List<Node> g = graph(graphs, graph, "graphGetEdges");
        int e = noEdges ? 0 : Math.max(0, g.size() - 1);
        long[][] out = {new long[e], new long[e]};
        for (int i = 0; i < e; i++) {
            out[0][i] = g.get(i).handle;
            out[1][i] = g.get(i + 1).handle;
        }
        return out;
    }

    @Override
    public synchronized int graphNodeType(long node) {
        call("graphNodeType");
        Node n = nodes.get(node);
        if (n == null) {
            throw invalid("graphNodeType", "node " + node);
        }
        return nodeType >= 0 ? nodeType : n.type;
    }

    private Node execNode(String call, long exec, long node, int type) {
        for (Node n : graph(execs, exec, call)) {
            if (n.handle == node) {
                if (n.type != type || n.other != null) {
                    throw invalid(call, "node " + node + " has type " + n.type);
                }
                return n;
            }
        }
        throw invalid(call, "node " + node + " is not of the exec's graph");
    }

    @Override
    public synchronized void graphExecKernelNodeSetParams(long exec, long node, long func, LaunchConfig config, KernelArgs args) {
        call("graphExecKernelNodeSetParams");
        if (dropped("graphExecKernelNodeSetParams")) {
            return;
        }
        Node n = execNode("graphExecKernelNodeSetParams", exec, node, NODE_KERNEL);
        n.func = func;
        n.config = config;
        n.args = args.words();
    }

    @Override
    public synchronized void graphExecCopyNodeSetParams(long exec, long node, long src, long dst, long bytes) {
        call("graphExecCopyNodeSetParams");
        if (dropped("graphExecCopyNodeSetParams")) {
            return;
        }
        Node n = execNode("graphExecCopyNodeSetParams", exec, node, NODE_MEMCPY);
        n.src = src;
        n.dst = dst;
        n.bytes = bytes;
    }

    @Override
    public synchronized void graphExecMemsetNodeSetParams(long exec, long node, long ptr, int value, long bytes) {
        call("graphExecMemsetNodeSetParams");
        if (dropped("graphExecMemsetNodeSetParams")) {
            return;
        }
        Node n = execNode("graphExecMemsetNodeSetParams", exec, node, NODE_MEMSET);
        n.dst = ptr;
        n.value = value & 0xff;
        n.bytes = bytes;
    }

    @Override
    public synchronized int graphExecUpdate(long exec, long graph) {
        call("graphExecUpdate");
        List<Node> x = graph(execs, exec, "graphExecUpdate");
        List<Node> g = graph(graphs, graph, "graphExecUpdate");
        if (x.size() != g.size()) {
            return UPDATE_TOPOLOGY_CHANGED;
        }
        for (int i = 0; i < x.size(); i++) {
            if (x.get(i).type != g.get(i).type) {
                return UPDATE_NODE_TYPE_CHANGED;
            }
        }
        for (int i = 0; i < x.size(); i++) {
            x.get(i).take(g.get(i));
        }
        return UPDATE_SUCCESS;
    }

    @Override
    public synchronized long moduleLoadData(String name, byte[] image) {
        call("moduleLoadData");
        long m = nextHandle++;
        modules.put(m, name);
        return m;
    }

    @Override
    public synchronized void moduleUnload(long module) {
        call("moduleUnload");
        String name = modules.remove(module);
        if (name == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "moduleUnload", "module " + module + " is not loaded");
        }
        functions.values().removeIf(f -> f.startsWith(name + "::"));
    }

    @Override
    public synchronized long moduleGetFunction(long module, String func) {
        call("moduleGetFunction");
        String name = modules.get(module);
        if (name == null) {
            throw new GpuException(CudaError.INVALID_HANDLE, "moduleGetFunction", "module " + module + " is not loaded");
        }
        if (!kernels.containsKey(name + "::" + func)) {
            throw new GpuException(CudaError.NOT_FOUND, "moduleGetFunction", name + "::" + func);
        }
        long f = nextHandle++;
        functions.put(f, name + "::" + func);
        return f;
    }

    @Override
    public synchronized void funcSetMaxDynamicSharedMemory(long func, int bytes) {
        call("funcSetMaxDynamicSharedMemory");
        throw unscripted("funcSetMaxDynamicSharedMemory");
    }

    @Override
    public synchronized void launchKernel(long func, LaunchConfig config, long stream, KernelArgs args) {
        call("launchKernel");
        stream("launchKernel", stream);
        if (!functions.containsKey(func)) {
            throw new GpuException(CudaError.INVALID_HANDLE, "launchKernel", "function " + func + " is not loaded");
        }
        Node n = node(NODE_KERNEL);
        n.func = func;
        n.config = config;
        n.args = args.words();
        enqueue(stream, n);
    }

    @Override
    public synchronized byte[] compileToPtx(String name, String source, String... options) {
        call("compileToPtx");
        throw unscripted("compileToPtx");
    }

    @Override
    public synchronized CudaError probe() {
        calls.add("probe");
        counts.merge("probe", 1, Integer::sum);
        return sticky == null ? CudaError.SUCCESS : sticky;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            calls.add("close");
            counts.merge("close", 1, Integer::sum);
            host.values().forEach(Arena::close);
            host.clear();
            hostBytes.clear();
        }
    }

    /** {@return whether the runtime closed this driver} */
    public synchronized boolean isClosed() {
        return closed;
    }
}
