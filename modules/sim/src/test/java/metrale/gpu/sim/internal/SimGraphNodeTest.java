// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.sim.SimKernels;
import metrale.gpu.sim.SimLaunch;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The simulator's graph nodes and {@code cuGraphExecKernelNodeSetParams}, with CUDA's rules: the
 * node must be a kernel node of the graph the exec was made from, the function one of this
 * context; an update applies to launches made after it, not to one already enqueued.
 */
class SimGraphNodeTest {

    private static final String MODULE = "graphnodes";

    private SimDevice d;
    private KernelArgs args;
    private long add;
    private long s;
    private long p;

    private static void addKernel(SimLaunch l) {
        var view = l.ints(0);
        int v = l.i32(1);
        int n = l.i32(2);
        l.forEachThread(t -> {
            int i = t.globalX();
            if (i < n) {
                view.set(i, view.get(i) + v);
            }
        });
    }

    @BeforeEach
    void open() {
        SimKernels.register(MODULE, "add", SimGraphNodeTest::addKernel);
        d = new SimDevice(DriverConfig.empty());
        args = new KernelArgs();
        long m = d.moduleLoadData(MODULE, SimKernels.image(MODULE));
        add = d.moduleGetFunction(m, "add");
        // Blocking, so it runs after the legacy stream's memset below.
        s = d.streamCreate(0);
        p = d.memAlloc(64);
        d.memsetD8(p, 0, 64);
    }

    @AfterEach
    void close() {
        args.close();
        d.close();
        SimKernels.unregister(MODULE, "add");
    }

    private long capture() {
        d.streamBeginCapture(s, 0);
        d.memsetD8Async(p, 0, 4, s);
        d.launchKernel(add, LaunchConfig.of(1, 16), s, args.clear().ptr(p).i32(1).i32(16));
        return d.streamEndCapture(s);
    }

