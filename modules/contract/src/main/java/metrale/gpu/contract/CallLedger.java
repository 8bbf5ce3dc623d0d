// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * What a {@link CountingDriver} records and injects: the calls by method and in order, the handles
 * held, the releases refused, and the failures, holds and drops a test asked for. Thread-safe.
 */
final class CallLedger {

    private final AtomicLong calls = new AtomicLong();
    private final Map<String, LongAdder> byCall = new ConcurrentHashMap<>();
    private final Map<String, String> held = new LinkedHashMap<>();
    private final List<String> failedReleases = new ArrayList<>();
    private final List<Long> allocSizes = new ArrayList<>();
    private final List<String> inOrder = new ArrayList<>();
    private final Map<String, CudaError> failNext = new HashMap<>();
    private final Map<String, HeldCall> holdNext = new HashMap<>();
    private final Set<String> dropNext = new HashSet<>();
    private List<String> leftAtClose;

    long calls() {
        return calls.get();
    }

    long calls(String method) {
        LongAdder n = byCall.get(method);
        return n == null ? 0 : n.sum();
    }

    Map<String, Long> callsByMethod() {
        Map<String, Long> out = new TreeMap<>();
        byCall.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    synchronized List<String> callsInOrder() {
        return List.copyOf(inOrder);
    }

    synchronized List<String> leftAtClose() {
        return leftAtClose == null ? List.of() : leftAtClose;
    }

    synchronized boolean closed() {
        return leftAtClose != null;
    }

    synchronized List<String> failedReleases() {
        return List.copyOf(failedReleases);
    }

    synchronized List<Long> allocSizes() {
        return List.copyOf(allocSizes);
    }

    synchronized void allocated(long bytes) {
        allocSizes.add(bytes);
    }

    synchronized void failNext(String method, CudaError error) {
        failNext.put(method, error);
    }

    synchronized HeldCall holdNext(String method) {
        HeldCall h = new HeldCall(method, calls);
        holdNext.put(method, h);
        return h;
    }

    synchronized void dropNext(String method) {
        dropNext.add(method);
    }

    synchronized boolean dropped(String method) {
        return dropNext.remove(method);
    }

    /** Keeps what is still held as {@link #leftAtClose()}, the first time the driver is closed. */
    synchronized void closing() {
        if (leftAtClose == null) {
            List<String> left = new ArrayList<>();
            held.forEach((handle, what) -> left.add(handle + " (" + what + ")"));
            leftAtClose = List.copyOf(left);
        }
    }

    /** Counts a call of {@code method}, holding it or failing it where the test asked. */
    void count(String method) {
        CudaError injected;
        HeldCall hold;
        synchronized (this) {
            inOrder.add(method);
            injected = failNext.remove(method);
            hold = holdNext.remove(method);
        }
        calls.incrementAndGet();
        byCall.computeIfAbsent(method, k -> new LongAdder()).increment();
        if (hold != null) {
            hold.hold();
        }
        if (injected != null) {
            throw new GpuException(injected, method, "injected by CountingDriver.failNext");
        }
    }

    /** Keeps a handle the runtime obtained until it asks to release it. */
    synchronized void hold(String kind, long handle, String what) {
        held.put(kind + " 0x" + Long.toHexString(handle), what);
    }

    /**
     * Runs a release: the handle counts as released once asked for, even if the driver refuses
     * after a fault. A refusal that is an argument error (a free during a capture, 900) leaves the
     * handle live, as the driver does, so it is held again and not counted as a failed release.
     */
    void release(String method, String kind, long handle, Runnable call) {
        CudaError injected;
        synchronized (this) {
            // An injected failure of a release is reported after the backend released the handle.
            injected = failNext.remove(method);
        }
        count(method);
        String key = kind + " 0x" + Long.toHexString(handle);
        String what;
        synchronized (this) {
            what = held.remove(key);
        }
        try {
            call.run();
        } catch (GpuException e) {
            synchronized (this) {
                if (!e.error().isSticky() && !e.error().isTeardown() && what != null) {
                    held.put(key, what);
                } else {
                    failedReleases.add(method + " " + key + ": " + e.error());
                }
            }
            throw e;
        }
        if (injected != null) {
            throw new GpuException(injected, method, "injected by CountingDriver.failNext");
        }
    }
}
