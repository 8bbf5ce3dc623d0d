// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

import java.util.List;

/**
 * The simulator's initcheck, reached with {@code gpu.unwrap(SimInitCheck.class)}: with the backend
 * option {@code sim.initcheck=true} every device allocation keeps a shadow map of the bytes written
 * (by host-to-device and device-to-device copies, memsets and kernel view writes), and every read
 * (a kernel view read, a device-to-host or device-to-device copy) of a byte never written is
 * recorded as an {@link UninitializedRead}. Reads are recorded, not faulted: the work goes on as
 * it would on a GPU.
 */
public interface SimInitCheck {

    /** Backend option: {@code true} turns the initcheck on; default {@code false}. */
    String OPT_INITCHECK = "sim.initcheck";

    /** {@return whether this device checks reads of unwritten memory} */
    boolean initCheckEnabled();

    /** {@return the unwritten reads found so far, in the order first seen; empty when the check is off} */
    List<UninitializedRead> uninitializedReads();
}
