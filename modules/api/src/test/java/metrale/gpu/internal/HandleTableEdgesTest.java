// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Handle values the table never issued: a slot just past its array, a value below every serial. */
class HandleTableEdgesTest {

    @Test
    void aValueWhoseSlotIsPastTheArrayOrBelowEverySerialIsNotLive() {
        HandleTable t = new HandleTable();
        long id = t.add(7, null);
        assertThat(t.get(id).raw()).isEqualTo(7);
        assertThat(t.get((id & ~0xFF_FFFFL) | 16)).as("slot 16 of a 16-slot array").isNull();
        assertThat(t.get(id & 0xFF_FFFFL)).as("no serial").isNull();
        assertThat(t.get(2)).isNull();
    }
}
