// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event for one CUDA graph launch, with a stack trace; its duration is the
 * host-side enqueue when the emitter calls {@link #begin()} first. Fill the
 * public fields and commit as for {@link GpuLaunchEvent}.
 */
@Name("metrale.GraphLaunch")
@Category({"metrale", "GPU"})
@Label("GPU Graph Launch")
@Description("An instantiated CUDA graph launched on a GPU stream")
@StackTrace(true)
public final class GpuGraphLaunchEvent extends Event {

    /** Creates an event with every field zero or null. */
    public GpuGraphLaunchEvent() {
    }

    /** The graph's handle as the runtime issued it. */
    @Label("Graph")
    @MemoryAddress
    public long graph;

    /** The stream handle the graph was launched on, 0 for the default stream. */
    @Label("Stream")
    @MemoryAddress
    public long stream;
}
