// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

/**
 * A kernel's arguments as {@link LaunchTrace#recordKernel} reads them: a count, one 64-bit word
 * per argument and one kind code per argument, so the launch path can hand its own argument
 * buffer to the trace without copying it into an array first.
 *
 * <p>The trace reads {@link #argc()} once and then each index in {@code [0, argc())} once, on
 * the recording thread, before {@code recordKernel} returns, and keeps no reference to this
 * object. These methods must not call the trace that reads them. The words and codes become a {@link TraceEntry}'s {@link TraceEntry#args() args} and
 * {@link TraceEntry#argKinds() argKinds}.
 */
public interface TraceArgs {

    /**
     * The number of arguments.
     *
     * @return the argument count, not negative
     */
    int argc();

    /**
     * Argument {@code i} as the trace records it: a pointer's address, an integer's or float's
     * bits zero-extended, or a by-value argument's first 8 bytes read little-endian.
     *
     * @param i the argument index, in {@code [0, argc())}
     * @return the argument word
     */
    long argWord(int i);

    /**
     * Argument {@code i}'s kind code: one of {@link TraceEntry#KIND_I32}, {@link TraceEntry#KIND_I64},
     * {@link TraceEntry#KIND_F32}, {@link TraceEntry#KIND_F64}, {@link TraceEntry#KIND_PTR} and
     * {@link TraceEntry#KIND_BYTES}. The trace stores whatever char is returned.
     *
     * @param i the argument index, in {@code [0, argc())}
     * @return the kind code
     */
    char argKind(int i);
}
