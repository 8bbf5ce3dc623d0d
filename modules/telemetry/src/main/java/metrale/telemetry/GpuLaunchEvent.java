// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event for one kernel launch, with a stack trace; its duration is the
 * host-side enqueue when the emitter calls {@link #begin()} before launching.
 * Recorded only while a recording with this event enabled runs (a recording
 * that wants fewer stack walks disables the event's stack trace setting).
 * Emit it as
 * {@snippet :
 * GpuLaunchEvent e = new GpuLaunchEvent();
 * e.begin();
 * // launch
 * if (e.shouldCommit()) {
 *     e.kernel = name;
 *     e.function = func;
 *     // ... the other fields
 *     e.commit();
 * }
 * }
 */
@Name("metrale.Launch")
@Category({"metrale", "GPU"})
@Label("GPU Kernel Launch")
@Description("A kernel launched on a GPU stream")
@StackTrace(true)
public final class GpuLaunchEvent extends Event {

    /** Creates an event with every field zero or null. */
    public GpuLaunchEvent() {
    }

    /** The kernel's {@code module::func} name, or {@code fn@0x...} if unnamed. */
    @Label("Kernel")
    public String kernel;

    /** The kernel's function handle. */
    @Label("Function")
    @MemoryAddress
    public long function;

    /** Grid size in blocks, x. */
    @Label("Grid X")
    public int gridX;

    /** Grid size in blocks, y. */
    @Label("Grid Y")
    public int gridY;

    /** Grid size in blocks, z. */
    @Label("Grid Z")
    public int gridZ;

    /** Block size in threads, x. */
    @Label("Block X")
    public int blockX;

    /** Block size in threads, y. */
    @Label("Block Y")
    public int blockY;

    /** Block size in threads, z. */
    @Label("Block Z")
    public int blockZ;

    /** Dynamic shared memory in bytes. */
    @Label("Shared Memory")
    @DataAmount(DataAmount.BYTES)
    public int sharedMemBytes;

    /** The stream handle the kernel was launched on, 0 for the default stream. */
    @Label("Stream")
    @MemoryAddress
    public long stream;
}