    private int first() {
        d.streamSynchronize(s);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(64);
            d.memcpyDtoH(out, p, 64);
            return out.get(ValueLayout.JAVA_INT, 4);
        }
    }

    private static GpuException fails(CudaError error, Runnable call) {
        try {
            call.run();
        } catch (GpuException e) {
            assertThat(e.error()).isEqualTo(error);
            return e;
        }
        throw new AssertionError("expected " + error);
    }

    @Test
    void nodesComeInCaptureOrderWithTheirTypes() {
        long g = capture();
        long[] nodes = d.graphGetNodes(g);
        assertThat(nodes).hasSize(2);
        assertThat(d.graphNodeType(nodes[0])).isEqualTo(Driver.NODE_MEMSET);
        assertThat(d.graphNodeType(nodes[1])).isEqualTo(Driver.NODE_KERNEL);
        d.graphDestroy(g);
        fails(CudaError.INVALID_VALUE, () -> d.graphGetNodes(g));
        fails(CudaError.INVALID_VALUE, () -> d.graphNodeType(nodes[0]));
    }

    @Test
    void anUpdateAppliesToLaunchesAfterItNotToOneAlreadyEnqueued() {
        long g = capture();
        long x = d.graphInstantiate(g);
        long kernelNode = d.graphGetNodes(g)[1];
        d.graphLaunch(x, s);
        d.graphExecKernelNodeSetParams(x, kernelNode, add, LaunchConfig.of(1, 16), args.clear().ptr(p).i32(10).i32(16));
        args.clear().ptr(p).i32(-1).i32(16);
        assertThat(first()).as("the launch before the update ran the captured value").isEqualTo(1);
        d.graphLaunch(x, s);
        assertThat(first()).as("the update's arguments were copied at the call").isEqualTo(11);
        d.graphExecDestroy(x);
        d.graphDestroy(g);
    }

    @Test
    void onlyAKernelNodeOfTheExecsOwnGraphWithALiveFunctionIsUpdated() {
        long g = capture();
        long other = capture();
        long x = d.graphInstantiate(g);
        long[] nodes = d.graphGetNodes(g);
        LaunchConfig c = LaunchConfig.of(1, 16);
        args.clear().ptr(p).i32(2).i32(16);
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecKernelNodeSetParams(x, nodes[0], add, c, args)))
                .hasMessageContaining("not a kernel node");
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecKernelNodeSetParams(x, d.graphGetNodes(other)[1], add, c, args)))
                .hasMessageContaining("not to graph");
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecKernelNodeSetParams(x, nodes[1], 12345, c, args)))
                .hasMessageContaining("not a live function of this context");
        fails(CudaError.INVALID_VALUE, () -> d.graphExecKernelNodeSetParams(x, nodes[1], add, LaunchConfig.of(1, 2048), args));
        fails(CudaError.INVALID_VALUE, () -> d.graphExecKernelNodeSetParams(x + 1, nodes[1], add, c, args));
        d.graphLaunch(x, s);
        assertThat(first()).as("failed updates changed nothing").isEqualTo(1);
        d.graphExecDestroy(x);
        d.graphDestroy(g);
        d.graphDestroy(other);
    }

    @Test
    void aMemsetNodeTakesANewDestinationAndValueOfTheSameKindAndSize() {
        long g = capture();
        long x = d.graphInstantiate(g);
        long[] nodes = d.graphGetNodes(g);
        long q = d.memAlloc(64);
        d.memsetD8(q, 0, 64);
        d.graphExecMemsetNodeSetParams(x, nodes[0], q, 7, 4);
        d.graphLaunch(x, s);
        d.streamSynchronize(s);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(4);
            d.memcpyDtoH(out, q, 4);
            assertThat(out.toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 7);
        }
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecMemsetNodeSetParams(x, nodes[1], q, 7, 4)))
                .hasMessageContaining("not a memset node");
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecMemsetNodeSetParams(x, nodes[0], q, 7, 0)))
                .hasMessageContaining("zero-sized");
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecMemsetNodeSetParams(x, nodes[0], q, 7, 8)))
                .hasMessageContaining("the width changed (4 -> 8 bytes)");
        d.memFree(q);
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecMemsetNodeSetParams(x, nodes[0], q, 7, 4)))
                .hasMessageContaining("the destination");
        MemorySegment host = d.memHostAlloc(64, 0);
        long hostPtr = d.memHostGetDevicePointer(host);
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecMemsetNodeSetParams(x, nodes[0], hostPtr, 7, 4)))
                .hasMessageContaining("must be the same kind of allocation");
        d.memFreeHost(host);
        d.graphExecDestroy(x);
        d.graphDestroy(g);
    }

    private long captureOf(Runnable work) {
        d.streamBeginCapture(s, 0);
        work.run();
        return d.streamEndCapture(s);
    }

    @Test
    void execUpdateKeepsCudasResultCodes() {
        long g = capture();
        long x = d.graphInstantiate(g);
        long fewer = captureOf(() -> d.memsetD8Async(p, 0, 4, s));
        assertThat(d.graphExecUpdate(x, fewer)).as("node count").isEqualTo(Driver.UPDATE_TOPOLOGY_CHANGED);
        long swapped = captureOf(() -> {
            d.launchKernel(add, LaunchConfig.of(1, 16), s, args.clear().ptr(p).i32(1).i32(16));
            d.memsetD8Async(p, 0, 4, s);
        });
        assertThat(d.graphExecUpdate(x, swapped)).as("a kernel where the memset was").isEqualTo(Driver.UPDATE_NODE_TYPE_CHANGED);
        MemorySegment host = d.memHostAlloc(64, 0);
        long hostPtr = d.memHostGetDevicePointer(host);
        long toHost = captureOf(() -> {
            d.memsetD8Async(hostPtr, 0, 4, s);
            d.launchKernel(add, LaunchConfig.of(1, 16), s, args.clear().ptr(p).i32(1).i32(16));
        });
        assertThat(d.graphExecUpdate(x, toHost)).as("memset into another kind of memory").isEqualTo(Driver.UPDATE_PARAMETERS_CHANGED);
        d.graphLaunch(x, s);
        assertThat(first()).as("refused updates changed nothing").isEqualTo(1);
        long newer = captureOf(() -> {
            d.memsetD8Async(p, 0, 4, s);
            d.launchKernel(add, LaunchConfig.of(1, 16), s, args.clear().ptr(p).i32(100).i32(16));
        });
        d.graphLaunch(x, s);
        assertThat(d.graphExecUpdate(x, newer)).isEqualTo(Driver.UPDATE_SUCCESS);
        d.graphDestroy(newer);
        d.graphLaunch(x, s);
        assertThat(first()).as("the launch before the update ran the old values, the one after the new").isEqualTo(1 + 1 + 100);
        d.graphExecKernelNodeSetParams(x, d.graphGetNodes(g)[1], add, LaunchConfig.of(1, 16), args.clear().ptr(p).i32(1000).i32(16));
        d.graphLaunch(x, s);
        assertThat(first()).as("the exec's nodes are still its own graph's").isEqualTo(1102);
        fails(CudaError.INVALID_VALUE, () -> d.graphExecUpdate(x, 12345));
        d.memFreeHost(host);
        d.graphExecDestroy(x);
        for (long h : new long[] {g, fewer, swapped, toHost}) {
            d.graphDestroy(h);
        }
    }

    @Test
    void aCopyNodeTakesNewLiveRangesOfADeviceToDeviceCopy() {
        long q = d.memAlloc(64);
        d.memsetD8(q, 9, 64);
        long g = captureOf(() -> d.memcpyDtoDAsync(p, q, 4, s));
        long x = d.graphInstantiate(g);
        long node = d.graphGetNodes(g)[0];
        assertThat(d.graphNodeType(node)).isEqualTo(Driver.NODE_MEMCPY);
        d.graphExecCopyNodeSetParams(x, node, q, p, 64);
        d.graphLaunch(x, s);
        assertThat(first()).as("the update's size: all 64 bytes copied").isEqualTo(0x09090909);
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecCopyNodeSetParams(x, node, q, p, 0)))
                .hasMessageContaining("zero-sized");
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecCopyNodeSetParams(x, node, q, p, 128)))
                .hasMessageContaining("source");
        long k = capture();
        long kx = d.graphInstantiate(k);
        assertThat(fails(CudaError.INVALID_VALUE, () -> d.graphExecCopyNodeSetParams(kx, d.graphGetNodes(k)[1], q, p, 4)))
                .hasMessageContaining("not a device-to-device memcpy node");
        d.graphExecDestroy(kx);
        d.graphDestroy(k);
        d.graphExecDestroy(x);
        d.graphDestroy(g);
        d.memFree(q);
    }
}
