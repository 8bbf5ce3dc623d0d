// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import metrale.gpu.LaunchConfig;
import metrale.telemetry.GpuAllocEvent;
import metrale.telemetry.GpuCopyEvent;
import metrale.telemetry.GpuFreeEvent;
import metrale.telemetry.GpuGraphLaunchEvent;
import metrale.telemetry.GpuLaunchEvent;
import metrale.telemetry.GpuSyncEvent;
import metrale.telemetry.LaunchTrace;

/**
 * Emits the runtime's JFR events. A call site brackets its driver call:
 * {@snippet :
 * GpuCopyEvent jfr = Jfr.beginCopy();   // null unless a recording enables the event
 * driver.memcpyHtoD(d, src, n);
 * Jfr.copy(jfr, "H2D", n, false, 0);   // commits with the call's duration
 * }
 * Each {@code begin} method asks a throwaway event whether the type is enabled; that probe never
 * escapes, so escape analysis removes it, and with no recording the method returns {@code null}
 * without allocating: the launch path stays allocation-free with JFR off. An event that is begun
 * but not committed (the driver call threw) is simply dropped.
 */
final class Jfr {

    private Jfr() {
    }

    static GpuLaunchEvent beginLaunch() {
        if (!new GpuLaunchEvent().isEnabled()) {
            return null;
        }
        GpuLaunchEvent e = new GpuLaunchEvent();
        e.begin();
        return e;
    }

    static void launch(GpuLaunchEvent e, LaunchTrace names, long func, LaunchConfig c, long stream) {
        if (e != null && e.shouldCommit()) {
            e.kernel = names.nameOf(func);
            e.function = func;
            e.gridX = c.grid().x();
            e.gridY = c.grid().y();
            e.gridZ = c.grid().z();
            e.blockX = c.block().x();
            e.blockY = c.block().y();
            e.blockZ = c.block().z();
            e.sharedMemBytes = c.sharedMemBytes();
            e.stream = stream;
            e.commit();
        }
    }

    static GpuGraphLaunchEvent beginGraphLaunch() {
        if (!new GpuGraphLaunchEvent().isEnabled()) {
            return null;
        }
        GpuGraphLaunchEvent e = new GpuGraphLaunchEvent();
        e.begin();
        return e;
    }

    static void graphLaunch(GpuGraphLaunchEvent e, long graph, long stream) {
        if (e != null && e.shouldCommit()) {
            e.graph = graph;
            e.stream = stream;
            e.commit();
        }
    }

    static GpuAllocEvent beginAlloc() {
        if (!new GpuAllocEvent().isEnabled()) {
            return null;
        }
        GpuAllocEvent e = new GpuAllocEvent();
        e.begin();
        return e;
    }

    static void alloc(GpuAllocEvent e, long address, long bytes, String site, boolean managed) {
        if (e != null && e.shouldCommit()) {
            e.address = address;
            e.bytes = bytes;
            e.site = site;
            e.managed = managed;
            e.commit();
        }
    }

    static GpuFreeEvent beginFree() {
        if (!new GpuFreeEvent().isEnabled()) {
            return null;
        }
        GpuFreeEvent e = new GpuFreeEvent();
        e.begin();
        return e;
    }

    static void free(GpuFreeEvent e, long address, long bytes) {
        if (e != null && e.shouldCommit()) {
            e.address = address;
            e.bytes = bytes;
            e.commit();
        }
    }

    static GpuCopyEvent beginCopy() {
        if (!new GpuCopyEvent().isEnabled()) {
            return null;
        }
        GpuCopyEvent e = new GpuCopyEvent();
        e.begin();
        return e;
    }

    static void copy(GpuCopyEvent e, String direction, long bytes, boolean async, long stream) {
        if (e != null && e.shouldCommit()) {
            e.direction = direction;
            e.bytes = bytes;
            e.async = async;
            e.stream = stream;
            e.commit();
        }
    }

    static GpuSyncEvent beginSync() {
        if (!new GpuSyncEvent().isEnabled()) {
            return null;
        }
        GpuSyncEvent e = new GpuSyncEvent();
        e.begin();
        return e;
    }

    static void sync(GpuSyncEvent e, String what, long handle) {
        if (e != null && e.shouldCommit()) {
            e.what = what;
            e.stream = handle;
            e.commit();
        }
    }
}
