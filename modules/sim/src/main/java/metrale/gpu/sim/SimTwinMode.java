// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim;

/**
 * What runs a simulated kernel: option {@link SimOptions#TWINS} given as a string
 * ({@code backendOption("sim.twins", mode.option())}, {@code -Dmetrale.sim.twins=verify}).
 */
public enum SimTwinMode {
    /** A registered Java twin runs; a kernel with none runs its own PTX on the simulator's engine. The default. */
    PREFER(SimOptions.TWINS_PREFER),
    /**
     * A kernel with both a twin and PTX the engine runs runs both on the same memory, and a launch
     * whose results differ fails naming the first differing byte; a kernel with one runs that one.
     */
    VERIFY(SimOptions.TWINS_VERIFY),
    /** Twins are ignored: every kernel runs its PTX. */
    OFF(SimOptions.TWINS_OFF);

    private final String option;

    SimTwinMode(String option) {
        this.option = option;
    }

    /** {@return the option value, as {@code sim.twins} takes it} */
    public String option() {
        return option;
    }
}
