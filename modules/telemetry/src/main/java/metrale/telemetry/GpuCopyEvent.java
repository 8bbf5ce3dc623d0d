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
 * JFR event for one memory copy; its duration is the call's when the emitter
 * calls {@link #begin()} first, so a blocking D2H copy shows its wait. With a
 * stack trace. Fill the public fields and commit as for {@link GpuLaunchEvent}.
 */
@Name("metrale.Copy")
@Category({"metrale", "GPU"})
@Label("GPU Copy")
@Description("Bytes copied between host and device or within the device")
@StackTrace(true)
public final class GpuCopyEvent extends Event {

    /** Creates an event with every field zero or null. */
    public GpuCopyEvent() {
    }

    /** {@code "H2D"}, {@code "D2H"} or {@code "D2D"}. */
    @Label("Direction")
    public String direction;

    /** The bytes copied. */
    @Label("Size")
    @DataAmount(DataAmount.BYTES)
    public long bytes;

    /** Whether the copy was enqueued without waiting. */
    @Label("Async")
    public boolean async;

    /** The stream handle, 0 for the default stream. */
    @Label("Stream")
    @MemoryAddress
    public long stream;
}
