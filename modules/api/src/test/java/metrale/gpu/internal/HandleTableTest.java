// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Handle values: never issued twice, so a destroyed handle whose slot was handed out again, or a
 * handle of another table, finds nothing instead of aliasing the live one.
 */
class HandleTableTest {

    @Test
    void anAddedHandleIsFoundWithWhatItHolds() {
        HandleTable t = new HandleTable();
        Object extra = new Object();
        long id = t.add(0xabcL, extra);
        HandleTable.Slot s = t.get(id);
        assertThat(s).isNotNull();
        assertThat(s.id()).isEqualTo(id);
        assertThat(s.raw()).isEqualTo(0xabcL);
        assertThat(s.extra()).isSameAs(extra);
        assertThat(t.size()).isEqualTo(1);
    }

    @Test
    void valuesNeverCollideWithTheDefaultStreams() {
        HandleTable t = new HandleTable();
        for (int i = 0; i < 40; i++) {
            assertThat(t.add(i, null)).isGreaterThanOrEqualTo(1L << 24);
        }
        for (long small : new long[] {0, 1, 2, 3, (1L << 24) - 1, -1}) {
            assertThat(t.get(small)).as("get(%d)", small).isNull();
            assertThat(t.remove(small)).as("remove(%d)", small).isNull();
        }
        assertThat(t.size()).isEqualTo(40);
    }

    @Test
    void aRemovedHandleIsGoneAndItsSlotsNextHandleIsAnotherValue() {
        HandleTable t = new HandleTable();
        long old = t.add(111, "old");
        HandleTable.Slot removed = t.remove(old);
        assertThat(removed.raw()).isEqualTo(111);
        assertThat(t.get(old)).isNull();
        assertThat(t.remove(old)).as("a second remove").isNull();
        long fresh = t.add(222, "fresh");
        assertThat(fresh & ((1L << 24) - 1)).as("the freed slot is handed out again").isEqualTo(old & ((1L << 24) - 1));
        assertThat(fresh).isNotEqualTo(old);
        assertThat(t.get(old)).as("the old value after its slot was reused").isNull();
        assertThat(t.remove(old)).as("removing the old value after its slot was reused").isNull();
        assertThat(t.get(fresh)).as("the new handle survived the old one's remove").isNotNull();
        assertThat(t.get(fresh).raw()).isEqualTo(222);
        assertThat(t.size()).isEqualTo(1);
    }

    @Test
    void aHandleOfAnotherTableIsNotFoundEvenInTheSameSlot() {
        HandleTable a = new HandleTable();
        HandleTable b = new HandleTable();
        long ida = a.add(1, null);
        long idb = b.add(2, null);
        assertThat(ida & ((1L << 24) - 1)).isEqualTo(idb & ((1L << 24) - 1));
        assertThat(a.get(idb)).isNull();
        assertThat(b.get(ida)).isNull();
        assertThat(a.remove(idb)).isNull();
        assertThat(a.get(ida)).isNotNull();
    }

    @Test
    void manyHandlesGrowTheTableAndStayFindable() {
        HandleTable t = new HandleTable();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            ids.add(t.add(i, null));
        }
        Set<Long> distinct = new HashSet<>(ids);
        assertThat(distinct).hasSize(1000);
        for (int i = 0; i < 1000; i++) {
            assertThat(t.get(ids.get(i)).raw()).isEqualTo(i);
        }
        for (int i = 0; i < 1000; i += 2) {
            assertThat(t.remove(ids.get(i))).isNotNull();
        }
        assertThat(t.size()).isEqualTo(500);
        assertThat(t.snapshot()).extracting(HandleTable.Slot::raw)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 1000).filter(i -> i % 2 == 1).boxed().toList());
        for (int i = 0; i < 500; i++) {
            long id = t.add(5000 + i, null);
            assertThat(ids).as("a value issued twice").doesNotContain(id);
        }
        assertThat(t.size()).isEqualTo(1000);
        for (int i = 0; i < 1000; i += 2) {
            assertThat(t.get(ids.get(i))).as("a removed value after its slot was reused").isNull();
        }
        for (int i = 1; i < 1000; i += 2) {
            assertThat(t.get(ids.get(i)).raw()).isEqualTo(i);
        }
    }

    @Test
    void drainTakesEveryHandleOutAndLeavesAnEmptyTable() {
        HandleTable t = new HandleTable();
        long a = t.add(1, null);
        long b = t.add(2, null);
        long c = t.add(3, null);
        t.remove(b);
        assertThat(t.snapshot()).extracting(HandleTable.Slot::raw).containsExactly(1L, 3L);
        assertThat(t.drain()).extracting(HandleTable.Slot::raw).containsExactly(1L, 3L);
        assertThat(t.size()).isZero();
        assertThat(t.snapshot()).isEmpty();
        assertThat(t.get(a)).isNull();
        assertThat(t.get(c)).isNull();
        long d = t.add(4, null);
        assertThat(t.get(d).raw()).isEqualTo(4);
        assertThat(t.get(a)).as("a drained value after its slot was reused").isNull();
        assertThat(t.size()).isEqualTo(1);
    }
}
