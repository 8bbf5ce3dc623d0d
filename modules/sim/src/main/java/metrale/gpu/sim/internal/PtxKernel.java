// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import metrale.gpu.Dim3;
import metrale.gpu.sim.SimKernel;
import metrale.gpu.sim.SimLaunch;
import metrale.gpu.sim.internal.ptx.PtxFault;
import metrale.gpu.sim.internal.ptx.PtxFunction;
import metrale.gpu.sim.internal.ptx.PtxLaunch;
import metrale.gpu.sim.internal.ptx.PtxModule;

/**
 * A kernel run from its own PTX by the simulator's engine ({@code metrale.gpu.sim.internal.ptx}),
 * in place of a Java twin. Its blocks run in the launch's block order (ordered, shuffled or
 * parallel), each against the device's memory through {@link SimGlobal}; a fault the engine raises
 * becomes the launch's sticky error, with the thread, line and address in its message.
 */
final class PtxKernel implements SimKernel {

    final PtxModule module;
    final PtxFunction fn;
    final String name;
    /** Whether the kernel runs compiled to JVM bytecode ({@code sim.ptx=compiled}) or interpreted. */
    final boolean compiled;

    PtxKernel(PtxModule module, PtxFunction fn, String name, boolean compiled) {
        this.module = module;
        this.fn = fn;
        this.name = name;
        this.compiled = compiled;
    }

    @Override
    public void launch(SimLaunch launch) {
        LaunchImpl l = (LaunchImpl) launch;
        Works.Kernel k = l.work();
        Engine e = l.engine();
        Dim3 g = k.grid();
        Dim3 b = k.block();
        PtxLaunch run = new PtxLaunch(module, fn, name, paramArea(k), new int[] {g.x(), g.y(), g.z()},
                new int[] {b.x(), b.y(), b.z()}, k.sharedMemBytes(), new SimGlobal(e, name), e.now,
                metrale.gpu.sim.SimOptions.DEFAULT_SMS, compiled);
        try {
            l.forEachBlockIndex(() -> run.runner()::run);
        } catch (PtxFault f) {
            throw new SimFault(f.error(), f.getMessage());
        }
        if (run.timerNanos() > 0) {
            l.runsFor(run.timerNanos());
        }
    }

    /** {@return the kernel's arguments laid out at the offsets its PTX parameter list gives} */
    private byte[] paramArea(Works.Kernel k) {
        int[] offsets = fn.paramOffsets();
        int[] sizes = fn.paramSizes();
        byte[] area = new byte[fn.paramBytes()];
        int n = Math.min(offsets.length, k.sizes().length);
        for (int i = 0; i < n; i++) {
            int size = Math.min(sizes[i], k.sizes()[i]);
            byte[] wide = k.bytes()[i];
            if (wide != null) {
                System.arraycopy(wide, 0, area, offsets[i], Math.min(size, wide.length));
            } else {
                long w = k.words()[i];
                for (int j = 0; j < size && j < 8; j++) {
                    area[offsets[i] + j] = (byte) (w >>> (8 * j));
                }
            }
        }
        return area;
    }

    @Override
    public String toString() {
        return "the PTX of " + name;
    }
}
