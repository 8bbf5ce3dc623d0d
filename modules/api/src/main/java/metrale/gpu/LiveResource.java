// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Objects;

/**
 * A resource of a runtime that was created and not yet released, with where it was created: one
 * entry of {@link Gpu#liveResources()}.
 *
 * @param kind   what it is
 * @param handle how the application sees it: the handle's text ({@code stream@0x…}, {@code event@0x…},
 *               {@code graph@0x…}), a page-locked range's address and size, a captured step's name,
 *               a communicator's rank
 * @param site   the {@code File.java:line} of the call that created it, under the runtime's
 *               {@link GpuOptions#leakDetection()} level ({@code ?} when off,
 *               {@value LeakDetection#UNSAMPLED_SITE} for one {@code sampled} did not walk)
 */
public record LiveResource(Kind kind, String handle, String site) {

    /** The kinds of resource a runtime tracks besides device memory, which its ledger lists. */
    public enum Kind {
        /** Page-locked host memory from {@link Gpu#allocHostPinned}, released by {@link Gpu#freeHostPinned}. */
        PINNED_HOST("page-locked host memory", "freed"),
        /** A stream from {@link Gpu#createStream}, released by {@link Gpu#destroyStream}. */
        STREAM("stream", "destroyed"),
        /** An event from {@link Gpu#createEvent}, released by {@link Gpu#destroyEvent}. */
        EVENT("event", "destroyed"),
        /**
         * A graph from {@link Gpu#endCapture} (a {@code CUgraph} and its {@code CUgraphExec}),
         * released by {@link Gpu#destroyGraph}.
         */
        GRAPH("graph and its exec", "destroyed"),
        /** A captured step from {@link Gpu#capturedStep}, released by {@link CapturedStep#close()}. */
        CAPTURED_STEP("captured step", "closed"),
        /** A collective communicator over the runtime (module {@code metrale.gpu.nccl}), released by its {@code close()}. */
        COMMUNICATOR("communicator", "closed");

        private final String label;
        private final String released;

        Kind(String label, String released) {
            this.label = label;
            this.released = released;
        }

        /** {@return the kind in words, e.g. {@code page-locked host memory}} */
        public String label() {
            return label;
        }

        /** {@return the verb its release is named by: {@code freed}, {@code destroyed} or {@code closed}} */
        public String released() {
            return released;
        }
    }

    /**
     * Checks the components.
     *
     * @param kind   what it is
     * @param handle its text
     * @param site   its creation site
     */
    public LiveResource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(handle, "handle");
        Objects.requireNonNull(site, "site");
    }

    /** {@return e.g. {@code stream stream@0x1000000 created at App.java:12}} */
    @Override
    public String toString() {
        return kind.label + " " + handle + " created at " + site;
    }
}
