// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * A verification run of a {@link CapturedStep} found that the region now enqueues something other
 * than what the graph holds: typically a host value that should have been a device value. Thrown
 * with {@link StepOptions#throwOnMismatch()} on, after the graph was reconciled.
 */
public final class StepMismatchException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The report. */
    private final String diff;

    /**
     * Creates the exception.
     *
     * @param step the step's name
     * @param diff the report, in the launch trace's format
     */
    public StepMismatchException(String step, String diff) {
        super("captured step '" + step + "': " + diff);
        this.diff = diff;
    }

    /** {@return the report, in the launch trace's format} */
    public String diff() {
        return diff;
    }
}
