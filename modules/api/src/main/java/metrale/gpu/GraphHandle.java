// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * An instantiated CUDA graph ({@code CUgraphExec} with the graph it came from), as returned by
 * {@link Gpu#endCapture}. Replay it with {@link Gpu#launchGraph} and release it with
 * {@link Gpu#destroyGraph}. A plain value that owns nothing.
 *
 * @param handle the runtime's graph handle
 */
public record GraphHandle(long handle) {

    @Override
    public String toString() {
        return "graph@0x" + Long.toHexString(handle);
    }
}
