// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

/**
 * PTX the engine does not run: an instruction, a modifier or a declaration outside what it
 * implements, named with its function and line. The simulator turns it into {@code NOT_SUPPORTED}
 * when a kernel that contains it is looked up with no twin to run instead; it never guesses.
 */
public final class PtxUnsupported extends Exception {

    /** @param message what is not supported, where */
    public PtxUnsupported(String message) {
        super(message, null, false, false);
    }
}
