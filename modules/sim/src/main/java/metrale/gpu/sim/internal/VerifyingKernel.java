// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import metrale.gpu.CudaError;
import metrale.gpu.sim.SimKernel;
import metrale.gpu.sim.SimLaunch;

/**
 * {@code sim.twins=verify}: a kernel that has both a Java twin and PTX the engine runs. Each launch
 * runs the twin, keeps what it wrote, puts the memory back as it was and runs the PTX; then the two
 * results are compared byte by byte. A difference is the launch's fault ({@code LAUNCH_FAILED}),
 * naming the kernel, the argument whose allocation differs, the first differing byte and both
 * values: a twin that drifted from its kernel is a bug found. The PTX's result is what stays.
 *
 * <p>The memory compared is every live allocation an argument word points into (the allocations a
 * kernel reaches through its pointer arguments); memory reached only through pointers stored in
 * memory is not compared.
 */
final class VerifyingKernel implements SimKernel {

    private final SimKernel twin;
    private final PtxKernel ptx;

    VerifyingKernel(SimKernel twin, PtxKernel ptx) {
        this.twin = twin;
        this.ptx = ptx;
    }

    private record Reached(int arg, Alloc alloc, byte[] before) {
    }

    @Override
    public void launch(SimLaunch launch) {
        LaunchImpl l = (LaunchImpl) launch;
        Works.Kernel k = l.work();
        DeviceMemory memory = l.engine().memory;
        List<Reached> reached = new ArrayList<>();
        Map<Alloc, Boolean> seen = new IdentityHashMap<>();
        long[] words = k.words();
        for (int i = 0; i < words.length; i++) {
            if (k.sizes()[i] != 8 || words[i] == 0) {
                continue;
            }
            Alloc a = memory.find(words[i]);
            if (a != null && seen.put(a, Boolean.TRUE) == null) {
                reached.add(new Reached(i, a, a.segment.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
            }
        }
        twin.launch(launch);
        List<byte[]> byTwin = new ArrayList<>(reached.size());
        for (Reached r : reached) {
            byTwin.add(r.alloc.segment.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            MemorySegment.copy(MemorySegment.ofArray(r.before), 0, r.alloc.segment, 0, r.before.length);
        }
        ptx.launch(launch);
        for (int j = 0; j < reached.size(); j++) {
            Reached r = reached.get(j);
            byte[] t = byTwin.get(j);
            byte[] p = r.alloc.segment.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            int at = java.util.Arrays.mismatch(t, p);
            if (at >= 0) {
                throw new SimFault(CudaError.LAUNCH_FAILED, "sim.twins=verify: the twin of " + ptx.name
                        + " and its PTX disagree: in the allocation argument " + r.arg + " points into ("
                        + r.alloc + "), byte " + at + " is 0x" + hex(t[at]) + " after the twin and 0x" + hex(p[at])
                        + " after the PTX (it was 0x" + hex(r.before[at]) + " before the launch); the twin has"
                        + " drifted from its kernel, or the kernel from its twin");
            }
        }
    }

    private static String hex(byte b) {
        return String.format("%02x", b & 0xff);
    }

    @Override
    public String toString() {
        return "twin and PTX of " + ptx.name + ", verified";
    }
}
