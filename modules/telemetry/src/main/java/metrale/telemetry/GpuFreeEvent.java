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
 * JFR event for one device free, with a stack trace. Fill the public fields
 * and commit as for {@link GpuLaunchEvent}.
 */
@Name("metrale.Free")
@Category({"metrale", "GPU"})
@Label("GPU Free")
@Description("Device memory freed")
public final class GpuFreeEvent extends Event {

    /** Creates an event with every field zero. */
    public GpuFreeEvent() {
    }

    /** The device address freed. */
    @Label("Address")
    @MemoryAddress
    public long address;

    /** The bytes the allocation had. */
    @Label("Size")
    @DataAmount(DataAmount.BYTES)
    public long bytes;
}
