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
 * JFR event for one host wait on the device; its duration is the wait when
 * the emitter calls {@link #begin()} first. With a stack trace, which names the
 * code that waited. Fill the public fields and commit as for {@link GpuLaunchEvent}.
 */
@Name("metrale.Sync")
@Category({"metrale", "GPU"})
@Label("GPU Sync")
@Description("The host waited for a stream, an event or the whole context")
@StackTrace(true)
public final class GpuSyncEvent extends Event {

    /** Creates an event with every field zero or null. */
    public GpuSyncEvent() {
    }

    /** The stream or event handle waited on, 0 for the default stream or the context. */
    @Label("Handle")
    @MemoryAddress
    public long stream;

    /** What was synchronized: {@code "stream"}, {@code "event"} or {@code "context"}. */
    @Label("What")
    public String what;
}
