// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

/** What kind of enqueued operation a {@link TraceEntry} records. */
public enum OpKind {
    /** A kernel launch. */
    KERNEL("kernel"),
    /** An asynchronous memset; args are pointer, byte value, byte count. */
    MEMSET("memset"),
    /** A device-to-device copy; args are source, destination, byte count. */
    D2D("d2d");

    private final String label;

    OpKind(String label) {
        this.label = label;
    }

    /**
     * The name the launch-trace report prints in brackets.
     *
     * @return {@code "kernel"}, {@code "memset"} or {@code "d2d"}
     */
    public String label() {
        return label;
    }
}
