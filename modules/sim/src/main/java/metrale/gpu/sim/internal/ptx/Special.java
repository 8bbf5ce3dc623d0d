// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.Map;

/**
 * The special registers a thread reads with {@code mov}: each has a fixed slot at the start of the
 * register file, written once when the thread starts. {@code %clock}, {@code %clock64} and
 * {@code %globaltimer} change as the thread runs and are read by {@link Insn#TIMER} instead.
 */
final class Special {

    static final int TID_X = 0, TID_Y = 1, TID_Z = 2, NTID_X = 3, NTID_Y = 4, NTID_Z = 5, CTAID_X = 6,
            CTAID_Y = 7, CTAID_Z = 8, NCTAID_X = 9, NCTAID_Y = 10, NCTAID_Z = 11, LANEID = 12, WARPID = 13,
            NWARPID = 14, SMID = 15, NSMID = 16, GRIDID = 17, LANEMASK_EQ = 18, LANEMASK_LE = 19, LANEMASK_LT = 20,
            LANEMASK_GE = 21, LANEMASK_GT = 22, DYN_SMEM = 23, TOTAL_SMEM = 24;
    /** Slots taken by special registers; the function's own registers follow. */
    static final int COUNT = 25;

    static final Map<String, Integer> SLOTS = Map.ofEntries(
            Map.entry("%tid.x", TID_X), Map.entry("%tid.y", TID_Y), Map.entry("%tid.z", TID_Z),
            Map.entry("%ntid.x", NTID_X), Map.entry("%ntid.y", NTID_Y), Map.entry("%ntid.z", NTID_Z),
            Map.entry("%ctaid.x", CTAID_X), Map.entry("%ctaid.y", CTAID_Y), Map.entry("%ctaid.z", CTAID_Z),
            Map.entry("%nctaid.x", NCTAID_X), Map.entry("%nctaid.y", NCTAID_Y), Map.entry("%nctaid.z", NCTAID_Z),
            Map.entry("%laneid", LANEID), Map.entry("%warpid", WARPID), Map.entry("%nwarpid", NWARPID),
            Map.entry("%smid", SMID), Map.entry("%nsmid", NSMID), Map.entry("%gridid", GRIDID),
            Map.entry("%lanemask_eq", LANEMASK_EQ), Map.entry("%lanemask_le", LANEMASK_LE),
            Map.entry("%lanemask_lt", LANEMASK_LT), Map.entry("%lanemask_ge", LANEMASK_GE),
            Map.entry("%lanemask_gt", LANEMASK_GT), Map.entry("%dynamic_smem_size", DYN_SMEM),
            Map.entry("%total_smem_size", TOTAL_SMEM));

    static final Map<String, Integer> TIMERS = Map.of("%clock", Insn.CLOCK, "%clock64", Insn.CLOCK64,
            "%globaltimer", Insn.GLOBALTIMER);

    private Special() {
    }
}
