// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which graph node holds which traced op: the edges of a one-stream capture make one chain, in enqueue order. */
class StepChainTest {

    @Test
    void aChainIsOrderedByItsEdgesWhateverOrderTheNodesComeIn() {
        long[] nodes = {30, 10, 40, 20};
        // 10 -> 20 -> 30 -> 40, edges listed out of order.
        long[] from = {30, 10, 20};
        long[] to = {40, 20, 30};
        assertThat(CapturedStepImpl.chain(nodes, from, to)).containsExactly(1, 3, 0, 2);
    }

    @Test
    void emptyAndSingleNodeGraphsAreChains() {
        assertThat(CapturedStepImpl.chain(new long[0], new long[0], new long[0])).isEmpty();
        assertThat(CapturedStepImpl.chain(new long[] {7}, new long[0], new long[0])).containsExactly(0);
    }

    @Test
    void aForkAJoinOrACycleIsNotAChain() {
        long[] nodes = {1, 2, 3, 4};
        assertThat(CapturedStepImpl.chain(nodes, new long[] {1, 1, 2}, new long[] {2, 3, 4})).as("fork").isNull();
        assertThat(CapturedStepImpl.chain(nodes, new long[] {1, 2, 3}, new long[] {3, 3, 4})).as("join").isNull();
        assertThat(CapturedStepImpl.chain(nodes, new long[] {1, 2}, new long[] {2, 3})).as("two pieces").isNull();
        assertThat(CapturedStepImpl.chain(new long[] {1, 2, 3}, new long[] {2, 3}, new long[] {3, 2})).as("cycle").isNull();
        assertThat(CapturedStepImpl.chain(nodes, new long[] {1, 2, 9}, new long[] {2, 3, 4})).as("foreign node").isNull();
    }
}
