// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Name;

/**
 * JFR event for one device allocation, with a stack trace. Fill the public
 * fields and commit as for {@link GpuLaunchEvent}.
 */
@Name("metrale.Alloc")
@Category({"metrale", "GPU"})
@Label("GPU Allocation")
@Description("Device memory allocated")
public final class GpuAllocEvent extends Event {

    /** Creates an event with every field zero or null. */
    public GpuAllocEvent() {
    }

    /** The device address returned. */
    @Label("Address")
    @MemoryAddress
    public long address;

    /** The bytes requested. */
    @Label("Size")
    @DataAmount(DataAmount.BYTES)
    public long bytes;

    /** The caller's {@code File.java:line}. */
    @Label("Call Site")
    public String site;

    /** Whether the memory is managed (unified). */
    @Label("Managed")
    public boolean managed;
}
